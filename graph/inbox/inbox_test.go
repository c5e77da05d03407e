package inbox

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func get(t testing.TB, o Options, target string) (*http.Response, string) {
	t.Helper()
	w := httptest.NewRecorder()
	Handler(o).ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	res := w.Result()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

var configBlock = regexp.MustCompile(`(?s)<script id="inbox-config" type="application/json">(.*?)</script>`)

func TestPageEmbedsConfig(t *testing.T) {
	hostile := `</script><script>alert(1)</script>"'<!--`
	tests := []struct {
		name string
		in   Options
		want pageConfig
	}{
		{"page200Defaults", Options{},
			pageConfig{Endpoint: "/graphql", SessionEndpoint: "/inbox/session", Subscribers: []string{}, Limit: DefaultLimit}},
		{"page200Configured", Options{Endpoint: "/gql", SessionEndpoint: "/s", Subscribers: []string{"a", "b"}, Limit: 5},
			pageConfig{Endpoint: "/gql", SessionEndpoint: "/s", Subscribers: []string{"a", "b"}, Limit: 5}},
		{"page200HostileSubscriberStaysInside", Options{Subscribers: []string{hostile}},
			pageConfig{Endpoint: "/graphql", SessionEndpoint: "/inbox/session", Subscribers: []string{hostile}, Limit: DefaultLimit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, html := get(t, tt.in, "/inbox")
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
			}
			if strings.Contains(html, "<script>alert") {
				t.Fatal("a subscriber id broke out of its place in the page")
			}
			m := configBlock.FindStringSubmatch(html)
			if m == nil {
				t.Fatal("no config block")
			}
			var got pageConfig
			if err := json.Unmarshal([]byte(m[1]), &got); err != nil {
				t.Fatalf("config block %q: %v", m[1], err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssetsServedImmutable(t *testing.T) {
	for _, name := range []string{"inbox.js", "inbox.css", "graphql-ws.min.js"} {
		t.Run(name, func(t *testing.T) {
			u, err := assets.URL(name)
			if err != nil {
				t.Fatal(err)
			}
			res, body := get(t, Options{}, u)
			if res.StatusCode != http.StatusOK || body == "" || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
				t.Fatalf("GET %s: %d, Cache-Control %q", u, res.StatusCode, res.Header.Get("Cache-Control"))
			}
		})
	}
	if res, _ := get(t, Options{}, AssetPath+"page.html"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("page.html as an asset: %d", res.StatusCode)
	}
}
