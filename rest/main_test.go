package rest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"messages/graph"
	"messages/models/session"
	"messages/models/store"
	"messages/rest"
)

// clock is the fixed time of every test server, so error timestamps compare exactly.
var clock = time.Date(2025, 3, 1, 9, 30, 15, 250_000_000, time.UTC)

// clockText is clock in the wire form.
const clockText = "2025-03-01T09:30:15.250Z"

// api is the production routes (/v1 and /graphql) served on a real port over one store.
type api struct {
	srv   *httptest.Server
	store *store.Store
	log   *logBuffer
}

// newAPI wires the routes through the edge as cmd/server does and serves them until the
// test ends.
func newAPI(t testing.TB, s *store.Store) *api {
	t.Helper()
	return newChainAPI(t, s, rest.ChainOptions{GraphQL: graph.HandlerOptions{Introspection: true, Limits: graph.DefaultLimits}})
}

// newChainAPI serves rest.Chain with o over s, on the fixed clock, logging to the api's
// log, until the test ends.
func newChainAPI(t testing.TB, s *store.Store, o rest.ChainOptions) *api {
	t.Helper()
	log := &logBuffer{}
	now := func() time.Time { return clock }
	sessions, err := session.NewSigner(now, []byte("rest-test-session-secret-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	res := rest.NewBackend(s, slog.New(slog.NewTextHandler(log, nil)), now, sessions)
	srv := httptest.NewServer(rest.Chain(res, o))
	t.Cleanup(srv.Close)
	return &api{srv: srv, store: s, log: log}
}

// logBuffer collects the server's log for assertions; handlers write from many goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// response is what a request got back.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with the given Authorization header value (none when empty) and
// returns the response. uri is sent as written, so query encodings reach the server raw.
// Every /v1 exchange is validated against the OpenAPI document.
func (a *api) do(t testing.TB, method, uri, auth string, header http.Header, body io.Reader) response {
	t.Helper()
	var sent []byte
	if body != nil {
		var err error
		if sent, err = io.ReadAll(body); err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(sent)
	}
	req, err := http.NewRequest(method, a.srv.URL+uri, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
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
	if err := rest.ValidateExchange(rest.Exchange{Method: method, URI: uri, Header: req.Header, Body: sent,
		Status: res.StatusCode, ResponseHeader: res.Header, ResponseBody: b}); err != nil {
		t.Errorf("%s %s, answered %d, does not match the OpenAPI document: %v", method, uri, res.StatusCode, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// get sends GET uri with the tenant key.
func (a *api) get(t testing.TB, key, uri string) response {
	t.Helper()
	return a.do(t, http.MethodGet, uri, "ApiKey "+key, nil, nil)
}

// post sends POST uri with the tenant key and a JSON body.
func (a *api) post(t testing.TB, key, uri, body string) response {
	t.Helper()
	return a.do(t, http.MethodPost, uri, "ApiKey "+key, http.Header{"Content-Type": {"application/json"}}, strings.NewReader(body))
}

// graphql posts a GraphQL operation with the tenant key.
func (a *api) graphql(t testing.TB, key, query string, variables map[string]any) response {
	t.Helper()
	b, err := json.Marshal(map[string]any{"query": query, "variables": variables})
	if err != nil {
		t.Fatal(err)
	}
	return a.do(t, http.MethodPost, "/graphql", "ApiKey "+key, http.Header{"Content-Type": {"application/json"}}, bytes.NewReader(b))
}

// decode parses a JSON body into generic values, failing on anything else.
func decode(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, body)
	}
	return v
}

// topKeys returns the keys of a JSON object in the order they appear in the raw bytes.
func topKeys(t testing.TB, body []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("body is not a JSON object: %s", body)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// keysOf returns the sorted keys of a decoded JSON object.
func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sorted returns a sorted copy of keys.
func sorted(keys ...string) []string {
	out := append([]string(nil), keys...)
	sort.Strings(out)
	return out
}

// nulls returns the JSON paths of every null in v.
func nulls(v any, path string) []string {
	var out []string
	switch x := v.(type) {
	case nil:
		out = append(out, path)
	case map[string]any:
		for k, e := range x {
			out = append(out, nulls(e, path+"."+k)...)
		}
	case []any:
		for i, e := range x {
			out = append(out, nulls(e, path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return out
}

// noNulls fails when a response body holds null anywhere: the TypeScript SDK rejects it.
func noNulls(t testing.TB, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	if n := nulls(v, "$"); len(n) > 0 {
		sort.Strings(n)
		t.Errorf("body holds null at %v", n)
	}
}

var idPattern = regexp.MustCompile(`^[0-9a-f]{24}$`)

// errorBody checks res is the documented error body for status at path and returns it
// decoded. 422 must carry errors by field and 500 an errorId; nothing else may.
func errorBody(t testing.TB, res response, status int, path string) map[string]any {
	t.Helper()
	if res.status != status {
		t.Fatalf("status = %d, want %d; body %s", res.status, status, res.body)
	}
	if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	noNulls(t, res.body)
	body := decode(t, res.body)
	wantKeys := []string{"statusCode", "timestamp", "path", "message", "error"}
	switch status {
	case http.StatusUnprocessableEntity:
		wantKeys = append(wantKeys, "errors")
	case http.StatusInternalServerError:
		wantKeys = append(wantKeys, "errorId")
	}
	if diff := cmp.Diff(sorted(wantKeys...), keysOf(body)); diff != "" {
		t.Errorf("error body keys (-want +got):\n%s\nbody %s", diff, res.body)
	}
	want := map[string]any{
		"statusCode": float64(status),
		"timestamp":  clockText,
		"path":       quotedPath(path),
		"error":      http.StatusText(status),
	}
	got := map[string]any{}
	for k := range want {
		got[k] = body[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error body (-want +got):\n%s", diff)
	}
	if msg, _ := body["message"].(string); msg == "" {
		t.Errorf("error body has no message: %s", res.body)
	}
	return body
}

// fieldError checks a 422 body names exactly one offending field with the value given,
// and that its message is the body's message.
func fieldError(t testing.TB, body map[string]any, field string, value any) {
	t.Helper()
	want := map[string]any{field: map[string]any{"messages": []any{body["message"]}, "value": value}}
	if diff := cmp.Diff(want, body["errors"]); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// quotedPath is how an error body quotes a request's URI: its first 200 bytes and an
// ellipsis when it is longer.
func quotedPath(uri string) string {
	if len(uri) <= 200 {
		return uri
	}
	return uri[:200] + "…"
}
