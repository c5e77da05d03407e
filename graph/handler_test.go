package graph_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/graph"
	"messages/models/dbtest"
	"messages/models/store"
)

// introspectionDepth returns a valid query nested exactly depth levels deep (depth >= 4),
// through introspection's ofType chain, the only part of the schema that nests freely.
func introspectionDepth(depth int) string {
	n := depth - 4
	return `{ __type(name: "Message") { fields { type { ` + strings.Repeat("ofType { ", n) + `name` + strings.Repeat(" }", n) + ` } } } }`
}

// padded returns a valid query exactly size bytes long.
func padded(size int) string {
	q := `{ messages { totalCount } }`
	return q + strings.Repeat(" ", size-len(q))
}

// TestLimits sends abusive queries through the handler, which gives the limits to the
// extensions (package extension tests each limit) and costs fields with the schema's own
// complexity functions: each is refused with its code before it runs (no statement
// reaches the database, no data entry; 200 in application/json, as GraphQL over HTTP
// answers any refused document), and a query just inside the limits is answered.
func TestLimits(t *testing.T) {
	every := func(alias string) string {
		return alias + `: messages(limit: 1000) { totalCount hasMore pageSize page data { ` + messageFields + ` } }`
	}
	tests := []struct {
		name      string
		query     string
		variables map[string]any
		want      []problem // nil: answered without errors
	}{
		{"graph200FullPageOfEveryField", `{ ` + every("a") + ` }` + stepFields, nil, nil},
		{"graph200RefusedComplexityOfAliases", `{ ` + every("a") + ` ` + every("b") + ` ` + every("c") + ` }` + stepFields, nil,
			[]problem{{Code: "COMPLEXITY_LIMIT_EXCEEDED"}}},
		{"graph200RefusedComplexityThroughVariables", `query($l: Int) { ` + strings.ReplaceAll(every("a")+" "+every("b")+" "+every("c"), "limit: 1000", "limit: $l") + ` }` + stepFields,
			map[string]any{"l": 1000}, []problem{{Code: "COMPLEXITY_LIMIT_EXCEEDED"}}},
		{"graph200RefusedDepthOverLimit", introspectionDepth(graph.DefaultLimits.Depth + 1), nil,
			[]problem{{Code: "DEPTH_LIMIT_EXCEEDED"}}},
		{"graph200RefusedTooManyTokens", spreads((graph.DefaultLimits.Tokens-15)/2 + 1), nil,
			[]problem{{Code: "TOKEN_LIMIT_EXCEEDED"}}},
		// At the limit the count admits the document, and the validator lists the first of
		// its unknown fields, not all of them.
		{"graph200SelectionsAtLimitErrorsCapped", `{ messages { data { ` + unknownFields(graph.DefaultLimits.Selections-2) + `} } }`, nil,
			append(slices.Repeat([]problem{{Code: "GRAPHQL_VALIDATION_FAILED"}}, 20), problem{Code: "TOO_MANY_ERRORS"})},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		log := dbtest.RecordStatements(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				log.Take()
				res := post(t, endpoint, tt.query, tt.variables)
				if tt.want == nil {
					if len(res.Errors) > 0 || res.dataIsNull() {
						t.Fatalf("query refused: %s", res.Body)
					}
					return
				}
				if diff := cmp.Diff(tt.want, problems(res)); diff != "" {
					t.Errorf("errors (-want +got):\n%s\n%.2000s", diff, res.Body)
				}
				if res.Status != http.StatusOK || res.Data != nil {
					t.Errorf("answered %d with data %.200s, want 200 and no data entry", res.Status, res.Data)
				}
				if n := len(log.Take()); n != 0 {
					t.Errorf("a refused query ran %d statements, want none", n)
				}
			})
		}
	})
}

// spreads returns a valid query spreading a fragment n times.
func spreads(n int) string {
	return `{ messages { data { ` + strings.Repeat("...F ", n) + `} } } fragment F on Message { _id }`
}

// unknownFields returns n distinct field names no type has.
func unknownFields(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "f%d ", i)
	}
	return b.String()
}

