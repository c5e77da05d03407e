package rest_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/graph"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/keyseal"
	"messages/models/store"
	"messages/rest"
)

// inboxSealer seals the API keys of the inbox tests' stores, so a subscriberHash can be
// checked against them.
func inboxSealer(t testing.TB) store.OpenOption {
	t.Helper()
	sealer, err := keyseal.New(bytes.Repeat([]byte("k"), 32))
	if err != nil {
		t.Fatal(err)
	}
	return store.WithKeySealer(sealer)
}

// hashOf is what an integrator's backend computes: the hex HMAC-SHA256 of the
// subscriberId keyed with an API key.
func hashOf(key, subscriberID string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(subscriberID))
	return hex.EncodeToString(mac.Sum(nil))
}

// inboxTenant is a tenant with its application identifier.
type inboxTenant struct {
	*dbtest.Tenant
	app string
}

func newInboxTenant(t testing.TB, s *store.Store, name string) inboxTenant {
	t.Helper()
	tn := dbtest.NewTenant(t, s, name)
	app, err := s.ApplicationIdentifier(context.Background(), tn.Env.ID)
	if err != nil {
		t.Fatal(err)
	}
	return inboxTenant{tn, app}
}

// call sends a request as the inbox client does, with Content-Type application/json and
// the given Authorization (none when empty). The inbox API is the client's contract, not
// in the OpenAPI document, so it is not validated against it.
func (a *api) call(t testing.TB, method, uri, auth, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.srv.URL+uri, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Novu-API-Version", "2024-06-26")
	req.Header.Set("Novu-Client-Version", "@novu/js@3.19.2")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := a.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// openSession opens an inbox session for subscriberID with key's hash and returns its
// bearer Authorization value and the answer's data.
func (a *api) openSession(t testing.TB, tn inboxTenant, key, subscriberID string) (string, map[string]any) {
	t.Helper()
	res := a.call(t, http.MethodPost, "/v1/inbox/session", "", sessionBody(tn.app, hashOf(key, subscriberID), subscriberID))
	if res.status != http.StatusCreated {
		t.Fatalf("session for %s: %d %s", subscriberID, res.status, res.body)
	}
	data := decode(t, res.body)["data"].(map[string]any)
	return "Bearer " + data["token"].(string), data
}

func sessionBody(app, hash, subscriberID string) string {
	b, _ := json.Marshal(map[string]any{"applicationIdentifier": app, "subscriberHash": hash,
		"subscriber": map[string]any{"subscriberId": subscriberID, "firstName": "Ada", "timezone": "Europe/Paris"}})
	return string(b)
}

// The inbox client's session: opened with the application identifier and the HMAC of
// the subscriberId keyed by an API key of that environment, and by nothing else. Each
// refusal is the documented error body and carries no token; an API key's session on
// the same path keeps its contract.
func TestInboxSession(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newInboxTenant(t, s, "inbox-a"), newInboxTenant(t, s, "inbox-b")
		shared, tpl := a.Subscriber(t, "shared"), a.Template(t, "welcome")
		for range 3 {
			a.Message(t, shared, tpl, nil)
		}
		a.Message(t, shared, tpl, func(m *models.Message) { m.Channel = models.ChannelEmail })
		a.Message(t, shared, tpl, func(m *models.Message) { m.Read = true })
		api := newAPI(t, s)

		res := api.call(t, http.MethodPost, "/v1/inbox/session", "", sessionBody(a.app, hashOf(a.Key, "shared"), "shared"))
		if res.status != http.StatusCreated {
			t.Fatalf("session: %d %s", res.status, res.body)
		}
		data := decode(t, res.body)["data"].(map[string]any)
		if tok, _ := data["token"].(string); tok == "" {
			t.Fatalf("no token in %s", res.body)
		}
		delete(data, "token")
		if want := models.NewTime(clock.Truncate(time.Second).Add(24 * time.Hour)).String(); data["expiresAt"] != want {
			t.Errorf("expiresAt = %v, want %s: a day, since the client never renews its session", data["expiresAt"], want)
		}
		delete(data, "expiresAt")
		want := map[string]any{
			"totalUnreadCount":   3.0,
			"unreadCount":        map[string]any{"total": 3.0, "severity": map[string]any{"high": 0.0, "medium": 0.0, "low": 0.0, "none": 3.0}},
			"removeNovuBranding": false, "isDevelopmentMode": false, "maxSnoozeDurationHours": 2160.0,
			"applicationIdentifier": a.app, "contextKeys": []any{}, "subscriberId": "shared",
		}
		if diff := cmp.Diff(want, data); diff != "" {
			t.Errorf("session data (-want +got):\n%s", diff)
		}
		if cc := res.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control = %q, want no-store", cc)
		}

		top, _ := json.Marshal(map[string]any{"applicationIdentifier": a.app, "subscriberHash": hashOf(a.Key, "newcomer"), "subscriberId": "newcomer"})
		if res := api.call(t, http.MethodPost, "/v1/inbox/session", "", string(top)); res.status != http.StatusCreated {
			t.Errorf("top-level subscriberId: %d %s", res.status, res.body)
		}

		for _, tt := range []struct {
			name, body string
			status     int
		}{
			{"session401WrongHash", sessionBody(a.app, hashOf(a.Key+"x", "shared"), "shared"), 401},
			{"session401OtherEnvironmentsKey", sessionBody(a.app, hashOf(b.Key, "shared"), "shared"), 401},
			{"session401OtherSubscribersHash", sessionBody(a.app, hashOf(a.Key, "someone"), "shared"), 401},
			{"session401UnknownApplication", sessionBody("nosuchapp000", hashOf(a.Key, "shared"), "shared"), 401},
			{"session401NoCredentialAtAll", `{"subscriberId":"shared"}`, 401},
			{"session401NoHash", `{"applicationIdentifier":"` + a.app + `","subscriber":{"subscriberId":"shared"}}`, 401},
			{"session422NoSubscriber", `{"applicationIdentifier":"` + a.app + `","subscriberHash":"` + hashOf(a.Key, "") + `"}`, 422},
			{"session422NoApplication", `{"subscriberHash":"` + hashOf(a.Key, "shared") + `","subscriberId":"shared"}`, 422},
			{"session422ApplicationNotString", `{"applicationIdentifier":5,"subscriberHash":"x","subscriberId":"shared"}`, 422},
			{"session422SubscriberNotObject", `{"applicationIdentifier":"x","subscriberHash":"x","subscriber":"shared"}`, 422},
			{"session400NotJSON", `{"applicationIdentifier":`, 400},
			{"session413Large", `{"applicationIdentifier":"` + strings.Repeat("a", 20<<10) + `"}`, 413},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := api.call(t, http.MethodPost, "/v1/inbox/session", "", tt.body)
				errorBody(t, res, tt.status, "/v1/inbox/session")
				if strings.Contains(string(res.body), `"token"`) {
					t.Errorf("a refusal carries a token: %s", res.body)
				}
			})
		}

		req, _ := http.NewRequest(http.MethodPost, api.srv.URL+"/v1/inbox/session", strings.NewReader(sessionBody(a.app, hashOf(a.Key, "shared"), "shared")))
		req.Header.Set("Content-Type", "text/plain")
		if res, err := api.srv.Client().Do(req); err != nil || res.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("a text/plain session request: %v %v, want 415", res.StatusCode, err)
		}

		keyed := api.post(t, a.Key, "/v1/inbox/session", `{"subscriberId":"shared"}`)
		if keyed.status != http.StatusCreated {
			t.Fatalf("API key session: %d %s", keyed.status, keyed.body)
		}
		if diff := cmp.Diff([]string{"token", "subscriberId", "expiresAt"}, topKeys(t, keyed.body)); diff != "" {
			t.Errorf("the API key's session changed its contract (-want +got):\n%s", diff)
		}
		if res := api.call(t, http.MethodPost, "/v1/inbox/session", "ApiKey nope", sessionBody(a.app, hashOf(a.Key, "shared"), "shared")); res.status != 401 {
			t.Errorf("a bad API key with a valid hash: %d, want 401", res.status)
		}
	}, inboxSealer(t))
}

