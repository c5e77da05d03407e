package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"

	"messages/graph/playground"
	"messages/models/store"
)

// longLines returns the lines of log longer than n bytes, each cut for the message.
func longLines(log string, n int) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if len(line) > n {
			out = append(out, line[:300])
		}
	}
	return out
}

// Overlong URIs are refused with a short 414 in production; the largest legitimate GET,
// a GraphQL query at its size limit, is served.
func TestLongURIs(t *testing.T) {
	e := newE2ETenant(t, store.DialectMySQL)
	query := "{ messages(limit: 1) { totalCount } }\n#"
	query += strings.Repeat("comment ", (32<<10-len(query))/8)
	t.Run("graphqlGetQueryAtLimitServed", func(t *testing.T) {
		r := e.do(t, http.MethodGet, "/graphql?query="+url.QueryEscape(query), nil, nil)
		if r.status != http.StatusOK || !strings.Contains(string(r.body), `"totalCount"`) {
			t.Fatalf("GET /graphql with a %d-byte query: %d %.300s", len(query), r.status, r.body)
		}
	})
	t.Run("graphqlGet414", func(t *testing.T) {
		uri := "/graphql?query=" + url.QueryEscape(query+strings.Repeat("{}", 16<<10))
		uriTooLong(t, uri, e.do(t, http.MethodGet, uri, nil, nil))
	})
}

// A 404 quotes the start of the path only, and no log line is longer than a few KiB,
// whatever the path.
func TestNotFoundBounded(t *testing.T) {
	e := newE2ETenant(t, store.DialectMySQL)
	t.Run("notFound404QuotesPathStart", func(t *testing.T) {
		path := "/" + strings.Repeat("é", 10_000) // 60 KB percent-encoded, under the URI limit
		r := e.do(t, http.MethodGet, path, nil, nil)
		var body struct {
			StatusCode int    `json:"statusCode"`
			Message    string `json:"message"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil || r.status != http.StatusNotFound || body.StatusCode != http.StatusNotFound {
			t.Fatalf("%d %.300s (%v), want 404 with the error body", r.status, r.body, err)
		}
		if len(body.Message) > len("Cannot GET ")+200+len("…") || !strings.HasSuffix(body.Message, "é…") {
			t.Errorf("message of %d bytes, want at most 200 of the path and an ellipsis: %.300s", len(body.Message), body.Message)
		}
		if long := longLines(e.srv.stderr.String(), 4<<10); len(long) > 0 {
			t.Errorf("%d log lines over 4 KiB, the first: %s", len(long), long[0])
		}
		if !strings.Contains(e.srv.stderr.String(), "bytes cut]") {
			t.Errorf("the request's log line does not say its path was cut")
		}
	})
	t.Run("path900KBShortAnswer", func(t *testing.T) {
		r := e.do(t, http.MethodGet, "/"+strings.Repeat("x", 900_000), nil, nil)
		if r.status < 400 || len(r.body) > 1<<10 {
			t.Fatalf("%d with %d bytes, want a short refusal", r.status, len(r.body))
		}
		if long := longLines(e.srv.stderr.String(), 4<<10); len(long) > 0 {
			t.Errorf("%d log lines over 4 KiB, the first: %s", len(long), long[0])
		}
	})
}

// /graphql answers the methods it does not take with 405, Allow and the documented error
// body with GraphQL's errors array, not gqlgen's 400.
func TestGraphQLMethodNotAllowed(t *testing.T) {
	e := newE2ETenant(t, store.DialectMySQL)
	op := []byte(`{"query":"{ messages { totalCount } }"}`)
	for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch} {
		t.Run("graphql405"+method, func(t *testing.T) {
			r := e.do(t, method, "/graphql", http.Header{"Content-Type": {"application/json"}}, op)
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, POST" {
				t.Fatalf("%d Allow %q: %.300s, want 405 with Allow: GET, POST", r.status, r.header.Get("Allow"), r.body)
			}
			var body struct {
				StatusCode int    `json:"statusCode"`
				Path       string `json:"path"`
				Message    string `json:"message"`
				Errors     []struct {
					Message    string            `json:"message"`
					Extensions map[string]string `json:"extensions"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(r.body, &body); err != nil || body.StatusCode != http.StatusMethodNotAllowed || body.Path != "/graphql" ||
				body.Message == "" || len(body.Errors) != 1 || body.Errors[0].Extensions["code"] == "" {
				t.Errorf("body %s (%v), want the error body with GraphQL's errors array", r.body, err)
			}
		})
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run("graphql200"+method, func(t *testing.T) {
			uri, body := "/graphql", op
			if method == http.MethodGet {
				uri, body = "/graphql?query="+url.QueryEscape("{ messages { totalCount } }"), nil
			}
			if r := e.do(t, method, uri, http.Header{"Content-Type": {"application/json"}}, body); r.status != http.StatusOK {
				t.Fatalf("%d %.300s", r.status, r.body)
			}
		})
	}
}

