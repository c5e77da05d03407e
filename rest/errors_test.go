package rest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models/dbtest"
	"messages/models/store"
)

func TestRouting(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		msg := tn.Message(t, tn.Subscriber(t, "alice"), tn.Template(t, "welcome"), nil)
		a := newAPI(t, s)
		mark := actionURI("alice", msg.ID, "primary")
		tests := []struct {
			name   string
			method string
			uri    string
			status int
			allow  string
		}{
			{"route404UnknownPath", http.MethodGet, "/v1/nope", 404, ""},
			{"route404UnknownPathWithQuery", http.MethodGet, "/v1/nope?x=1", 404, ""},
			{"route404MessagesSubpath", http.MethodGet, "/v1/messages/" + msg.ID, 404, ""},
			{"route404PartialActionPath", http.MethodPost, "/v1/subscribers/alice/messages/" + msg.ID, 404, ""},
			{"route404ActionWithoutType", http.MethodPost, "/v1/subscribers/alice/messages/" + msg.ID + "/actions/", 404, ""},
			{"route405PostMessages", http.MethodPost, "/v1/messages", 405, "GET, HEAD"},
			{"route405DeleteMessages", http.MethodDelete, "/v1/messages?limit=1", 405, "GET, HEAD"},
			{"route405PutMessages", http.MethodPut, "/v1/messages", 405, "GET, HEAD"},
			{"route405GetAction", http.MethodGet, mark, 405, "POST"},
			{"route405PatchAction", http.MethodPatch, mark, 405, "POST"},
		}
		_, before := fetch(t, a, tn.Key, msg.TransactionID)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := a.do(t, tt.method, tt.uri, "ApiKey "+tn.Key, http.Header{"Content-Type": {"application/json"}},
					strings.NewReader(`{"status":"done"}`))
				errorBody(t, res, tt.status, tt.uri)
				if got := res.header.Get("Allow"); got != tt.allow {
					t.Errorf("Allow = %q, want %q", got, tt.allow)
				}
			})
		}
		t.Run("route404LongPathQuotedShort", func(t *testing.T) {
			// A long path is not echoed back whole: the body quotes its first 200 bytes.
			uri := "/v1/" + strings.Repeat("p", 10_000)
			res := a.do(t, http.MethodGet, uri, "ApiKey "+tn.Key, nil, nil)
			errorBody(t, res, http.StatusNotFound, uri[:200]+"…")
			if len(res.body) > 2<<10 {
				t.Errorf("a 404 for a %d-byte path is %d bytes", len(uri), len(res.body))
			}
		})
		if _, after := fetch(t, a, tn.Key, msg.TransactionID); !cmp.Equal(before, after) {
			t.Errorf("message changed by refused requests (-before +after):\n%s", cmp.Diff(before, after))
		}
	})
}

// leaks are words of database and driver errors that must never reach a client.
var leaks = []string{"sql", "database", "table", "no such", "exist", "gorm", "mysql", "sqlite", "mariadb", "closed", "1146", "select", "update", "messages`", "environment_id"}

// internalError checks a 500 body: an errorId that the log holds, and no detail of the cause.
func internalError(t testing.TB, a *api, res response, uri string, graphql bool) {
	t.Helper()
	var id string
	if graphql {
		if res.status != http.StatusInternalServerError && res.status != http.StatusOK {
			t.Fatalf("status %d; body %s", res.status, res.body)
		}
		var body struct {
			Errors []struct {
				Message    string         `json:"message"`
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
			ErrorID string `json:"errorId"`
		}
		if err := json.Unmarshal(res.body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != "INTERNAL_SERVER_ERROR" {
			t.Fatalf("errors = %s, want one with extensions.code INTERNAL_SERVER_ERROR", res.body)
		}
		id, _ = body.Errors[0].Extensions["errorId"].(string)
		if id == "" {
			id = body.ErrorID
		}
	} else {
		body := errorBody(t, res, http.StatusInternalServerError, uri)
		id, _ = body["errorId"].(string)
	}
	if !idPattern.MatchString(id) {
		t.Errorf("errorId = %q, want a 24-hex id; body %s", id, res.body)
	}
	text := strings.ToLower(strings.ReplaceAll(string(res.body), uri, ""))
	for _, leak := range leaks {
		if strings.Contains(text, leak) {
			t.Errorf("500 body leaks %q: %s", leak, res.body)
		}
	}
	if log := a.log.String(); id != "" && !strings.Contains(log, id) {
		t.Errorf("the log does not hold errorId %s:\n%s", id, log)
	}
}

func TestInternalErrors(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		msg := tn.Message(t, tn.Subscriber(t, "alice"), tn.Template(t, "welcome"), nil)
		a := newAPI(t, s)
		mark := actionURI("alice", msg.ID, "primary")
		requests := []struct {
			name    string
			method  string
			uri     string
			body    string
			graphql bool
		}{
			{"list500", http.MethodGet, "/v1/messages?channel=email", "", false},
			{"mark500", http.MethodPost, mark, `{"status":"done"}`, false},
			{"graphql500", http.MethodPost, "/graphql", `{"query":"{ messages { totalCount data { _id } } }"}`, true},
		}
		run := func(t *testing.T) {
			for _, r := range requests {
				t.Run(r.name, func(t *testing.T) {
					res := a.do(t, r.method, r.uri, "ApiKey "+tn.Key, http.Header{"Content-Type": {"application/json"}}, strings.NewReader(r.body))
					internalError(t, a, res, r.uri, r.graphql)
				})
			}
		}
		// A missing table fails the resolvers after authentication succeeded.
		if err := s.DB().Exec("DROP TABLE messages").Error; err != nil {
			t.Fatal(err)
		}
		t.Run("tableMissing", run)
		// A closed pool fails authentication itself.
		sqlDB, err := s.DB().DB()
		if err != nil {
			t.Fatal(err)
		}
		if err := sqlDB.Close(); err != nil {
			t.Fatal(err)
		}
		t.Run("databaseClosed", run)
	})
}
