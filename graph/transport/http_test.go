package transport_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/graph/extension"
)

// Accept headers of the transport tests.
const (
	acceptJSON     = "application/json"
	acceptResponse = "application/graphql-response+json"
	acceptApollo   = "application/graphql-response+json,application/json;q=0.9"
)

// reply is an HTTP answer as the transport tests read it.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// send sends a request to endpoint: for POST, body as JSON; for GET, rawQuery as the
// URL's query. Headers are given in pairs.
func send(t testing.TB, method, endpoint, rawQuery, body string, header ...string) reply {
	t.Helper()
	u := endpoint
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
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
	return reply{status: res.StatusCode, header: res.Header, body: b}
}

// answer is what the transport tests compare of a reply.
type answer struct {
	Status       int
	ContentType  string
	CacheControl string
	Allow        string
	// HasData says whether the body has a data entry at all: a request error has none.
	HasData bool
	Codes   []string // extensions.code of each error
}

func (r reply) answer(t testing.TB) answer {
	t.Helper()
	var body struct {
		Errors []gqlError `json:"errors"`
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &entries); err != nil {
		t.Fatalf("body of %d is not a JSON object (%v): %s", r.status, err, r.body)
	}
	_ = json.Unmarshal(r.body, &body)
	_, hasData := entries["data"]
	a := answer{Status: r.status, ContentType: r.header.Get("Content-Type"), CacheControl: r.header.Get("Cache-Control"),
		Allow: r.header.Get("Allow"), HasData: hasData}
	for _, e := range body.Errors {
		code, _ := e.Extensions["code"].(string)
		a.Codes = append(a.Codes, code)
	}
	return a
}

// postBody is the JSON body of a POST with query and variables.
func postBody(query string, variables map[string]any) string {
	b, _ := json.Marshal(map[string]any{"query": query, "variables": variables})
	return string(b)
}

