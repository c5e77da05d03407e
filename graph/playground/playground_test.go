package playground

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

// get sends one GET through a handler with the given options.
func get(t testing.TB, o Options, target string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	Handler(o).ServeHTTP(w, req)
	return w.Result()
}

func body(t testing.TB, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var configBlock = regexp.MustCompile(`(?s)<script id="playground-config" type="application/json">(.*?)</script>`)

func TestPageEmbedsConfig(t *testing.T) {
	hostile := "ApiKey k</script><script>alert(1)</script>\"'<!--"
	tests := []struct {
		name string
		in   Options
		want pageConfig
	}{
		{"page200Configured",
			Options{Title: "Messages", Endpoint: "/graphql", Headers: map[string]string{"Authorization": "ApiKey abc"}, DefaultQuery: "{ messages { totalCount } }"},
			pageConfig{Endpoint: "/graphql", Headers: map[string]string{"Authorization": "ApiKey abc"}, DefaultQuery: "{ messages { totalCount } }"}},
		{"page200Defaults",
			Options{},
			pageConfig{Endpoint: "/graphql", Headers: map[string]string{}, DefaultQuery: DefaultQuery}},
		{"page200HostileValuesStayInside",
			Options{Title: "</title><script>x()</script>", Endpoint: "/graphql?a=</script>", Headers: map[string]string{"Authorization": hostile, "X-Q": `"'`}},
			pageConfig{Endpoint: "/graphql?a=</script>", Headers: map[string]string{"Authorization": hostile, "X-Q": `"'`}, DefaultQuery: DefaultQuery}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := get(t, tt.in, "/")
			html := body(t, res)
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
			}
			if got := res.Header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control %q: the page holds the API key", got)
			}
			// Exactly one data block and five script files: nothing broke out of the
			// block to open a script of its own.
			blocks := configBlock.FindAllStringSubmatch(html, -1)
			if len(blocks) != 1 {
				t.Fatalf("%d config blocks in\n%s", len(blocks), html)
			}
			if n := strings.Count(html, "<script"); n != 6 {
				t.Errorf("%d <script tags, want 6 (config + 5 files):\n%s", n, html)
			}
			if strings.Contains(html, "<title></title>") || strings.Contains(html, "<script>x()") {
				t.Errorf("the title escaped its element:\n%s", html)
			}
			var got pageConfig
			if err := json.Unmarshal([]byte(blocks[0][1]), &got); err != nil {
				t.Fatalf("config block is not JSON: %v\n%s", err, blocks[0][1])
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPageLoadsOnlyEmbeddedFiles(t *testing.T) {
	html := body(t, get(t, Options{}, "/"))
	var urls []string
	for _, ref := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(html, -1) {
		if ref[1] != "data:," { // the empty favicon, which spares a request
			urls = append(urls, strings.ReplaceAll(ref[1], "&amp;", "&"))
		}
	}
	if len(urls) != 6 {
		t.Fatalf("%d references, want 6:\n%s", len(urls), html)
	}
	for _, u := range urls {
		if !strings.HasPrefix(u, AssetPath) {
			t.Errorf("%s is not under %s", u, AssetPath)
			continue
		}
		if res := get(t, Options{}, u); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", u, res.StatusCode)
		}
	}
}

func TestAssets(t *testing.T) {
	tests := []struct {
		name        string
		path        string
		status      int
		contentType string
	}{
		{"graphiqlJS200", "graphiql.min.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{"graphiqlCSS200", "graphiql.min.css", http.StatusOK, "text/css; charset=utf-8"},
		{"react200", "react.production.min.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{"reactDOM200", "react-dom.production.min.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{"graphqlWS200", "graphql-ws.min.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{"start200", "start.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{"unknown404", "nope.js", http.StatusNotFound, ""},
		{"sourceMap404", "graphiql.min.js.map", http.StatusNotFound, ""},
		{"licenseNotServed404", "LICENSE.react", http.StatusNotFound, ""},
		{"versionsNotServed404", "VERSIONS", http.StatusNotFound, ""},
		{"traversal404", "../page.html", http.StatusNotFound, ""},
		{"directory404", "", http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := get(t, Options{}, AssetPath+tt.path)
			b := body(t, res)
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tt.status)
			}
			if tt.status != http.StatusOK {
				return
			}
			if got := res.Header.Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type %q, want %q", got, tt.contentType)
			}
			if got := res.Header.Get("Cache-Control"); !strings.Contains(got, "max-age=31536000") {
				t.Errorf("Cache-Control %q, want a long max-age", got)
			}
			if want, _ := assets.Body(tt.path); b != string(want) || len(b) == 0 {
				t.Errorf("body: %d bytes, want the embedded %d", len(b), len(want))
			}
		})
	}
}

func TestAssetNotModified(t *testing.T) {
	first := get(t, Options{}, AssetPath+"start.js")
	etag := first.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if res := get(t, Options{}, AssetPath+"start.js", "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("status %d with If-None-Match, want 304", res.StatusCode)
	}
}

func TestContentSecurityPolicy(t *testing.T) {
	tests := []struct {
		name, endpoint, connect string
	}{
		// 'self' covers ws: and wss: of the page's own host.
		{"sameOrigin", "/graphql", "connect-src 'self';"},
		{"otherOriginTLS", "https://api.example.com/graphql", "connect-src 'self' https://api.example.com wss://api.example.com;"},
		{"otherOriginPlain", "http://127.0.0.1:9000/graphql", "connect-src 'self' http://127.0.0.1:9000 ws://127.0.0.1:9000;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csp := get(t, Options{Endpoint: tt.endpoint}, "/").Header.Get("Content-Security-Policy")
			for _, want := range []string{"script-src 'self';", tt.connect} {
				if !strings.Contains(csp, want) {
					t.Errorf("%q lacks %q", csp, want)
				}
			}
		})
	}
}