// Keyless session requests are limited per client address: past the bucket, 429 with
// Retry-After, and the request never reaches the hash check.
func TestInboxSessionRateLimited(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a := newInboxTenant(t, s, "inbox-limited")
		now := func() time.Time { return clock }
		limiter, err := rest.NewAddressLimiterForTest(2, now)
		if err != nil {
			t.Fatal(err)
		}
		api := newChainAPI(t, s, rest.ChainOptions{AddressLimiter: limiter, GraphQL: graph.HandlerOptions{Limits: graph.DefaultLimits}})
		body := sessionBody(a.app, hashOf(a.Key, "ada"), "ada")
		for i := range 2 {
			if res := api.call(t, http.MethodPost, "/v1/inbox/session", "", body); res.status != 201 {
				t.Fatalf("session %d: %d %s", i, res.status, res.body)
			}
		}
		res := api.call(t, http.MethodPost, "/v1/inbox/session", "", body)
		errorBody(t, res, http.StatusTooManyRequests, "/v1/inbox/session")
		if res.header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
		if keyed := api.post(t, a.Key, "/v1/inbox/session", `{"subscriberId":"ada"}`); keyed.status != 201 {
			t.Errorf("the API key's session is limited by the address bucket: %d", keyed.status)
		}
	}, inboxSealer(t))
}

// ids are the ids of a page of notifications.
func ids(t testing.TB, body []byte) []string {
	t.Helper()
	var page struct{ Data []struct{ ID string } }
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, n := range page.Data {
		out = append(out, n.ID)
	}
	return out
}

