package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// inboxReply is one answer of the server, read whole.
type inboxReply struct {
	status int
	header http.Header
	body   []byte
}

// inboxCall sends one request; contentType and auth are left out when empty.
func inboxCall(t *testing.T, method, url, contentType, auth, body string) inboxReply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return inboxReply{status: res.StatusCode, header: res.Header, body: b}
}

// startDemo starts a development server on a fresh default database, with the demo, in a
// temporary working directory.
func startDemo(t *testing.T) *running {
	t.Helper()
	t.Chdir(t.TempDir())
	t.Setenv("DATABASE_URL", "")
	os.Unsetenv("DATABASE_URL")
	t.Setenv("APP_ENV", "")
	os.Unsetenv("APP_ENV")
	return start(t)
}

var inboxAssetURL = regexp.MustCompile(`(?:src|href)="(/inbox/assets/[^"]+)"`)

// In development with the demo: the page and its assets, each with its type, and a
// startup line that points at it.
func TestInboxPageServed(t *testing.T) {
	srv := startDemo(t)
	if want := "Live inbox: " + srv.base + "/inbox\n"; !strings.Contains(srv.stderr.String(), want) {
		t.Fatalf("startup output lacks %q:\n%s", want, srv.stderr.String())
	}

	page := inboxCall(t, http.MethodGet, srv.base+"/inbox?subscriberId=user-1-00001", "", "", "")
	if page.status != http.StatusOK || page.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /inbox: %d %q %.200s", page.status, page.header.Get("Content-Type"), page.body)
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Fatalf("Content-Security-Policy %q", csp)
	}
	for _, want := range []string{`data-testid="messages"`, `data-testid="connection"`, `<label for="subscriber">`, "user-1-00005"} {
		if !strings.Contains(string(page.body), want) {
			t.Fatalf("the page lacks %s", want)
		}
	}

	types := map[string]string{}
	for _, m := range inboxAssetURL.FindAllStringSubmatch(string(page.body), -1) {
		a := inboxCall(t, http.MethodGet, srv.base+strings.ReplaceAll(m[1], "&amp;", "&"), "", "", "")
		if a.status != http.StatusOK || len(a.body) == 0 {
			t.Fatalf("GET %s: %d", m[1], a.status)
		}
		name := m[1][len("/inbox/assets/"):strings.Index(m[1], "?")]
		types[name] = a.header.Get("Content-Type")
		if name == "graphql-ws.min.js" && !strings.Contains(string(a.body), "graphql-transport-ws") {
			t.Fatalf("%s is not graphql-ws's browser build", m[1])
		}
	}
	want := map[string]string{
		"inbox.css":         "text/css; charset=utf-8",
		"inbox.js":          "text/javascript; charset=utf-8",
		"graphql-ws.min.js": "text/javascript; charset=utf-8",
	}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Fatalf("assets the page links, by Content-Type (-want +got):\n%s", diff)
	}
	if r := inboxCall(t, http.MethodGet, srv.base+"/inbox/assets/nothing.js", "", "", ""); r.status != http.StatusNotFound {
		t.Fatalf("unknown asset: %d", r.status)
	}
}

