package rest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// marksURI is the path of POST /v1/subscribers/{subscriberId}/messages/{mark-all,mark-as}.
func marksURI(subscriberID, route string) string {
	return "/v1/subscribers/" + url.PathEscape(subscriberID) + "/messages/" + route
}

// readSeen lists the subscriber's messages through /v1 and returns each one's read and
// seen flags by id, as "read,seen", "read", "seen" or "".
func readSeen(t testing.TB, a *api, key, subscriberID string) map[string]string {
	t.Helper()
	res := a.get(t, key, "/v1/messages?limit=1000&subscriberId="+url.QueryEscape(subscriberID))
	if res.status != http.StatusOK {
		t.Fatalf("list: status %d; body %s", res.status, res.body)
	}
	out := map[string]string{}
	for _, m := range decode(t, res.body)["data"].([]any) {
		m := m.(map[string]any)
		var flags []string
		for _, f := range []string{"read", "seen"} {
			if m[f] == true {
				flags = append(flags, f)
			}
		}
		out[m["_id"].(string)] = strings.Join(flags, ",")
	}
	return out
}

func TestMarkAllMessagesAs(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		tpl := tn.Template(t, "welcome")
		a := newAPI(t, s)
		tests := []struct {
			name string
			// start is each in-app message's read and seen before the mark; the subscriber
			// also has an email message, unread and unseen, which mark-all leaves alone.
			start  []string
			body   string
			want   []string
			answer string
		}{
			{"markAll201ReadAlsoSees", []string{"", "seen", "read,seen"}, `{"markAs":"read"}`, []string{"read,seen", "read,seen", "read,seen"}, "2"},
			{"markAll201UnreadSees", []string{"", "seen", "read,seen"}, `{"markAs":"unread"}`, []string{"seen", "seen", "seen"}, "2"},
			{"markAll201Seen", []string{"", "read", "read,seen"}, `{"markAs":"seen"}`, []string{"seen", "read,seen", "read,seen"}, "2"},
			{"markAll201UnseenKeepsRead", []string{"", "seen", "read,seen"}, `{"markAs":"unseen"}`, []string{"", "", "read"}, "2"},
			{"markAll201NothingToChange", []string{"read,seen", "read,seen"}, `{"markAs":"read"}`, []string{"read,seen", "read,seen"}, "0"},
			{"markAll201FeedIdentifierNull", []string{""}, `{"markAs":"seen","feedIdentifier":null}`, []string{"seen"}, "1"},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				id := fmt.Sprintf("mark-all-%d", i)
				sub := tn.Subscriber(t, id)
				want := map[string]string{}
				for j, flags := range tt.start {
					m := tn.Message(t, sub, tpl, func(m *models.Message) {
						m.Read, m.Seen = strings.Contains(flags, "read"), strings.Contains(flags, "seen")
					})
					want[m.ID] = tt.want[j]
				}
				email := tn.Message(t, sub, tpl, func(m *models.Message) { m.Channel = models.ChannelEmail })
				want[email.ID] = ""
				// With a key, as @novu/api sends every request: mark-all applies none.
				res := a.do(t, http.MethodPost, marksURI(id, "mark-all"), "ApiKey "+tn.Key,
					http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {id}}, strings.NewReader(tt.body))
				if res.status != http.StatusCreated || strings.TrimSpace(string(res.body)) != tt.answer {
					t.Fatalf("status %d, body %s; want 201 and %s", res.status, res.body, tt.answer)
				}
				if diff := cmp.Diff(want, readSeen(t, a, tn.Key, id)); diff != "" {
					t.Errorf("read and seen after the mark (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestMarkMessagesAs(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn, other := dbtest.NewTenant(t, s, "a"), dbtest.NewTenant(t, s, "b")
		tpl := tn.Template(t, "welcome")
		a := newAPI(t, s)
		alice, bob := tn.Subscriber(t, "alice"), tn.Subscriber(t, "bob")
		theirs := other.Message(t, other.Subscriber(t, "alice"), other.Template(t, "welcome"), nil)
		bobs := tn.Message(t, bob, tpl, nil)
		t.Run("markAs201OneIdAnswersTheRecord", func(t *testing.T) {
			m := tn.Message(t, alice, tpl, nil)
			res := a.post(t, tn.Key, marksURI("alice", "mark-as"), `{"messageId":"`+m.ID+`","markAs":"read"}`)
			if res.status != http.StatusCreated {
				t.Fatalf("status %d; body %s", res.status, res.body)
			}
			raw, stored := fetch(t, a, tn.Key, m.TransactionID)
			if stored["read"] != true || stored["seen"] != true {
				t.Errorf("stored read %v seen %v, want both true", stored["read"], stored["seen"])
			}
			if want := "[" + string(raw) + "]"; strings.TrimSpace(string(res.body)) != want {
				t.Errorf("answer is not the listed record:\nPOST %s\nGET  %s", res.body, want)
			}
		})
		t.Run("markAs201ArrayOfAnyChannelLeavesOutOthers", func(t *testing.T) {
			inApp := tn.Message(t, alice, tpl, func(m *models.Message) { m.Read, m.Seen = true, true })
			sms := tn.Message(t, alice, tpl, func(m *models.Message) { m.Channel = models.ChannelSMS; m.Read, m.Seen = true, true })
			ids := []string{inApp.ID, sms.ID, bobs.ID, theirs.ID, "67c2be400000000000000abc", "not-an-id"}
			res := a.post(t, tn.Key, marksURI("alice", "mark-as"), `{"messageId":["`+strings.Join(ids, `","`)+`"],"markAs":"unread"}`)
			if res.status != http.StatusCreated {
				t.Fatalf("status %d; body %s", res.status, res.body)
			}
			var answered []string
			for _, m := range decodeList(t, res.body) {
				answered = append(answered, m["_id"].(string))
				if m["read"] != false || m["seen"] != true {
					t.Errorf("%s answered read %v seen %v, want false and true", m["_id"], m["read"], m["seen"])
				}
			}
			if diff := cmp.Diff([]string{sms.ID, inApp.ID}, answered); diff != "" {
				t.Errorf("answered (-want +got):\n%s", diff)
			}
			if got := readSeen(t, a, tn.Key, "bob")[bobs.ID]; got != "" {
				t.Errorf("bob's message is %q, want unchanged", got)
			}
			if got := readSeen(t, a, other.Key, "alice")[theirs.ID]; got != "" {
				t.Errorf("the other tenant's message is %q, want unchanged", got)
			}
		})
		t.Run("markAsOlder201SetsOnlyWhatItNames", func(t *testing.T) {
			m := tn.Message(t, alice, tpl, nil)
			res := a.post(t, tn.Key, marksURI("alice", "markAs"), `{"messageId":["`+m.ID+`"],"mark":{"read":true}}`)
			if res.status != http.StatusCreated {
				t.Fatalf("status %d; body %s", res.status, res.body)
			}
			if got := readSeen(t, a, tn.Key, "alice")[m.ID]; got != "read" {
				t.Errorf("stored %q, want read and not seen", got)
			}
			if list := decodeList(t, res.body); len(list) != 1 || list[0]["read"] != true || list[0]["seen"] != false {
				t.Errorf("answered %s", res.body)
			}
		})
		t.Run("markAs201UnknownIdAnswersNone", func(t *testing.T) {
			res := a.post(t, tn.Key, marksURI("alice", "mark-as"), `{"messageId":"67c2be400000000000000abc","markAs":"seen"}`)
			if res.status != http.StatusCreated || strings.TrimSpace(string(res.body)) != "[]" {
				t.Fatalf("status %d, body %s; want 201 []", res.status, res.body)
			}
		})
	})
}