// The list is the session's in-app messages, newest first, paged by offset and after,
// narrowed by state and severity; another environment's subscriber of the same id is
// someone else.
func TestInboxNotifications(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newInboxTenant(t, s, "inbox-list-a"), newInboxTenant(t, s, "inbox-list-b")
		subA, tplA := a.Subscriber(t, "shared"), a.Template(t, "welcome")
		subB, tplB := b.Subscriber(t, "shared"), b.Template(t, "welcome")
		var mine []string // newest first
		for i := range 5 {
			m := a.Message(t, subA, tplA, func(m *models.Message) { m.Read = i == 1 })
			mine = append([]string{m.ID}, mine...)
		}
		email := a.Message(t, subA, tplA, func(m *models.Message) { m.Channel = models.ChannelEmail })
		theirs := b.Message(t, subB, tplB, nil)
		api := newAPI(t, s)
		sessA, _ := api.openSession(t, a, a.Key, "shared")
		sessB, _ := api.openSession(t, b, b.Key, "shared")
		// ms is the creation time of A's n-th fixture message, in the client's milliseconds.
		ms := func(n int) string {
			return strconv.FormatInt(dbtest.Base.Add(time.Duration(n)*time.Second).UnixMilli(), 10)
		}

		for _, tt := range []struct {
			name, query string
			want        []string
			more        bool
			filter      map[string]any
		}{
			{"list200All", "?limit=10", mine, false, map[string]any{}},
			{"list200Limit", "?limit=2", mine[:2], true, map[string]any{}},
			{"list200Offset", "?limit=2&offset=2", mine[2:4], true, map[string]any{}},
			{"list200OffsetLast", "?limit=2&offset=4", mine[4:], false, map[string]any{}},
			{"list200After", "?limit=2&after=" + mine[1], mine[2:4], true, map[string]any{}},
			{"list200Unread", "?limit=10&read=false&archived=false", append(append([]string{}, mine[:3]...), mine[4]), false,
				map[string]any{"read": false, "archived": false}},
			{"list200SeverityNone", "?limit=10&severity[]=none&severity[]=high", mine, false, map[string]any{"severity": []any{"none", "high"}}},
			{"list200SeverityHigh", "?limit=10&severity=high", []string{}, false, map[string]any{"severity": []any{"high"}}},
			{"list200EmptyTags", "?limit=10&data=%7B%7D", mine, false, map[string]any{}},
			{"list200Created", "?limit=10&createdGte=" + ms(2) + "&createdLte=" + ms(4), mine[1:4], false,
				map[string]any{"createdGte": float64(dbtest.Base.Add(2 * time.Second).UnixMilli()), "createdLte": float64(dbtest.Base.Add(4 * time.Second).UnixMilli())}},
			{"list200CreatedPaged", "?limit=2&offset=1&createdGte=" + ms(2), mine[1:3], true,
				map[string]any{"createdGte": float64(dbtest.Base.Add(2 * time.Second).UnixMilli())}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := api.call(t, http.MethodGet, "/v1/inbox/notifications"+tt.query, sessA, "")
				if res.status != 200 {
					t.Fatalf("%d %s", res.status, res.body)
				}
				if diff := cmp.Diff(tt.want, ids(t, res.body)); diff != "" {
					t.Errorf("ids (-want +got):\n%s", diff)
				}
				body := decode(t, res.body)
				if body["hasMore"] != tt.more {
					t.Errorf("hasMore = %v, want %v", body["hasMore"], tt.more)
				}
				if diff := cmp.Diff(tt.filter, body["filter"]); diff != "" {
					t.Errorf("filter (-want +got):\n%s", diff)
				}
			})
		}
		if got := ids(t, api.call(t, http.MethodGet, "/v1/inbox/notifications", sessB, "").body); !cmp.Equal(got, []string{theirs.ID}) {
			t.Errorf("B's shared subscriber lists %v, want only %s", got, theirs.ID)
		}
		for _, id := range ids(t, api.call(t, http.MethodGet, "/v1/inbox/notifications?limit=100", sessA, "").body) {
			if id == email.ID {
				t.Error("the inbox lists an email message")
			}
		}

		for _, tt := range []struct {
			name, query, auth, field string
			status                   int
		}{
			{"list422TagsForm", "?tags[x]=billing", sessA, "tags", 422},
			{"list422TooManyTags", "?" + strings.Repeat("tags[]=a&", 31), sessA, "tags", 422},
			{"list422Data", "?data=%7B%22a%22%3A1%7D", sessA, "data", 422},
			{"list422CreatedGte", "?createdGte=soon", sessA, "createdGte", 422},
			{"list422Read", "?read=yes", sessA, "read", 422},
			{"list422Severity", "?severity=urgent", sessA, "severity", 422},
			{"list422Limit", "?limit=0", sessA, "limit", 422},
			{"list422Offset", "?offset=-1", sessA, "offset", 422},
			{"list404AfterTheirs", "?after=" + theirs.ID, sessA, "", 404},
			{"list403APIKey", "", "ApiKey " + a.Key, "", 403},
			{"list401None", "", "", "", 401},
			{"list401BadToken", "", "Bearer nope", "", 401},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := api.call(t, http.MethodGet, "/v1/inbox/notifications"+tt.query, tt.auth, "")
				body := errorBody(t, res, tt.status, "/v1/inbox/notifications"+tt.query)
				if tt.field != "" {
					if _, ok := body["errors"].(map[string]any)[tt.field]; !ok {
						t.Errorf("the refusal does not name %s: %s", tt.field, res.body)
					}
				}
			})
		}
	}, inboxSealer(t))
}