// TestTransportStatuses sends well-formed, refused and malformed requests with each
// Accept a client sends, and compares the status, media type and shape of each answer
// with what GraphQL over HTTP specifies: what GraphQL refuses (parse, validation,
// variable coercion, limits) is 200 in application/json and 400 in
// application/graphql-response+json, without data either way; what is not a GraphQL
// request at all is 400; a mutation over GET is 405.
func TestTransportStatuses(t *testing.T) {
	const (
		typename = `{"query":"{ __typename }"}`
		parse    = `{"query":"{"}`
		invalid  = `{"query":"{ noSuchField }"}`
	)
	coercion := postBody(`query($id: ID!) { __typename }`, map[string]any{"id": nil})
	tooDeep := postBody(introspectionDepth(extension.DefaultLimits.Depth+1), nil)
	ran := func(media, cache string) answer {
		return answer{Status: http.StatusOK, ContentType: media, CacheControl: cache, HasData: true}
	}
	refused := func(status int, media, cache string, codes ...string) answer {
		return answer{Status: status, ContentType: media, CacheControl: cache, Codes: codes}
	}
	const noStore, revalidate = "no-store", "private, no-cache"
	query := func(q string) string { return url.Values{"query": {q}}.Encode() }
	mutation := query(`mutation { __typename }`)

	tests := []struct {
		name   string
		method string
		accept string
		// body is a POST's body; rawQuery a GET's URL query.
		body, rawQuery string
		want           answer
	}{
		// Media types: application/json unless the client prefers the GraphQL one.
		{"post200AcceptJSON", http.MethodPost, acceptJSON, typename, "", ran(acceptJSON, noStore)},
		{"post200AcceptGraphQLResponse", http.MethodPost, acceptResponse, typename, "", ran(acceptResponse, noStore)},
		{"post200AcceptApolloDefaultIsGraphQLResponse", http.MethodPost, acceptApollo, typename, "", ran(acceptResponse, noStore)},
		{"post200AcceptAnyIsJSON", http.MethodPost, "*/*", typename, "", ran(acceptJSON, noStore)},
		{"post200AcceptApplicationAnyIsJSON", http.MethodPost, "application/*", typename, "", ran(acceptJSON, noStore)},
		{"post200NoAcceptIsJSON", http.MethodPost, "", typename, "", ran(acceptJSON, noStore)},
		{"post200AcceptNeitherIsJSON", http.MethodPost, "text/html", typename, "", ran(acceptJSON, noStore)},
		{"post200AcceptJSONPreferredByQuality", http.MethodPost, "application/graphql-response+json;q=0.5, application/json", typename, "", ran(acceptJSON, noStore)},
		{"post200AcceptGraphQLResponseOverAny", http.MethodPost, "*/*, application/graphql-response+json", typename, "", ran(acceptResponse, noStore)},
		{"post200AcceptGraphQLResponseRefusedByZeroQuality", http.MethodPost, "application/graphql-response+json;q=0, */*", typename, "", ran(acceptJSON, noStore)},

		// Refused by GraphQL before running: 200 in application/json, 400 in the GraphQL type.
		{"post200ParseErrorAcceptJSON", http.MethodPost, acceptJSON, parse, "", refused(http.StatusOK, acceptJSON, noStore, "GRAPHQL_PARSE_FAILED")},
		{"post200ParseErrorAcceptAny", http.MethodPost, "*/*", parse, "", refused(http.StatusOK, acceptJSON, noStore, "GRAPHQL_PARSE_FAILED")},
		{"post400ParseErrorAcceptGraphQLResponse", http.MethodPost, acceptResponse, parse, "", refused(http.StatusBadRequest, acceptResponse, noStore, "GRAPHQL_PARSE_FAILED")},
		{"post200ValidationErrorAcceptJSON", http.MethodPost, acceptJSON, invalid, "", refused(http.StatusOK, acceptJSON, noStore, "GRAPHQL_VALIDATION_FAILED")},
		{"post200ValidationErrorNoAccept", http.MethodPost, "", invalid, "", refused(http.StatusOK, acceptJSON, noStore, "GRAPHQL_VALIDATION_FAILED")},
		{"post400ValidationErrorAcceptGraphQLResponse", http.MethodPost, acceptResponse, invalid, "", refused(http.StatusBadRequest, acceptResponse, noStore, "GRAPHQL_VALIDATION_FAILED")},
		{"post400ValidationErrorAcceptApolloDefault", http.MethodPost, acceptApollo, invalid, "", refused(http.StatusBadRequest, acceptResponse, noStore, "GRAPHQL_VALIDATION_FAILED")},
		{"post200VariableCoercionErrorAcceptJSON", http.MethodPost, acceptJSON, coercion, "", refused(http.StatusOK, acceptJSON, noStore, "GRAPHQL_VALIDATION_FAILED")},
		{"post400VariableCoercionErrorAcceptGraphQLResponse", http.MethodPost, acceptResponse, coercion, "", refused(http.StatusBadRequest, acceptResponse, noStore, "GRAPHQL_VALIDATION_FAILED")},
		{"post200OverLimitAcceptJSON", http.MethodPost, acceptJSON, tooDeep, "", refused(http.StatusOK, acceptJSON, noStore, "DEPTH_LIMIT_EXCEEDED")},
		{"post400OverLimitAcceptGraphQLResponse", http.MethodPost, acceptResponse, tooDeep, "", refused(http.StatusBadRequest, acceptResponse, noStore, "DEPTH_LIMIT_EXCEEDED")},
		{"post200UnknownOperationNameAcceptJSON", http.MethodPost, acceptJSON, `{"query":"query A { __typename }","operationName":"B"}`, "", refused(http.StatusOK, acceptJSON, noStore, "GRAPHQL_VALIDATION_FAILED")},

		// Not a GraphQL request at all: 400 whatever the client accepts.
		{"post400MissingQueryAcceptJSON", http.MethodPost, acceptJSON, `{}`, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400MissingQueryAcceptGraphQLResponse", http.MethodPost, acceptResponse, `{}`, "", refused(http.StatusBadRequest, acceptResponse, noStore, "BAD_REQUEST")},
		{"post400MisspeltQuery", http.MethodPost, "", `{"qeury":"{ __typename }"}`, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400EmptyQuery", http.MethodPost, acceptJSON, `{"query":""}`, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400NullQuery", http.MethodPost, acceptJSON, `{"query":null}`, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400QueryNotString", http.MethodPost, acceptJSON, `{"query":1}`, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400OperationNameNotString", http.MethodPost, acceptJSON, `{"query":"{ __typename }","operationName":false}`, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400VariablesNotObject", http.MethodPost, acceptJSON, `{"query":"{ __typename }","variables":["x"]}`, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400ExtensionsNotObject", http.MethodPost, acceptJSON, `{"query":"{ __typename }","extensions":"x"}`, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400BodyArray", http.MethodPost, acceptJSON, `[{"query":"{ __typename }"}]`, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400BodyString", http.MethodPost, acceptResponse, `"{ __typename }"`, "", refused(http.StatusBadRequest, acceptResponse, noStore, "BAD_REQUEST")},
		{"post400BodyNull", http.MethodPost, acceptJSON, `null`, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400BodyTwoObjects", http.MethodPost, acceptJSON, typename + typename, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400BodyNotJSON", http.MethodPost, acceptJSON, `{"query":"{ __typename }"`, "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"post400BodyEmpty", http.MethodPost, acceptResponse, ``, "", refused(http.StatusBadRequest, acceptResponse, noStore, "BAD_REQUEST")},

		// GET: queries run and are revalidated; mutations are refused with 405.
		{"get200AcceptJSON", http.MethodGet, acceptJSON, "", query(`{ __typename }`), ran(acceptJSON, revalidate)},
		{"get200AcceptGraphQLResponse", http.MethodGet, acceptResponse, "", query(`{ __typename }`), ran(acceptResponse, revalidate)},
		{"get200VariablesAcceptJSON", http.MethodGet, acceptJSON, "",
			url.Values{"query": {`query($n: String!) { __type(name: $n) { name } }`}, "variables": {`{"n":"Message"}`}}.Encode(), ran(acceptJSON, revalidate)},
		{"get200ValidationErrorAcceptJSON", http.MethodGet, acceptJSON, "", query(`{ noSuchField }`), refused(http.StatusOK, acceptJSON, revalidate, "GRAPHQL_VALIDATION_FAILED")},
		{"get400ValidationErrorAcceptGraphQLResponse", http.MethodGet, acceptResponse, "", query(`{ noSuchField }`), refused(http.StatusBadRequest, acceptResponse, noStore, "GRAPHQL_VALIDATION_FAILED")},
		{"get400MissingQuery", http.MethodGet, acceptJSON, "", "", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"get400VariablesNotJSON", http.MethodGet, acceptJSON, "", query(`{ __typename }`) + "&variables=nope", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"get400ExtensionsNotObject", http.MethodGet, acceptJSON, "", query(`{ __typename }`) + "&extensions=%5B%5D", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"get400ParametersNotURLEncoded", http.MethodGet, acceptJSON, "", "query=%zz", refused(http.StatusBadRequest, acceptJSON, noStore, "BAD_REQUEST")},
		{"get405MutationAcceptJSON", http.MethodGet, acceptJSON, "", mutation,
			answer{Status: http.StatusMethodNotAllowed, ContentType: acceptJSON, CacheControl: noStore, Allow: http.MethodPost, Codes: []string{"BAD_REQUEST"}}},
		{"get405MutationAcceptGraphQLResponse", http.MethodGet, acceptResponse, "", mutation,
			answer{Status: http.StatusMethodNotAllowed, ContentType: acceptResponse, CacheControl: noStore, Allow: http.MethodPost, Codes: []string{"BAD_REQUEST"}}},
	}
	endpoint := serve(t, newStub().handler())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var header []string
			if tt.accept != "" {
				header = []string{"Accept", tt.accept}
			}
			r := send(t, tt.method, endpoint, tt.rawQuery, tt.body, header...)
			if diff := cmp.Diff(tt.want, r.answer(t)); diff != "" {
				t.Errorf("answer (-want +got):\n%s\n%.1000s", diff, r.body)
			}
		})
	}
}

