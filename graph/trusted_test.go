package graph_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/graph"
	"messages/graph/extension"
	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// The documents the trusted-document tests trust: the inbox page, named by Relay's MD5
// id, and a mutation, by its SHA-256 (Apollo's and GraphQL Code Generator's id).
const (
	trustedInbox    = `query Inbox($sub: String) { messages(subscriberId: $sub, limit: 5) { totalCount data { _id read } } }`
	trustedMark     = `mutation Seen($sub: String!, $id: ID!) { markMessageAction(subscriberId: $sub, messageId: $id, type: primary, status: done) { _id } }`
	untrustedText   = `{ messages(limit: 1) { totalCount } }`
	trustedTextOnly = `query Count { messages { totalCount } }`
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// trustedFixture is the graph fixture with the documents above trusted, and one handler
// per mode, each served to an API key and to a session of sub-alice.
type trustedFixture struct {
	*graphFixture
	s   *store.Store
	set *extension.TrustedSet
}

func newTrustedFixture(t *testing.T, s *store.Store) *trustedFixture {
	t.Helper()
	f := &trustedFixture{graphFixture: newGraphFixture(t, s), s: s, set: graph.NewTrustedSet(s, discard)}
	docs := []models.TrustedDocument{
		{ID: md5Hex(trustedInbox), SHA256: sha256Hex(trustedInbox), Body: trustedInbox, OperationName: "Inbox"},
		{ID: sha256Hex(trustedMark), SHA256: sha256Hex(trustedMark), Body: trustedMark, OperationName: "Seen"},
		{ID: sha256Hex(trustedTextOnly), SHA256: sha256Hex(trustedTextOnly), Body: trustedTextOnly, OperationName: "Count"},
	}
	if _, err := s.TrustDocuments(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	if err := f.set.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f
}

// endpoints serves a handler in mode to the API key of tenant A and to a session of
// sub-alice.
func (f *trustedFixture) endpoints(t *testing.T, mode extension.TrustedMode) (key, session string) {
	o := defaults
	o.TrustedDocuments, o.Trusted = f.set, mode
	h := newHandler(f.s, discard, o)
	c := f.a.Caller
	c.SubscriberID = "sub-alice"
	return serve(t, h, f.a), serve(t, h, &dbtest.Tenant{Env: f.a.Env, Caller: c})
}

// send posts body as JSON.
func send(t testing.TB, endpoint string, body map[string]any) response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(endpoint, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return read(t, res)
}

func apolloHash(hash string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
}

// Each request shape, in each mode, as an API key and as a session: a known id is
// answered with its document, an unknown one is one PERSISTED_QUERY_NOT_FOUND and no data,
// and in require a session's text runs only when it is a trusted document's.
func TestTrustedDocumentsModes(t *testing.T) {
	vars := map[string]any{"sub": "sub-alice"}
	shapes := []struct {
		name string
		body map[string]any
	}{
		{"sha256Id", map[string]any{"documentId": "sha256:" + sha256Hex(trustedInbox), "variables": vars}},
		{"relayId", map[string]any{"documentId": md5Hex(trustedInbox), "variables": vars}},
		{"apolloHash", map[string]any{"extensions": apolloHash(sha256Hex(trustedInbox)), "variables": vars}},
		{"apolloHashWithText", map[string]any{"query": trustedInbox, "extensions": apolloHash(sha256Hex(trustedInbox)), "variables": vars}},
		{"trustedText", map[string]any{"query": trustedTextOnly}},
		{"untrustedText", map[string]any{"query": untrustedText}},
		{"unknownId", map[string]any{"documentId": "sha256:" + sha256Hex(untrustedText)}},
		{"unknownCustomId", map[string]any{"documentId": "inbox-v1"}},
		{"unknownApolloHash", map[string]any{"extensions": apolloHash(sha256Hex(untrustedText))}},
		{"idAndText", map[string]any{"documentId": md5Hex(trustedInbox), "query": trustedInbox}},
	}
	const ok = ""
	// want[mode][shape] is the code for an API key and for a session ("": answered).
	want := map[extension.TrustedMode]map[string][2]string{
		extension.TrustedOff: {
			"sha256Id": {"PERSISTED_QUERY_NOT_SUPPORTED", "PERSISTED_QUERY_NOT_SUPPORTED"}, "relayId": {"PERSISTED_QUERY_NOT_SUPPORTED", "PERSISTED_QUERY_NOT_SUPPORTED"},
			// gqlgen's automatic persisted queries: a hash it was never sent.
			"apolloHash": {"PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"}, "apolloHashWithText": {ok, ok},
			"trustedText": {ok, ok}, "untrustedText": {ok, ok},
			"unknownId": {"PERSISTED_QUERY_NOT_SUPPORTED", "PERSISTED_QUERY_NOT_SUPPORTED"}, "unknownCustomId": {"PERSISTED_QUERY_NOT_SUPPORTED", "PERSISTED_QUERY_NOT_SUPPORTED"},
			"unknownApolloHash": {"PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"},
			"idAndText":         {"PERSISTED_QUERY_NOT_SUPPORTED", "PERSISTED_QUERY_NOT_SUPPORTED"},
		},
		extension.TrustedAllow: {
			"sha256Id": {ok, ok}, "relayId": {ok, ok}, "apolloHash": {ok, ok}, "apolloHashWithText": {ok, ok},
			"trustedText": {ok, ok}, "untrustedText": {ok, ok},
			"unknownId": {"PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"}, "unknownCustomId": {"PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"},
			"unknownApolloHash": {"PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"},
			"idAndText":         {"BAD_REQUEST", "BAD_REQUEST"},
		},
		extension.TrustedRequire: {
			"sha256Id": {ok, ok}, "relayId": {ok, ok}, "apolloHash": {ok, ok}, "apolloHashWithText": {ok, ok},
			"trustedText": {ok, ok}, "untrustedText": {ok, "PERSISTED_QUERY_NOT_IN_LIST"},
			"unknownId": {"PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"}, "unknownCustomId": {"PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"},
			"unknownApolloHash": {"PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_FOUND"},
			"idAndText":         {"BAD_REQUEST", "BAD_REQUEST"},
		},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newTrustedFixture(t, s)
		for _, mode := range []extension.TrustedMode{extension.TrustedOff, extension.TrustedAllow, extension.TrustedRequire} {
			key, session := f.endpoints(t, mode)
			for _, sh := range shapes {
				for i, endpoint := range []string{key, session} {
					who := [2]string{"apiKey", "session"}[i]
					t.Run(mode.String()+"/"+sh.name+"/"+who, func(t *testing.T) {
						code := want[mode][sh.name][i]
						res := send(t, endpoint, sh.body)
						if res.Status != http.StatusOK {
							t.Errorf("status %d, want 200 (application/json)", res.Status)
						}
						if code == ok {
							if len(res.Errors) > 0 || res.dataIsNull() {
								t.Fatalf("refused: %s", res.Body)
							}
							return
						}
						if diff := cmp.Diff([]problem{{Code: code}}, problems(res)); diff != "" {
							t.Errorf("errors (-want +got):\n%s\n%s", diff, res.Body)
						}
						if res.Data != nil {
							t.Errorf("data %s of a refused request", res.Data)
						}
					})
				}
			}
		}
	})
}

// A documentId over GET runs a query and refuses a mutation with 405 (a GET must not
// change anything), the same as a mutation's text over GET; in graphql-response+json an
// unknown id is a 400.
func TestTrustedDocumentsOverGET(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newTrustedFixture(t, s)
		_, session := f.endpoints(t, extension.TrustedRequire)
		getID := func(t *testing.T, id string, accept string) response {
			t.Helper()
			req, err := http.NewRequest(http.MethodGet, session+"?"+url.Values{"documentId": {id}, "variables": {`{"sub":"sub-alice","id":"x"}`}}.Encode(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return read(t, res)
		}
		t.Run("get200QueryById", func(t *testing.T) {
			var data struct{ Messages page }
			res := getID(t, "sha256:"+sha256Hex(trustedInbox), "")
			decode(t, res, &data)
			if data.Messages.TotalCount != 6 {
				t.Errorf("totalCount %d, want sub-alice's 6: %s", data.Messages.TotalCount, res.Body)
			}
		})
		t.Run("get405MutationById", func(t *testing.T) {
			res := getID(t, sha256Hex(trustedMark), "")
			if res.Status != http.StatusMethodNotAllowed || res.Data != nil {
				t.Errorf("status %d data %s, want 405 without data: %s", res.Status, res.Data, res.Body)
			}
		})
		t.Run("get400UnknownIdGraphQLResponse", func(t *testing.T) {
			res := getID(t, "sha256:"+sha256Hex(untrustedText), "application/graphql-response+json")
			if diff := cmp.Diff([]problem{{Code: "PERSISTED_QUERY_NOT_FOUND"}}, problems(res)); diff != "" || res.Status != http.StatusBadRequest {
				t.Errorf("status %d (want 400), errors (-want +got):\n%s", res.Status, diff)
			}
		})
	})
}

// What documents add and remove change reaches a running handler at its set's next
// refresh, without a restart; a removed document is then an unknown id.
func TestTrustedDocumentsRefresh(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newTrustedFixture(t, s)
		_, session := f.endpoints(t, extension.TrustedRequire)
		ctx := context.Background()
		byID := map[string]any{"documentId": "sha256:" + sha256Hex(untrustedText)}
		if got := problems(send(t, session, byID)); len(got) != 1 || got[0].Code != "PERSISTED_QUERY_NOT_FOUND" {
			t.Fatalf("before: %v", got)
		}
		if _, err := s.TrustDocuments(ctx, []models.TrustedDocument{{ID: "count-v1", SHA256: sha256Hex(untrustedText), Body: untrustedText}}); err != nil {
			t.Fatal(err)
		}
		if err := f.set.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		for _, body := range []map[string]any{byID, {"documentId": "count-v1"}, {"query": untrustedText}} {
			if res := send(t, session, body); len(res.Errors) > 0 || res.dataIsNull() {
				t.Errorf("after add, %v: %s", body, res.Body)
			}
		}
		if n, err := s.RemoveTrustedDocument(ctx, "count-v1"); err != nil || n != 1 {
			t.Fatalf("remove: %d, %v", n, err)
		}
		if err := f.set.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if got := problems(send(t, session, map[string]any{"documentId": "count-v1"})); len(got) != 1 || got[0].Code != "PERSISTED_QUERY_NOT_FOUND" {
			t.Errorf("after remove: %v", got)
		}
	})
}

// The documents are global, and tenancy is the caller's: one trusted document run by id
// by each environment's key reads that environment's messages only.
func TestTrustedDocumentsTenancy(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newTrustedFixture(t, s)
		o := defaults
		o.TrustedDocuments, o.Trusted = f.set, extension.TrustedRequire
		h := newHandler(s, discard, o)
		body := map[string]any{"documentId": md5Hex(trustedInbox), "variables": map[string]any{"sub": "sub-alice"}}
		for _, tt := range []struct {
			name   string
			tenant *dbtest.Tenant
			want   int
		}{{"tenantA", f.a, 6}, {"tenantB", f.b, 1}} {
			var data struct{ Messages page }
			decode(t, send(t, serve(t, h, tt.tenant), body), &data)
			if data.Messages.TotalCount != tt.want {
				t.Errorf("%s: sub-alice's totalCount %d, want %d", tt.name, data.Messages.TotalCount, tt.want)
			}
		}
	})
}