// A notification carries every field of the client's Notification this server has a
// value for, from the message's record.
func TestInboxNotificationFields(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a := newInboxTenant(t, s, "inbox-fields")
		sub, tpl := a.Subscriber(t, "ada"), a.Template(t, "welcome")
		m := a.Message(t, sub, tpl, func(m *models.Message) {
			m.Content = []models.ContentBlock{{Type: "text", Content: "Hello Ada"}, {Type: "text", Content: "Second line"}}
		})
		api := newAPI(t, s)
		sess, _ := api.openSession(t, a, a.Key, "ada")
		res := api.call(t, http.MethodGet, "/v1/inbox/notifications", sess, "")
		var page struct{ Data []map[string]any }
		if err := json.Unmarshal(res.body, &page); err != nil || len(page.Data) != 1 {
			t.Fatalf("%d %s", res.status, res.body)
		}
		created := m.CreatedAt.String()
		want := map[string]any{
			"id": m.ID, "transactionId": m.TransactionID, "subject": "Hello", "body": "Hello Ada\nSecond line",
			"to": map[string]any{"id": sub.ID, "subscriberId": "ada", "firstName": "Ada", "lastName": "Lovelace",
				"email": "ada@example.com", "phone": "+15550100", "avatar": "https://example.com/a.png", "locale": "en-US",
				"data": map[string]any{"plan": "pro", "n": 1.0}, "timezone": "Europe/Paris"},
			"isRead": false, "isSeen": false, "isArchived": false, "isSnoozed": false,
			"snoozedUntil": nil, "deliveredAt": []any{created}, "createdAt": created,
			"readAt": nil, "firstSeenAt": nil, "archivedAt": nil,
			"primaryAction":   map[string]any{"label": "Accept", "isCompleted": false},
			"secondaryAction": map[string]any{"label": "Decline", "isCompleted": false},
			"channelType":     "in_app", "tags": []any{"fixture"},
			"redirect": map[string]any{"url": "/x"},
			"workflow": map[string]any{"id": tpl.ID, "identifier": "welcome", "name": "welcome", "critical": false,
				"tags": []any{"fixture"}, "severity": "none"},
			"severity": "none",
		}
		if diff := cmp.Diff(want, page.Data[0]); diff != "" {
			t.Errorf("notification (-want +got):\n%s", diff)
		}
	}, inboxSealer(t))
}

// Counts answer each filter exactly, over 100 too, with the filter as sent; a filter of
// severities other than none counts nothing.
func TestInboxCount(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newInboxTenant(t, s, "inbox-count-a"), newInboxTenant(t, s, "inbox-count-b")
		sub, tpl := a.Subscriber(t, "shared"), a.Template(t, "welcome")
		for i := range 130 {
			a.Message(t, sub, tpl, func(m *models.Message) { m.Read = i < 10; m.Archived = i < 3 })
		}
		a.Message(t, sub, tpl, func(m *models.Message) { m.Channel = models.ChannelPush })
		b.Message(t, b.Subscriber(t, "shared"), b.Template(t, "welcome"), nil)
		api := newAPI(t, s)
		sess, data := api.openSession(t, a, a.Key, "shared")
		if got := data["unreadCount"].(map[string]any)["total"]; got != 120.0 {
			t.Errorf("session unread total = %v, want 120", got)
		}
		filters := `[{"read":false,"archived":false,"snoozed":false,"severity":"none"},{"read":false,"archived":false,"snoozed":false,"severity":"high"},` +
			`{},{"archived":true},{"read":true,"tags":[],"data":{}},{"seen":false,"severity":["low","none"]},` +
			fmt.Sprintf(`{"createdGte":%d,"createdLte":%d},{"createdLte":%d,"read":true,"archived":false}]`,
				dbtest.Base.Add(100*time.Second).UnixMilli(), dbtest.Base.Add(110*time.Second).UnixMilli(), dbtest.Base.Add(5*time.Second).UnixMilli())
		res := api.call(t, http.MethodGet, "/v1/inbox/notifications/count?filters="+url.QueryEscape(filters), sess, "")
		if res.status != 200 {
			t.Fatalf("%d %s", res.status, res.body)
		}
		var got struct {
			Data []struct {
				Count  int
				Filter json.RawMessage
			}
		}
		if err := json.Unmarshal(res.body, &got); err != nil {
			t.Fatal(err)
		}
		var sent []json.RawMessage
		_ = json.Unmarshal([]byte(filters), &sent)
		wantCounts := []int{120, 0, 130, 3, 10, 130, 11, 2}
		if len(got.Data) != len(wantCounts) {
			t.Fatalf("%d answers, want %d: %s", len(got.Data), len(wantCounts), res.body)
		}
		for i, d := range got.Data {
			if d.Count != wantCounts[i] {
				t.Errorf("filter %s counts %d, want %d", sent[i], d.Count, wantCounts[i])
			}
			if !bytes.Equal(d.Filter, sent[i]) {
				t.Errorf("filter echoed as %s, sent %s", d.Filter, sent[i])
			}
		}
		for _, tt := range []struct {
			name, query, field string
			status             int
		}{
			{"count422NoFilters", "", "filters", 422},
			{"count422NotArray", "?filters=%7B%7D", "filters", 422},
			{"count422TagsForm", "?filters=" + url.QueryEscape(`[{"tags":{"nor":["a"]}}]`), "tags", 422},
			{"count422TagsNotStrings", "?filters=" + url.QueryEscape(`[{"tags":[5]}]`), "tags", 422},
			{"count422Data", "?filters=" + url.QueryEscape(`[{"data":{"a":1}}]`), "data", 422},
			{"count422Read", "?filters=" + url.QueryEscape(`[{"read":"no"}]`), "read", 422},
			{"count422Severity", "?filters=" + url.QueryEscape(`[{"severity":"urgent"}]`), "severity", 422},
			{"count422Created", "?filters=" + url.QueryEscape(`[{"createdLte":"today"}]`), "createdLte", 422},
			{"count422TooMany", "?filters=" + url.QueryEscape("["+strings.Repeat("{},", 30)+"{}]"), "filters", 422},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := api.call(t, http.MethodGet, "/v1/inbox/notifications/count"+tt.query, sess, "")
				body := errorBody(t, res, tt.status, "/v1/inbox/notifications/count"+tt.query)
				if _, ok := body["errors"].(map[string]any)[tt.field]; !ok {
					t.Errorf("the refusal does not name %s: %s", tt.field, res.body)
				}
			})
		}
	}, inboxSealer(t))
}