// TestTransportEchoesNothing: an undecodable body is refused without any of its text in
// the answer.
func TestTransportEchoesNothing(t *testing.T) {
	endpoint := serve(t, newStub().handler())
	for _, body := range []string{`{"query": "<script>secret`, `["<script>secret"]`, `{"query":"{ __typename }","variables":"<script>secret"}`} {
		r := send(t, http.MethodPost, endpoint, "", body)
		if r.status != http.StatusBadRequest || strings.Contains(string(r.body), "secret") {
			t.Errorf("%s: answered %d %s, want 400 without the body's text", body, r.status, r.body)
		}
	}
}

// TestTransportBodyTooLarge: a body over the limit the edge sets (http.MaxBytesHandler)
// is 413, not a JSON syntax error.
func TestTransportBodyTooLarge(t *testing.T) {
	endpoint := serve(t, http.MaxBytesHandler(newStub().handler(), 1<<10))
	r := send(t, http.MethodPost, endpoint, "", postBody(`{ __typename }`+strings.Repeat(" ", 2<<10), nil), "Accept", acceptJSON)
	want := answer{Status: http.StatusRequestEntityTooLarge, ContentType: acceptJSON, CacheControl: "no-store", Codes: []string{"BAD_REQUEST"}}
	if diff := cmp.Diff(want, r.answer(t)); diff != "" {
		t.Errorf("answer (-want +got):\n%s\n%.1000s", diff, r.body)
	}
}

// introspectionDepth returns a valid query nested exactly depth levels deep (depth >= 4),
// through introspection's ofType chain, which nests freely in any schema.
func introspectionDepth(depth int) string {
	n := depth - 4
	return `{ __type(name: "Query") { fields { type { ` + strings.Repeat("ofType { ", n) + `name` + strings.Repeat(" }", n) + ` } } } }`
}

// gqlError is what the tests read of a GraphQL error.
type gqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}