// The helper issues a subscriber session with the demo key: the token reads that
// subscriber's messages over GraphQL and no one else's.
func TestInboxSessionAuthenticatesGraphQL(t *testing.T) {
	srv := startDemo(t)
	r := inboxCall(t, http.MethodPost, srv.base+"/inbox/session", "application/json", "", `{"subscriberId":"user-1-00001"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /inbox/session: %d %s", r.status, r.body)
	}
	var session struct{ Token, SubscriberID, ExpiresAt string }
	if err := json.Unmarshal(r.body, &session); err != nil || session.Token == "" || session.SubscriberID != "user-1-00001" || session.ExpiresAt == "" {
		t.Fatalf("session %s: %v", r.body, err)
	}

	gql := func(query string) (subscribers []string, codes []string) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"query": query})
		r := inboxCall(t, http.MethodPost, srv.base+"/graphql", "application/json", "Bearer "+session.Token, string(body))
		var res struct {
			Data struct {
				Messages struct {
					Data []struct{ Subscriber struct{ SubscriberID string } }
				}
			}
			Errors []struct{ Extensions struct{ Code string } }
		}
		if err := json.Unmarshal(r.body, &res); err != nil {
			t.Fatalf("GraphQL %d %s: %v", r.status, r.body, err)
		}
		for _, m := range res.Data.Messages.Data {
			subscribers = append(subscribers, m.Subscriber.SubscriberID)
		}
		for _, e := range res.Errors {
			codes = append(codes, e.Extensions.Code)
		}
		return subscribers, codes
	}
	own, codes := gql(`{ messages(limit: 50) { data { subscriber { subscriberId } } } }`)
	if len(codes) > 0 || len(own) == 0 {
		t.Fatalf("own messages: %v, errors %v", own, codes)
	}
	for _, s := range own {
		if s != "user-1-00001" {
			t.Fatalf("the session read %s's message", s)
		}
	}
	if _, codes := gql(`{ messages(subscriberId: "user-1-00002") { data { _id } } }`); !cmp.Equal(codes, []string{"FORBIDDEN"}) {
		t.Fatalf("another subscriber's list: errors %v, want FORBIDDEN", codes)
	}

	// The picker offers the demo's subscribers: each has messages.
	key, err := os.ReadFile("data/demo-api-key")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range demoSubscriberIDs {
		if page := listPage(t, srv.base, strings.TrimSpace(string(key)), "?limit=1&subscriberId="+id); page.TotalCount == 0 {
			t.Fatalf("the picker offers %s, who has no messages in the demo", id)
		}
	}
}

func TestInboxSessionRefusals(t *testing.T) {
	srv := startDemo(t)
	tests := []struct {
		name, contentType, body string
		want                    int
	}{
		{"session400NotJSON", "application/x-www-form-urlencoded", "subscriberId=user-1-00000", http.StatusBadRequest},
		{"session400Malformed", "application/json", `{"subscriberId":`, http.StatusBadRequest},
		{"session422NoSubscriber", "application/json", `{}`, http.StatusUnprocessableEntity},
		{"session422TooLong", "application/json", `{"subscriberId":"` + strings.Repeat("x", 256) + `"}`, http.StatusUnprocessableEntity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := inboxCall(t, http.MethodPost, srv.base+"/inbox/session", tt.contentType, "", tt.body)
			if r.status != tt.want || strings.Contains(string(r.body), `"token"`) {
				t.Fatalf("%d %s, want %d without a token", r.status, r.body, tt.want)
			}
		})
	}
}

// Without the demo (a database named by DATABASE_URL) the page is there but no session is
// issued; in production there is no inbox at all.
func TestInboxWithoutDemo(t *testing.T) {
	tests := []struct {
		name, appEnv string
		page, assets int
	}{
		{"inbox404SessionOnGivenDatabase", "development", http.StatusOK, http.StatusOK},
		{"inbox404InProduction", "production", http.StatusNotFound, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DATABASE_URL", "sqlite:"+t.TempDir()+"/x.db")
			t.Setenv("APP_ENV", tt.appEnv)
			srv := start(t)
			if r := inboxCall(t, http.MethodGet, srv.base+"/inbox", "", "", ""); r.status != tt.page {
				t.Fatalf("GET /inbox: %d, want %d", r.status, tt.page)
			}
			if r := inboxCall(t, http.MethodGet, srv.base+"/inbox/assets/inbox.js", "", "", ""); r.status != tt.assets {
				t.Fatalf("GET /inbox/assets/inbox.js: %d, want %d", r.status, tt.assets)
			}
			r := inboxCall(t, http.MethodPost, srv.base+"/inbox/session", "application/json", "", `{"subscriberId":"user-1-00000"}`)
			if r.status != http.StatusNotFound || strings.Contains(string(r.body), `"token"`) {
				t.Fatalf("POST /inbox/session: %d %s, want 404", r.status, r.body)
			}
			if strings.Contains(srv.stderr.String(), "Live inbox:") {
				t.Fatalf("startup output points at a live inbox that cannot work:\n%s", srv.stderr.String())
			}
		})
	}
}