// gqlMessages is the subscriber's in-app messages as GraphQL answers them for the API key.
func gqlMessages(t testing.TB, api *api, key, filter string) map[string]map[string]any {
	t.Helper()
	res := api.graphql(t, key, `{ messages(subscriberId: "shared", channel: in_app, limit: 1000`+filter+`) {
		data { _id read seen archived archivedAt lastReadDate firstSeenDate snoozedUntil cta { action { status result { type } } } } } }`, nil)
	var out struct {
		Data struct {
			Messages struct{ Data []map[string]any }
		}
	}
	if err := json.Unmarshal(res.body, &out); err != nil || res.status != 200 {
		t.Fatalf("graphql: %d %s", res.status, res.body)
	}
	byID := map[string]map[string]any{}
	for _, m := range out.Data.Messages.Data {
		byID[m["_id"].(string)] = m
	}
	return byID
}

// gqlCounts is messageCounts of the shared subscriber's in-app messages.
func gqlCounts(t testing.TB, api *api, key string) map[string]any {
	t.Helper()
	res := api.graphql(t, key, `{ messageCounts(subscriberId: "shared", channel: in_app) { total unread unseen archived snoozed } }`, nil)
	body := decode(t, res.body)
	data, _ := body["data"].(map[string]any)
	if data == nil {
		t.Fatalf("graphql: %s", res.body)
	}
	return data["messageCounts"].(map[string]any)
}