// TestIntrospection: the handler answers introspection only when its option is on; off,
// the refusal reads as policy, not as an internal error, and is not logged.
func TestIntrospection(t *testing.T) {
	tests := []struct {
		name          string
		introspection bool
		query         string
		refused       bool
	}{
		{"graph200SchemaWhenOn", true, `{ __schema { queryType { name } } }`, false},
		{"graph200TypeWhenOn", true, `{ __type(name: "Message") { name } }`, false},
		{"graph200TypenameWhenOff", false, `{ __typename }`, false},
		{"graphRefusedSchemaWhenOff", false, `{ __schema { queryType { name } } }`, true},
		{"graphRefusedTypeWhenOff", false, `{ __type(name: "Message") { name } }`, true},
		{"graphRefusedSchemaBesideDataWhenOff", false, `{ messages { totalCount } __schema { types { name } } }`, true},
		{"graphRefusedSchemaThroughFragmentWhenOff", false, `{ ...Q } fragment Q on Query { ... on Query { __schema { queryType { name } } } }`, true},
	}
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		var logs lockedBuffer
		endpoints := map[bool]string{
			true:  serve(t, newHandler(s, discard, defaults), tn),
			false: serve(t, newHandler(s, slogTo(&logs), graph.HandlerOptions{Introspection: false, Limits: graph.DefaultLimits}), tn),
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := post(t, endpoints[tt.introspection], tt.query, nil)
				if !tt.refused {
					if len(res.Errors) > 0 {
						t.Fatalf("query refused: %s", res.Body)
					}
					return
				}
				if len(res.Errors) == 0 {
					t.Fatalf("introspection answered while off: %s", res.Body)
				}
				if strings.Contains(res.Body, `"Message"`) || strings.Contains(res.Body, `"Query"`) {
					t.Errorf("response reveals the schema: %s", res.Body)
				}
				// Refusing introspection is policy, not a fault: it must not be reported
				// (or logged) as an internal error.
				for _, e := range res.Errors {
					if e.Extensions["code"] == "INTERNAL_SERVER_ERROR" || !strings.Contains(strings.ToLower(e.Message), "introspection") {
						t.Errorf("refusal reads as %q (code %v), want a message about introspection and a client error code", e.Message, e.Extensions["code"])
					}
				}
			})
		}
		if logs.String() != "" {
			t.Errorf("refused introspection was logged as an error:\n%s", logs.String())
		}
	})
}

func TestGet(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)

		t.Run("graph200QueryOverGet", func(t *testing.T) {
			query := `{ messages(limit: 2) { ` + pageFields + ` } }`
			res := get(t, endpoint, query)
			if res.Status != http.StatusOK {
				t.Errorf("status = %d, want 200", res.Status)
			}
			var got, viaPost struct{ Messages page }
			decode(t, res, &got)
			decode(t, post(t, endpoint, query, nil), &viaPost)
			want := pageSummary{Names: []string{"g12", "g11"}, TotalCount: 12, HasMore: true, PageSize: 2}
			if diff := cmp.Diff(want, f.summarize(got.Messages)); diff != "" {
				t.Errorf("page (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(viaPost, got); diff != "" {
				t.Errorf("GET and POST differ (-POST +GET):\n%s", diff)
			}
		})

		t.Run("graph405MutationOverGet", func(t *testing.T) {
			g1 := f.msgs["g1"]
			before := dbtest.LoadMessage(t, s, g1.ID)
			res := get(t, endpoint, fmt.Sprintf(`mutation { markMessageAction(subscriberId: "sub-alice", messageId: %q, type: secondary, status: done, payload: {x: 1}) { _id } }`, g1.ID))
			if res.Status != http.StatusMethodNotAllowed {
				t.Errorf("status = %d, want 405", res.Status)
			}
			if len(res.Errors) == 0 || res.Data != nil {
				t.Errorf("want errors and no data entry, got %s", res.Body)
			}
			if diff := cmp.Diff(before, dbtest.LoadMessage(t, s, g1.ID), timeEqual); diff != "" {
				t.Errorf("a mutation over GET changed the message (-before +after):\n%s", diff)
			}
		})
	})
}

