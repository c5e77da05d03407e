package rest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// The session exchange and what a session may do on /v1, every answer validated against
// the OpenAPI document (a.do does).
func TestSessionRoutes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "sessions")
		alice, bob, tpl := tn.Subscriber(t, "alice"), tn.Subscriber(t, "bob"), tn.Template(t, "welcome")
		mine, theirs := tn.Message(t, alice, tpl, nil), tn.Message(t, bob, tpl, nil)
		a := newAPI(t, s)
		created := a.post(t, tn.Key, "/v1/inbox/session", `{"subscriberId":"alice","expiresIn":600}`)
		if created.status != http.StatusCreated {
			t.Fatalf("session: %d %s", created.status, created.body)
		}
		var sess struct{ Token, SubscriberID, ExpiresAt string }
		if err := json.Unmarshal(created.body, &sess); err != nil {
			t.Fatal(err)
		}
		if want := models.NewTime(clock.Truncate(time.Second).Add(600 * time.Second)).String(); sess.SubscriberID != "alice" || sess.ExpiresAt != want {
			t.Errorf("session %s, want alice's expiring 600 s after the fixed clock", created.body)
		}
		bearer := "Bearer " + sess.Token
		json := http.Header{"Content-Type": {"application/json"}}
		for _, tt := range []struct {
			name, method, uri, auth, body string
			status                        int
		}{
			{"session422BadLife", http.MethodPost, "/v1/inbox/session", "ApiKey " + tn.Key, `{"subscriberId":"alice","expiresIn":1.5}`, 422},
			{"session403FromSession", http.MethodPost, "/v1/inbox/session", bearer, `{"subscriberId":"alice"}`, 403},
			{"session405Get", http.MethodGet, "/v1/inbox/session", "ApiKey " + tn.Key, "", 405},
			{"list200OwnMessages", http.MethodGet, "/v1/messages", bearer, "", 200},
			{"list403OtherSubscriber", http.MethodGet, "/v1/messages?subscriberId=bob", bearer, "", 403},
			{"list401MalformedToken", http.MethodGet, "/v1/messages", "Bearer x y", "", 401},
			{"mark201Own", http.MethodPost, "/v1/subscribers/alice/messages/" + mine.ID + "/actions/primary", bearer, `{"status":"done"}`, 201},
			{"mark404Theirs", http.MethodPost, "/v1/subscribers/bob/messages/" + theirs.ID + "/actions/primary", bearer, `{"status":"done"}`, 404},
		} {
			t.Run(tt.name, func(t *testing.T) {
				var body *strings.Reader
				if tt.body != "" {
					body = strings.NewReader(tt.body)
				}
				var r response
				if body != nil {
					r = a.do(t, tt.method, tt.uri, tt.auth, json, body)
				} else {
					r = a.do(t, tt.method, tt.uri, tt.auth, nil, nil)
				}
				if r.status != tt.status {
					t.Fatalf("%d %s, want %d", r.status, r.body, tt.status)
				}
				if tt.name == "list200OwnMessages" {
					page := decode(t, r.body)
					if data := page["data"].([]any); len(data) != 1 || data[0].(map[string]any)["_id"] != mine.ID {
						t.Errorf("alice's session lists %v, want only her message", data)
					}
				}
			})
		}
	})
}