// Every change of one notification answers it as changed, and GraphQL reads the same
// record; a change to the other environment's shared subscriber's message, or to an
// email, is not found and changes nothing.
func TestInboxChanges(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newInboxTenant(t, s, "inbox-change-a"), newInboxTenant(t, s, "inbox-change-b")
		sub, tpl := a.Subscriber(t, "shared"), a.Template(t, "welcome")
		m := a.Message(t, sub, tpl, nil)
		email := a.Message(t, sub, tpl, func(m *models.Message) { m.Channel = models.ChannelEmail })
		theirs := b.Message(t, b.Subscriber(t, "shared"), b.Template(t, "welcome"), nil)
		api := newAPI(t, s)
		sess, _ := api.openSession(t, a, a.Key, "shared")
		sessB, _ := api.openSession(t, b, b.Key, "shared")
		now := models.NewTime(clock).String()
		until := "2025-03-02T00:00:00.000Z"

		for _, tt := range []struct {
			change, body string
			want         map[string]any // the notification's fields after it
			stored       map[string]any // GraphQL's record after it
		}{
			{"read", "", map[string]any{"isRead": true, "readAt": now, "isArchived": false},
				map[string]any{"read": true, "lastReadDate": now, "archived": false}},
			{"archive", "", map[string]any{"isArchived": true, "archivedAt": now, "isRead": true},
				map[string]any{"archived": true, "archivedAt": now}},
			{"unarchive", "", map[string]any{"isArchived": false, "archivedAt": nil, "isRead": true},
				map[string]any{"archived": false, "archivedAt": nil}},
			{"unread", "", map[string]any{"isRead": false, "readAt": nil},
				map[string]any{"read": false}},
			{"snooze", `{"snoozeUntil":"` + until + `"}`, map[string]any{"isSnoozed": true, "snoozedUntil": until},
				map[string]any{"snoozedUntil": until}},
			{"unsnooze", "", map[string]any{"isSnoozed": false, "snoozedUntil": nil},
				map[string]any{"snoozedUntil": nil}},
			{"complete", `{"actionType":"primary"}`,
				map[string]any{"primaryAction": map[string]any{"label": "Accept", "isCompleted": true}},
				map[string]any{"cta": map[string]any{"action": map[string]any{"status": "done", "result": map[string]any{"type": "primary"}}}}},
			{"revert", `{"actionType":"primary"}`,
				map[string]any{"primaryAction": map[string]any{"label": "Accept", "isCompleted": false}},
				map[string]any{"cta": map[string]any{"action": map[string]any{"status": "pending", "result": map[string]any{"type": "primary"}}}}},
		} {
			t.Run(tt.change, func(t *testing.T) {
				res := api.call(t, http.MethodPatch, "/v1/inbox/notifications/"+m.ID+"/"+tt.change, sess, tt.body)
				if res.status != 200 {
					t.Fatalf("%d %s", res.status, res.body)
				}
				data := decode(t, res.body)["data"].(map[string]any)
				got := map[string]any{}
				for k := range tt.want {
					got[k] = data[k]
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("answer (-want +got):\n%s", diff)
				}
				stored := gqlMessages(t, api, a.Key, "")[m.ID]
				got = map[string]any{}
				for k := range tt.stored {
					got[k] = stored[k]
				}
				if diff := cmp.Diff(tt.stored, got); diff != "" {
					t.Errorf("GraphQL reads (-want +got):\n%s", diff)
				}
			})
		}

		before := gqlMessages(t, api, b.Key, "")
		for _, tt := range []struct {
			name, method, uri, auth, body string
			status                        int
		}{
			{"change404Theirs", http.MethodPatch, "/v1/inbox/notifications/" + theirs.ID + "/read", sess, "", 404},
			{"change404TheirsFromB", http.MethodPatch, "/v1/inbox/notifications/" + m.ID + "/archive", sessB, "", 404},
			{"change404Email", http.MethodPatch, "/v1/inbox/notifications/" + email.ID + "/read", sess, "", 404},
			{"change404Unknown", http.MethodPatch, "/v1/inbox/notifications/" + m.ID + "/explode", sess, "", 404},
			{"change404NotAnID", http.MethodPatch, "/v1/inbox/notifications/nope/read", sess, "", 404},
			{"snooze422Past", http.MethodPatch, "/v1/inbox/notifications/" + m.ID + "/snooze", sess, `{"snoozeUntil":"2020-01-01T00:00:00.000Z"}`, 422},
			{"snooze422Missing", http.MethodPatch, "/v1/inbox/notifications/" + m.ID + "/snooze", sess, `{}`, 422},
			{"snooze422TooFar", http.MethodPatch, "/v1/inbox/notifications/" + m.ID + "/snooze", sess, `{"snoozeUntil":"2026-03-01T00:00:00.000Z"}`, 422},
			{"complete422Type", http.MethodPatch, "/v1/inbox/notifications/" + m.ID + "/complete", sess, `{"actionType":"tertiary"}`, 422},
			{"complete404Theirs", http.MethodPatch, "/v1/inbox/notifications/" + theirs.ID + "/complete", sess, `{"actionType":"primary"}`, 404},
			{"change403APIKey", http.MethodPatch, "/v1/inbox/notifications/" + m.ID + "/read", "ApiKey " + a.Key, "", 403},
			{"change401None", http.MethodPatch, "/v1/inbox/notifications/" + m.ID + "/read", "", "", 401},
			{"bulk404Unknown", http.MethodPost, "/v1/inbox/notifications/explode", sess, "", 404},
			{"bulk422Tags", http.MethodPost, "/v1/inbox/notifications/read", sess, `{"tags":"a"}`, 422},
			{"bulk422Data", http.MethodPost, "/v1/inbox/notifications/archive", sess, `{"data":"{\"a\":1}"}`, 422},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := api.call(t, tt.method, tt.uri, tt.auth, tt.body)
				errorBody(t, res, tt.status, tt.uri)
			})
		}
		if diff := cmp.Diff(before, gqlMessages(t, api, b.Key, "")); diff != "" {
			t.Errorf("B's messages changed (-before +after):\n%s", diff)
		}
		if stored := dbtest.LoadMessage(t, s, email.ID); stored.Read {
			t.Error("the email was read through the inbox")
		}
	}, inboxSealer(t), store.WithClock(func() time.Time { return clock }))
}