// TestPersistedQueries: Apollo's automatic persisted queries work through the handler: an
// unsupported version is a bad request, an unknown hash is refused as GraphQL refuses (200
// in application/json, so the client sends the query with its hash), which is then known
// by its hash alone.
func TestPersistedQueries(t *testing.T) {
	const query = `{ messages(limit: 1) { pageSize } }`
	sum := sha256.Sum256([]byte(query))
	hash := hex.EncodeToString(sum[:])
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		endpoint := serve(t, newHandler(s, discard, defaults), dbtest.NewTenant(t, s, "a"))
		steps := []struct {
			name    string
			query   string
			version int
			hash    string
			want    []problem
		}{
			{"apq200UnsupportedVersionBadRequest", "", 2, "00", []problem{{Code: "BAD_REQUEST"}}},
			{"apq200UnknownHashNotFound", "", 1, hash, []problem{{Code: "PERSISTED_QUERY_NOT_FOUND"}}},
			{"apq200QueryWithHash", query, 1, hash, []problem{}},
			{"apq200KnownHashAlone", "", 1, hash, []problem{}},
		}
		for _, st := range steps {
			res := persisted(t, endpoint, st.query, st.version, st.hash)
			if diff := cmp.Diff(st.want, problems(res)); diff != "" {
				t.Errorf("%s: errors (-want +got):\n%s\n%.1000s", st.name, diff, res.Body)
			}
			if ran := len(st.want) == 0; res.Status != http.StatusOK || ran == (res.Data == nil) {
				t.Errorf("%s: answered %d with data %.200s; want 200, with data only when it ran", st.name, res.Status, res.Data)
			}
		}
	})
}

// persisted posts a persisted query: its hash in the given version of the protocol, and
// the document unless query is empty.
func persisted(t testing.TB, endpoint, query string, version int, hash string) response {
	t.Helper()
	body := map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": version, "sha256Hash": hash}}}
	if query != "" {
		body["query"] = query
	}
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

// A persisted query is registered only within the limits: a document over them, sent
// with its hash, is refused and its hash stays unknown.
func TestPersistedQueryWithinLimits(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		f := newGraphFixture(t, s)
		endpoint := serve(t, newHandler(s, discard, defaults), f.a)
		send := func(t *testing.T, query, hash string) response {
			t.Helper()
			return persisted(t, endpoint, query, 1, hash)
		}
		for name, tt := range map[string]struct {
			query string
			code  string
		}{
			"graph200RefusedOverSizeNotRegistered":   {padded(graph.DefaultLimits.QueryBytes + 1), "QUERY_TOO_LARGE"},
			"graph200RefusedOverTokensNotRegistered": {spreads(graph.DefaultLimits.Tokens), "TOKEN_LIMIT_EXCEEDED"},
		} {
			t.Run(name, func(t *testing.T) {
				sum := sha256.Sum256([]byte(tt.query))
				hash := hex.EncodeToString(sum[:])
				if diff := cmp.Diff([]problem{{Code: tt.code}}, problems(send(t, tt.query, hash))); diff != "" {
					t.Errorf("with the document (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]problem{{Code: "PERSISTED_QUERY_NOT_FOUND"}}, problems(send(t, "", hash))); diff != "" {
					t.Errorf("by its hash afterwards (-want +got):\n%s", diff)
				}
			})
		}
		t.Run("graph200WithinLimitsRegistered", func(t *testing.T) {
			query := `{ messages { totalCount } }`
			sum := sha256.Sum256([]byte(query))
			hash := hex.EncodeToString(sum[:])
			if res := send(t, query, hash); len(res.Errors) > 0 {
				t.Fatalf("registering: %s", res.Body)
			}
			if res := send(t, "", hash); len(res.Errors) > 0 || res.dataIsNull() {
				t.Errorf("by its hash: %s", res.Body)
			}
		})
	})
}

// Validation errors name the fields a client may have meant only when suggestions are on
// (development): in production they would map the schema for anyone.
func TestSuggestions(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		tn := dbtest.NewTenant(t, s, "a")
		for _, on := range []bool{true, false} {
			endpoint := serve(t, newHandler(s, discard, graph.HandlerOptions{Suggestions: on, Limits: graph.DefaultLimits}), tn)
			res := post(t, endpoint, `{ message { totalCount } }`, nil)
			if len(res.Errors) != 1 {
				t.Fatalf("suggestions %v: %s", on, res.Body)
			}
			if got := strings.Contains(res.Errors[0].Message, "Did you mean"); got != on {
				t.Errorf("suggestions %v: message %q", on, res.Errors[0].Message)
			}
		}
	})
}