// In development the playground and the live inbox answer only by a loopback name, so a
// page that rebinds its own DNS name to 127.0.0.1 reads neither the demo key nor a token.
func TestDevelopmentHelpersLoopbackOnly(t *testing.T) {
	srv := startDemo(t)
	port := srv.base[strings.LastIndexByte(srv.base, ':')+1:]
	send := func(t *testing.T, method, path, host, body string) inboxReply {
		t.Helper()
		req, err := http.NewRequest(method, srv.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
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
	session := `{"subscriberId":"user-1-00000"}`
	for _, tt := range []struct {
		name, method, path, host, body string
		status                         int
	}{
		{"playground200Localhost", http.MethodGet, "/", "localhost:" + port, "", http.StatusOK},
		{"playground200Loopback", http.MethodGet, "/", "127.0.0.1:" + port, "", http.StatusOK},
		{"playground403Rebound", http.MethodGet, "/", "evil.example:" + port, "", http.StatusForbidden},
		{"playgroundAsset403Rebound", http.MethodGet, playground.AssetPath + "x.js", "evil.example", "", http.StatusForbidden},
		{"inbox200Localhost", http.MethodGet, "/inbox", "localhost:" + port, "", http.StatusOK},
		{"inbox403Rebound", http.MethodGet, "/inbox", "evil.example", "", http.StatusForbidden},
		{"inboxSession201Localhost", http.MethodPost, "/inbox/session", "localhost:" + port, session, http.StatusCreated},
		{"inboxSession403Rebound", http.MethodPost, "/inbox/session", "evil.example:" + port, session, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := send(t, tt.method, tt.path, tt.host, tt.body)
			if r.status != tt.status {
				t.Fatalf("%d %.300s, want %d", r.status, r.body, tt.status)
			}
			if tt.status == http.StatusForbidden {
				refused(http.StatusForbidden, "")(t, tt.path, e2eReply{status: r.status, header: r.header, body: r.body})
				if strings.Contains(string(r.body), "ApiKey") || strings.Contains(string(r.body), "token") {
					t.Errorf("refusal leaks the page: %.300s", r.body)
				}
			}
		})
	}
}

// Development listens on loopback unless told otherwise; production on every interface;
// --addr and ADDR always win.
func TestListenAddr(t *testing.T) {
	t.Setenv("ADDR", "")
	os.Unsetenv("ADDR")
	for _, tt := range []struct {
		name, env, addrEnv string
		args               []string
		want               string
	}{
		{"developmentLoopback", "development", "", nil, "127.0.0.1:8080"},
		{"productionEveryInterface", "production", "", nil, ":8080"},
		{"developmentFlagWins", "development", "", []string{"--addr", ":9000"}, ":9000"},
		{"developmentEnvWins", "development", "0.0.0.0:8080", nil, "0.0.0.0:8080"},
		{"productionEnvWins", "production", "127.0.0.1:9090", nil, "127.0.0.1:9090"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.addrEnv != "" {
				t.Setenv("ADDR", tt.addrEnv)
			}
			cmd := newApp(io.Discard, io.Discard).serveCommand()
			var got string
			cmd.Action = func(_ context.Context, cmd *cli.Command) error {
				got = listenAddr(cmd, config{appEnv: tt.env})
				return nil
			}
			if err := cmd.Run(context.Background(), append([]string{"serve"}, tt.args...)); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("listen address %q, want %q", got, tt.want)
			}
		})
	}
}