// The bulk changes act on every in-app message of the session's subscriber, over 100 of
// them, and on no one else's: the counters GraphQL reads follow, and B's shared
// subscriber keeps hers.
func TestInboxBulkChanges(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newInboxTenant(t, s, "inbox-bulk-a"), newInboxTenant(t, s, "inbox-bulk-b")
		sub, tpl := a.Subscriber(t, "shared"), a.Template(t, "welcome")
		var first, second string
		for i := range 110 {
			m := a.Message(t, sub, tpl, nil)
			switch i {
			case 0:
				first = m.ID
			case 1:
				second = m.ID
			}
		}
		email := a.Message(t, sub, tpl, func(m *models.Message) { m.Channel = models.ChannelEmail })
		subB, tplB := b.Subscriber(t, "shared"), b.Template(t, "welcome")
		for range 3 {
			b.Message(t, subB, tplB, nil)
		}
		api := newAPI(t, s)
		sess, _ := api.openSession(t, a, a.Key, "shared")
		countsB := gqlCounts(t, api, b.Key)

		steps := []struct {
			bulk, body string
			changed    int
			counts     map[string]any
		}{
			{"seen", `{"notificationIds":["` + first + `","` + second + `"]}`, 2,
				map[string]any{"total": 110.0, "unread": 110.0, "unseen": 108.0, "archived": 0.0, "snoozed": 0.0}},
			{"seen", `{}`, 108, map[string]any{"total": 110.0, "unread": 110.0, "unseen": 0.0, "archived": 0.0, "snoozed": 0.0}},
			{"read", `{"tags":[],"data":"{}"}`, 110, map[string]any{"total": 110.0, "unread": 0.0, "unseen": 0.0, "archived": 0.0, "snoozed": 0.0}},
			{"read-archive", "", 110, map[string]any{"total": 110.0, "unread": 0.0, "unseen": 0.0, "archived": 110.0, "snoozed": 0.0}},
			{"archive", "", 0, map[string]any{"total": 110.0, "unread": 0.0, "unseen": 0.0, "archived": 110.0, "snoozed": 0.0}},
		}
		for i, st := range steps {
			res := api.call(t, http.MethodPost, "/v1/inbox/notifications/"+st.bulk, sess, st.body)
			if res.status != 200 {
				t.Fatalf("step %d %s: %d %s", i, st.bulk, res.status, res.body)
			}
			if diff := cmp.Diff(map[string]any{"data": map[string]any{"changed": float64(st.changed)}}, decode(t, res.body)); diff != "" {
				t.Errorf("step %d %s answer (-want +got):\n%s", i, st.bulk, diff)
			}
			if diff := cmp.Diff(st.counts, gqlCounts(t, api, a.Key)); diff != "" {
				t.Errorf("step %d %s: GraphQL counts (-want +got):\n%s", i, st.bulk, diff)
			}
		}
		if diff := cmp.Diff(countsB, gqlCounts(t, api, b.Key)); diff != "" {
			t.Errorf("B's counts changed (-before +after):\n%s", diff)
		}
		if stored := dbtest.LoadMessage(t, s, email.ID); stored.Read || stored.Archived || stored.Seen {
			t.Error("a bulk change of the inbox changed an email")
		}
	}, inboxSealer(t))
}

// Preferences are the global one and one per active workflow of the session's
// environment, narrowed by tags, severity and criticality; they cannot be changed.
func TestInboxPreferences(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newInboxTenant(t, s, "inbox-prefs-a"), newInboxTenant(t, s, "inbox-prefs-b")
		welcome := a.Template(t, "welcome")
		critical := a.Template(t, "security-alert")
		if err := s.DB().Exec("UPDATE templates SET critical = ?, tags = ?, preference_settings = ? WHERE id = ?", true, `["security"]`,
			`{"email":true,"sms":false,"in_app":true,"chat":false,"push":false}`, critical.ID).Error; err != nil {
			t.Fatal(err)
		}
		b.Template(t, "theirs")
		api := newAPI(t, s)
		sess, _ := api.openSession(t, a, a.Key, "ada")
		names := func(query string) []string {
			t.Helper()
			res := api.call(t, http.MethodGet, "/v1/inbox/preferences"+query, sess, "")
			if res.status != 200 {
				t.Fatalf("%s: %d %s", query, res.status, res.body)
			}
			var out struct {
				Data []struct {
					Level    string
					Channels map[string]bool
					Workflow *struct{ ID, Identifier string }
				}
			}
			if err := json.Unmarshal(res.body, &out); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range out.Data {
				if p.Workflow == nil {
					got = append(got, p.Level)
					continue
				}
				got = append(got, p.Workflow.Identifier)
				if p.Workflow.ID == critical.ID && (p.Channels["sms"] || !p.Channels["in_app"]) {
					t.Errorf("the critical workflow's channels are %v", p.Channels)
				}
				if p.Workflow.ID == welcome.ID && len(p.Channels) != 5 {
					t.Errorf("welcome's channels are %v", p.Channels)
				}
			}
			return got
		}
		for query, want := range map[string][]string{
			"?criticality=nonCritical":         {"global", "welcome"},
			"":                                 {"global", "welcome"},
			"?criticality=all":                 {"global", "security-alert", "welcome"},
			"?criticality=critical":            {"global", "security-alert"},
			"?criticality=all&tags[]=security": {"global", "security-alert"},
			"?criticality=all&severity=high":   {"global"},
			"?criticality=all&severity[]=none": {"global", "security-alert", "welcome"},
		} {
			if diff := cmp.Diff(want, names(query)); diff != "" {
				t.Errorf("%q (-want +got):\n%s", query, diff)
			}
		}
		global := api.call(t, http.MethodGet, "/v1/inbox/preferences/global", sess, "")
		if diff := cmp.Diff(map[string]any{"data": map[string]any{"level": "global", "enabled": true, "overrides": []any{},
			"schedule": map[string]any{"isEnabled": false},
			"channels": map[string]any{"email": true, "sms": true, "in_app": true, "chat": true, "push": true}}}, decode(t, global.body)); diff != "" {
			t.Errorf("global (-want +got):\n%s", diff)
		}
		for _, uri := range []string{"/v1/inbox/preferences", "/v1/inbox/preferences/" + welcome.ID} {
			res := api.call(t, http.MethodPatch, uri, sess, `{"email":false}`)
			errorBody(t, res, http.StatusMethodNotAllowed, uri)
		}
		errorBody(t, api.call(t, http.MethodGet, "/v1/inbox/preferences?criticality=some", sess, ""), 422, "/v1/inbox/preferences?criticality=some")
		errorBody(t, api.call(t, http.MethodGet, "/v1/inbox/preferences", "ApiKey "+a.Key, ""), 403, "/v1/inbox/preferences")
	}, inboxSealer(t))
}

