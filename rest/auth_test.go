package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models/dbtest"
	"messages/models/store"
)

// endpoint is one authenticated route and a request that succeeds on it with a valid key.
type endpoint struct {
	name   string
	method string
	uri    string
	body   string
	ok     int
	// graphql routes answer 401 with GraphQL's errors array as well.
	graphql bool
}

func endpoints(messageID string) []endpoint {
	return []endpoint{
		{name: "list", method: http.MethodGet, uri: "/v1/messages?limit=1", ok: http.StatusOK},
		{name: "mark", method: http.MethodPost, uri: actionURI("alice", messageID, "primary"), body: `{"status":"done"}`, ok: http.StatusCreated},
		{name: "graphqlPost", method: http.MethodPost, uri: "/graphql", body: `{"query":"{ messages { totalCount } }"}`, ok: http.StatusOK, graphql: true},
		{name: "graphqlGet", method: http.MethodGet, uri: "/graphql?query=" + url.QueryEscape("{ messages { totalCount } }"), ok: http.StatusOK, graphql: true},
	}
}

func (e endpoint) send(t testing.TB, a *api, auth string) response {
	t.Helper()
	return a.do(t, e.method, e.uri, auth, http.Header{"Content-Type": {"application/json"}}, strings.NewReader(e.body))
}

// unauthenticated checks a 401 answer: the error body, and on /graphql an errors array
// coded UNAUTHENTICATED and no data.
func unauthenticated(t testing.TB, e endpoint, res response) {
	t.Helper()
	if !e.graphql {
		errorBody(t, res, http.StatusUnauthorized, e.uri)
		return
	}
	if res.status != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401; body %s", res.status, res.body)
	}
	noNulls(t, res.body)
	var body struct {
		StatusCode int             `json:"statusCode"`
		Path       string          `json:"path"`
		Timestamp  string          `json:"timestamp"`
		Error      string          `json:"error"`
		Data       json.RawMessage `json:"data"`
		Errors     []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Fatal(err)
	}
	if _, ok := decode(t, res.body)["data"]; ok {
		t.Errorf("401 on /graphql carries a data key: %s", res.body)
	}
	if len(body.Errors) != 1 || body.Errors[0].Message == "" || body.Errors[0].Extensions["code"] != "UNAUTHENTICATED" {
		t.Errorf("errors = %+v, want one with extensions.code UNAUTHENTICATED", body.Errors)
	}
	want := struct{ StatusCode, Path, Timestamp, Error any }{401, e.uri, clockText, "Unauthorized"}
	got := struct{ StatusCode, Path, Timestamp, Error any }{body.StatusCode, body.Path, body.Timestamp, body.Error}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error body (-want +got):\n%s", diff)
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		msg := tn.Message(t, tn.Subscriber(t, "alice"), tn.Template(t, "welcome"), nil)
		revoked := dbtest.NewTenant(t, s, "revoked")
		if err := s.RevokeAPIKey(context.Background(), revoked.Caller.KeyID); err != nil {
			t.Fatal(err)
		}
		a := newAPI(t, s)
		_, before := fetch(t, a, tn.Key, msg.TransactionID)

		refused := []struct {
			name string
			auth string
		}{
			{"auth401Missing", ""},
			{"auth401Bearer", "Bearer " + tn.Key},
			{"auth401BearerX", "Bearer x"},
			{"auth401Basic", "Basic " + tn.Key},
			{"auth401SchemeOnly", "ApiKey"},
			{"auth401SchemeAndSpace", "ApiKey "},
			{"auth401NoSpace", "ApiKey" + tn.Key},
			{"auth401Unknown", "ApiKey " + strings.Repeat("0", 64)},
			{"auth401Truncated", "ApiKey " + tn.Key[:len(tn.Key)-1]},
			{"auth401Extended", "ApiKey " + tn.Key + "0"},
			{"auth401UpperCasedKey", "ApiKey " + strings.ToUpper(tn.Key)},
			{"auth401TwoKeys", "ApiKey " + tn.Key + " " + tn.Key},
			{"auth401Huge", "ApiKey " + strings.Repeat("k", 10_000)},
			{"auth401Revoked", "ApiKey " + revoked.Key},
		}
		accepted := []struct {
			name string
			auth string
		}{
			{"auth2xxApiKey", "ApiKey " + tn.Key},
			{"auth2xxLowerCaseScheme", "apikey " + tn.Key},
			{"auth2xxUpperCaseScheme", "APIKEY " + tn.Key},
		}
		for _, e := range endpoints(msg.ID) {
			for _, tt := range refused {
				t.Run(e.name+"/"+tt.name, func(t *testing.T) {
					unauthenticated(t, e, e.send(t, a, tt.auth))
				})
			}
			for _, tt := range accepted {
				t.Run(e.name+"/"+tt.name, func(t *testing.T) {
					if res := e.send(t, a, tt.auth); res.status != e.ok {
						t.Errorf("status %d, want %d; body %s", res.status, e.ok, res.body)
					}
				})
			}
		}
		t.Run("auth401KeyInQueryString", func(t *testing.T) {
			uri := "/v1/messages?apiKey=" + tn.Key
			errorBody(t, a.do(t, http.MethodGet, uri, "", nil, nil), http.StatusUnauthorized, uri)
		})
		t.Run("auth401BeforeRouting", func(t *testing.T) {
			errorBody(t, a.do(t, http.MethodGet, "/v1/nope", "", nil, nil), http.StatusUnauthorized, "/v1/nope")
		})
		t.Run("auth401LeavesMessageUnchanged", func(t *testing.T) {
			res := a.do(t, http.MethodPost, actionURI("alice", msg.ID, "secondary"), "ApiKey "+revoked.Key,
				http.Header{"Content-Type": {"application/json"}}, strings.NewReader(`{"status":"pending","payload":{"x":1}}`))
			errorBody(t, res, http.StatusUnauthorized, actionURI("alice", msg.ID, "secondary"))
			_, after := fetch(t, a, tn.Key, msg.TransactionID)
			// The accepted marks above set status done and result.type primary; the
			// refused one would have set pending, secondary and a payload.
			want := withAction(before, map[string]any{"status": "done", "buttons": fixtureButtons, "result": map[string]any{"type": "primary"}})
			if diff := cmp.Diff(want, after); diff != "" {
				t.Errorf("message after refused marks (-want +got):\n%s", diff)
			}
		})
		t.Run("authKeyNeverLogged", func(t *testing.T) {
			log := a.log.String()
			for _, key := range []string{tn.Key, revoked.Key, strings.ToUpper(tn.Key)} {
				if strings.Contains(log, key) {
					t.Errorf("the log holds an API key:\n%s", log)
				}
			}
		})
	})
}