// decodeList parses a JSON array of objects.
func decodeList(t testing.TB, body []byte) []map[string]any {
	t.Helper()
	wrapped := decode(t, append(append([]byte(`{"list":`), body...), '}'))
	var out []map[string]any
	for _, v := range wrapped["list"].([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

func TestMarksRefused(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn, other := dbtest.NewTenant(t, s, "a"), dbtest.NewTenant(t, s, "b")
		tpl := tn.Template(t, "welcome")
		a := newAPI(t, s)
		msg := tn.Message(t, tn.Subscriber(t, "alice"), tpl, nil)
		other.Subscriber(t, "carol")
		many := make([]string, models.MaxStateMessageIDs+1)
		for i := range many {
			many[i] = `"` + msg.ID + `"`
		}
		tests := []struct {
			name, key, uri, body string
			status               int
			field                string
		}{
			{"markAll422MarkAsArchive", "", marksURI("alice", "mark-all"), `{"markAs":"archive"}`, 422, "markAs"},
			{"markAll422MarkAsCase", "", marksURI("alice", "mark-all"), `{"markAs":"READ"}`, 422, "markAs"},
			{"markAll422MarkAsMissing", "", marksURI("alice", "mark-all"), `{}`, 422, "markAs"},
			{"markAll422MarkAsNumber", "", marksURI("alice", "mark-all"), `{"markAs":1}`, 422, "markAs"},
			{"markAll422FeedIdentifier", "", marksURI("alice", "mark-all"), `{"markAs":"read","feedIdentifier":"news"}`, 422, "feedIdentifier"},
			{"markAll422FeedIdentifiers", "", marksURI("alice", "mark-all"), `{"markAs":"read","feedIdentifier":[]}`, 422, "feedIdentifier"},
			{"markAll422UnknownMember", "", marksURI("alice", "mark-all"), `{"markAs":"read","channel":"email"}`, 422, "channel"},
			{"markAll400Malformed", "", marksURI("alice", "mark-all"), `{"markAs":`, 400, ""},
			{"markAll404UnknownSubscriber", "", marksURI("nobody", "mark-all"), `{"markAs":"read"}`, 404, ""},
			{"markAll404OtherTenantsSubscriber", "", marksURI("carol", "mark-all"), `{"markAs":"read"}`, 404, ""},
			{"markAll404OtherTenant", other.Key, marksURI("alice", "mark-all"), `{"markAs":"read"}`, 404, ""},
			{"markAs422MarkAsArchive", "", marksURI("alice", "mark-as"), `{"messageId":"` + msg.ID + `","markAs":"archive"}`, 422, "markAs"},
			{"markAs422MessageIdMissing", "", marksURI("alice", "mark-as"), `{"markAs":"read"}`, 422, "messageId"},
			{"markAs422MessageIdEmpty", "", marksURI("alice", "mark-as"), `{"messageId":"","markAs":"read"}`, 422, "messageId"},
			{"markAs422MessageIdsEmpty", "", marksURI("alice", "mark-as"), `{"messageId":[],"markAs":"read"}`, 422, "messageId"},
			{"markAs422MessageIdNumber", "", marksURI("alice", "mark-as"), `{"messageId":[1],"markAs":"read"}`, 422, "messageId"},
			{"markAs422TooManyIds", "", marksURI("alice", "mark-as"), `{"messageId":[` + strings.Join(many, ",") + `],"markAs":"read"}`, 422, "messageId"},
			{"markAsOlder422MarkEmpty", "", marksURI("alice", "markAs"), `{"messageId":"` + msg.ID + `","mark":{}}`, 422, "mark"},
			{"markAsOlder422MarkMissing", "", marksURI("alice", "markAs"), `{"messageId":"` + msg.ID + `"}`, 422, "mark"},
			{"markAsOlder422MarkString", "", marksURI("alice", "markAs"), `{"messageId":"` + msg.ID + `","mark":{"seen":"yes"}}`, 422, "mark.seen"},
			{"markAsOlder404OtherTenant", other.Key, marksURI("alice", "markAs"), `{"messageId":"` + msg.ID + `","mark":{"seen":true}}`, 404, ""},
			{"markAs404UnknownSubscriber", "", marksURI("nobody", "mark-as"), `{"messageId":"` + msg.ID + `","markAs":"read"}`, 404, ""},
			{"markAs404OtherTenant", other.Key, marksURI("alice", "mark-as"), `{"messageId":"` + msg.ID + `","markAs":"read"}`, 404, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				key := tt.key
				if key == "" {
					key = tn.Key
				}
				body := errorBody(t, a.post(t, key, tt.uri, tt.body), tt.status, tt.uri)
				if tt.field != "" {
					if _, ok := body["errors"].(map[string]any)[tt.field]; !ok {
						t.Errorf("errors %v do not name %s", body["errors"], tt.field)
					}
				}
				if got := readSeen(t, a, tn.Key, "alice")[msg.ID]; got != "" {
					t.Errorf("the message is %q after a refusal, want unchanged", got)
				}
			})
		}
	})
}
