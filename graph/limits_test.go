package graph_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/graph"
	"messages/models"
	"messages/models/dbtest"
)

// introspectionDepth returns a valid query nested exactly depth levels deep (depth >= 4),
// through introspection's ofType chain, the only part of the schema that nests freely.
func introspectionDepth(depth int) string {
	n := depth - 4
	return `{ __type(name: "Message") { fields { type { ` + strings.Repeat("ofType { ", n) + `name` + strings.Repeat(" }", n) + ` } } } }`
}

// introspectionDepthFragments nests like introspectionDepth, through a fragment spread
// and an inline fragment.
func introspectionDepthFragments(depth int) string {
	n := depth - 4
	return `{ __type(name: "Message") { ...F } } fragment F on __Type { fields { ... on __Field { type { ` +
		strings.Repeat("ofType { ", n) + `name` + strings.Repeat(" }", n) + ` } } } }`
}

// padded returns a valid query exactly size bytes long.
func padded(size int) string {
	q := `{ messages { totalCount } }`
	return q + strings.Repeat(" ", size-len(q))
}

// TestLimits sends abusive queries: each is refused with its code before it runs (no
// statement reaches the database, no data entry; 200 in application/json, as GraphQL
// over HTTP answers any refused document), and a query just inside each limit is answered.
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
		{"graph200DepthAtLimit", introspectionDepth(graph.DefaultLimits.Depth), nil, nil},
		{"graph200RefusedDepthOverLimit", introspectionDepth(graph.DefaultLimits.Depth + 1), nil,
			[]problem{{Code: "DEPTH_LIMIT_EXCEEDED"}}},
		{"graph200DepthThroughFragmentsAtLimit", introspectionDepthFragments(graph.DefaultLimits.Depth), nil, nil},
		{"graph200RefusedDepthThroughFragmentsOverLimit", introspectionDepthFragments(graph.DefaultLimits.Depth + 1), nil,
			[]problem{{Code: "DEPTH_LIMIT_EXCEEDED"}}},
		{"graph200QueryOfMaxSize", padded(graph.DefaultLimits.QueryBytes), nil, nil},
		{"graph200RefusedQueryTooLarge", padded(graph.DefaultLimits.QueryBytes + 1), nil,
			[]problem{{Code: "QUERY_TOO_LARGE"}}},
		{"graph200RefusedTooManyTokens", `{ messages { ` + strings.Repeat("p:page ", graph.DefaultLimits.Tokens/3+1) + `} }`, nil,
			[]problem{{Code: "GRAPHQL_PARSE_FAILED"}}},
	}
	dbtest.Each(t, func(t *testing.T, s *models.Store) {
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
	dbtest.Each(t, func(t *testing.T, s *models.Store) {
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
	dbtest.Each(t, func(t *testing.T, s *models.Store) {
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