// The client's tags filter keeps the messages of workflows with those tags: one group is
// any of its tags, several are all of the groups; in lists, counts and bulk changes.
func TestInboxTags(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		a, b := newInboxTenant(t, s, "inbox-tags-a"), newInboxTenant(t, s, "inbox-tags-b")
		sub := a.Subscriber(t, "shared")
		plain, billing, urgent := a.Template(t, "plain"), a.Template(t, "billing"), a.Template(t, "urgent")
		for tpl, tags := range map[string]string{billing.ID: `["billing"]`, urgent.ID: `["billing","urgent"]`} {
			if err := s.DB().Exec("UPDATE templates SET tags = ? WHERE id = ?", tags, tpl).Error; err != nil {
				t.Fatal(err)
			}
		}
		var plainIDs, billingIDs []string // newest first
		for range 2 {
			plainIDs = append([]string{a.Message(t, sub, plain, nil).ID}, plainIDs...)
		}
		for range 2 {
			billingIDs = append([]string{a.Message(t, sub, billing, nil).ID}, billingIDs...)
		}
		urgentID := a.Message(t, sub, urgent, nil).ID
		a.Message(t, sub, urgent, func(m *models.Message) { m.Channel = models.ChannelEmail })
		bTpl := b.Template(t, "billing")
		if err := s.DB().Exec("UPDATE templates SET tags = ? WHERE id = ?", `["billing"]`, bTpl.ID).Error; err != nil {
			t.Fatal(err)
		}
		theirs := b.Message(t, b.Subscriber(t, "shared"), bTpl, nil)
		api := newAPI(t, s)
		sess, _ := api.openSession(t, a, a.Key, "shared")

		for query, want := range map[string][]string{
			"?tags[]=billing":                           append([]string{urgentID}, billingIDs...),
			"?tags[]=billing&tags[]=fixture":            append(append([]string{urgentID}, billingIDs...), plainIDs...),
			"?tags[0][]=billing&tags[1][]=urgent":       {urgentID},
			"?tags[0][]=urgent&tags[1][]=fixture":       {},
			"?tags[]=nosuch":                            {},
			"?tags[]=billing&limit=2&offset=1":          billingIDs,
			"?tags[]=billing&limit=1&after=" + urgentID: billingIDs[:1],
		} {
			res := api.call(t, http.MethodGet, "/v1/inbox/notifications"+query, sess, "")
			if res.status != 200 {
				t.Fatalf("%s: %d %s", query, res.status, res.body)
			}
			if diff := cmp.Diff(want, ids(t, res.body)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", query, diff)
			}
		}
		echo := decode(t, api.call(t, http.MethodGet, "/v1/inbox/notifications?tags[0][]=billing&tags[1][]=urgent", sess, "").body)["filter"]
		if diff := cmp.Diff(map[string]any{"tags": map[string]any{"and": []any{map[string]any{"or": []any{"billing"}}, map[string]any{"or": []any{"urgent"}}}}}, echo); diff != "" {
			t.Errorf("filter echo (-want +got):\n%s", diff)
		}

		filters := `[{"tags":["billing"]},{"tags":{"and":[{"or":["billing"]},{"or":["urgent"]}]}},{"tags":{"or":["billing"]},"read":true},` +
			`{"tags":{"or":["fixture"]},"read":false},{"tags":["nosuch"]},{"tags":[],"read":false}]`
		res := api.call(t, http.MethodGet, "/v1/inbox/notifications/count?filters="+url.QueryEscape(filters), sess, "")
		var got struct{ Data []struct{ Count int } }
		if err := json.Unmarshal(res.body, &got); err != nil || res.status != 200 {
			t.Fatalf("%d %s", res.status, res.body)
		}
		var counts []int
		for _, d := range got.Data {
			counts = append(counts, d.Count)
		}
		if diff := cmp.Diff([]int{3, 1, 0, 2, 0, 5}, counts); diff != "" {
			t.Errorf("counts (-want +got):\n%s", diff)
		}

		read := api.call(t, http.MethodPost, "/v1/inbox/notifications/read", sess, `{"tags":["billing"]}`)
		if diff := cmp.Diff(map[string]any{"data": map[string]any{"changed": 3.0}}, decode(t, read.body)); diff != "" {
			t.Errorf("read by tags (-want +got):\n%s", diff)
		}
		if unread := gqlCounts(t, api, a.Key)["unread"]; unread != 2.0 {
			t.Errorf("unread after reading the billing messages = %v, want the 2 plain ones", unread)
		}
		if stored := dbtest.LoadMessage(t, s, theirs.ID); stored.Read {
			t.Error("reading by tags read the other environment's message")
		}
		none := api.call(t, http.MethodPost, "/v1/inbox/notifications/archive", sess, `{"tags":{"or":["nosuch"]}}`)
		if diff := cmp.Diff(map[string]any{"data": map[string]any{"changed": 0.0}}, decode(t, none.body)); diff != "" {
			t.Errorf("archive by an unknown tag (-want +got):\n%s", diff)
		}
	}, inboxSealer(t))
}