func TestTenancy(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		in := newInbox(t, s)
		a := newAPI(t, s)
		t.Run("list", func(t *testing.T) {
			tests := []struct {
				name  string
				key   string
				query string
				want  []string
			}{
				{"list200OtherTenantSeesOnlyItsOwn", in.b.Key, "", []string{"b1"}},
				{"list200SharedSubscriberIdOnlyOwn", in.b.Key, "subscriberId=alice", []string{"b1"}},
				{"list200ForeignSubscriberIdEmpty", in.b.Key, "subscriberId=bob", []string{}},
				{"list200ForeignSubscriberIdWithChannelEmpty", in.b.Key, "subscriberId=bob&channel=sms", []string{}},
				{"list200SharedTransactionOnlyOwn", in.b.Key, "transactionId[]=t1&transactionId[]=t3", []string{"b1"}},
				{"list200ForeignChannelEmpty", in.b.Key, "channel=push", []string{}},
				{"list200OwnerDoesNotSeeOtherTenant", in.a.Key, "subscriberId=alice&transactionId=t1", []string{"m1"}},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					want := page{TotalCount: len(tt.want), Data: tt.want, PageSize: 10}
					if diff := cmp.Diff(want, list(t, a, tt.key, "/v1/messages?"+tt.query, in.names)); diff != "" {
						t.Errorf("(-want +got):\n%s", diff)
					}
				})
			}
		})
		t.Run("mark", func(t *testing.T) {
			for _, tt := range []struct {
				name, sub, message string
			}{
				{"mark404OtherTenantSharedSubscriberId", "alice", "m1"},
				{"mark404OtherTenantForeignSubscriberId", "bob", "m3"},
				{"mark404OtherTenantOwnSubscriberForeignMessage", "alice", "m6"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					m := in.msgs[tt.message]
					before := fetchID(t, a, in.a.Key, m.ID)
					uri := actionURI(tt.sub, m.ID, "primary")
					errorBody(t, a.post(t, in.b.Key, uri, `{"status":"done","payload":{"stolen":true}}`), http.StatusNotFound, uri)
					data := graphqlErrors(t, a, in.b.Key, `mutation($s: String!, $m: ID!) { markMessageAction(subscriberId: $s, messageId: $m, type: primary, status: done) { _id } }`,
						map[string]any{"s": tt.sub, "m": m.ID}, "NOT_FOUND")
					if data != "null" {
						t.Errorf("GraphQL data = %s, want null", data)
					}
					after := fetchID(t, a, in.a.Key, m.ID)
					if diff := cmp.Diff(before, after); diff != "" {
						t.Errorf("tenant a's message changed (-before +after):\n%s", diff)
					}
				})
			}
		})
		t.Run("graphql200ForeignSubscriberIdEmpty", func(t *testing.T) {
			got := graphqlData(t, a, in.b.Key, `{ messages(subscriberId: "bob") { totalCount data { _id } } }`, nil)
			want := map[string]any{"messages": map[string]any{"totalCount": 0.0, "data": []any{}}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	})
}

// graphqlErrors posts an operation that must fail with one error of the given code, and
// returns its data as raw JSON.
func graphqlErrors(t testing.TB, a *api, key, query string, variables map[string]any, code string) string {
	t.Helper()
	res := a.graphql(t, key, query, variables)
	var body struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Fatalf("GraphQL body: %v\n%s", err, res.body)
	}
	if len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != code {
		t.Errorf("errors = %s, want one with extensions.code %s", res.body, code)
	}
	return string(body.Data)
}
