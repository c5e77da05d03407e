package edge_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"messages/cmd/server/edge"
	"messages/rest"
)

// hygieneEdge is the edge of a server with one mount at /m/ that takes the key "good",
// and the documented error body everywhere.
func hygieneEdge(origins func(string) bool, inner http.Handler) http.Handler {
	errs := rest.NewErrorWriter(slog.New(slog.DiscardHandler), time.Now)
	e := edge.New(edge.Options{Logger: slog.New(slog.DiscardHandler), Now: time.Now, Auth: keys{}, Errors: errs, Origins: origins})
	mux := http.NewServeMux()
	mux.Handle("/m/", e.API(edge.Mount{Errors: errs.WithErrors(func(error) any { return []string{"mount"} })}, inner))
	mux.Handle("/", inner)
	return e.Around(mux, mux)
}

// serve sends req through h and returns the answer and its documented error body, if any.
func serve(t *testing.T, h http.Handler, req *http.Request) (*httptest.ResponseRecorder, rest.ErrorBody) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var body rest.ErrorBody
	if rec.Code >= 400 {
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%d: body is not the error body (%v): %.300s", rec.Code, err, rec.Body.String())
		}
	}
	return rec, body
}

// noContent answers 204: the request passed every guard.
var noContent = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })

// A URI over MaxURIBytes is 414 with a short body that quotes the path's start only; one
// at the limit passes.
func TestURILimit(t *testing.T) {
	h := hygieneEdge(nil, noContent)
	at := "/x?q=" + strings.Repeat("a", edge.MaxURIBytes-len("/x?q="))
	if rec, _ := serve(t, h, httptest.NewRequest(http.MethodGet, at, nil)); rec.Code != http.StatusNoContent {
		t.Errorf("URI of MaxURIBytes: %d, want it served", rec.Code)
	}
	for name, uri := range map[string]string{
		"uri414LongQuery": at + "a",
		"uri414LongPath":  "/" + strings.Repeat("é", edge.MaxURIBytes),
	} {
		t.Run(name, func(t *testing.T) {
			rec, body := serve(t, h, httptest.NewRequest(http.MethodGet, uri, nil))
			if rec.Code != http.StatusRequestURITooLong || body.StatusCode != http.StatusRequestURITooLong || body.Message == "" {
				t.Fatalf("%d %.300s, want 414 with the error body", rec.Code, rec.Body.String())
			}
			if rec.Body.Len() > 1<<10 || strings.Contains(body.Message, "aaaa") || strings.Contains(body.Message, "é") {
				t.Errorf("body of %d bytes echoes the URI: %.1200s", rec.Body.Len(), rec.Body.String())
			}
		})
	}
}

func TestShorten(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"abc", "abc"},
		{"abcd", "abc…"},
		{"aéb", "aé…"},
		{"abé", "ab…"},
		{"a\xffb", "a…"},
		{"\xff", "\uFFFD"},
	} {
		if got := edge.Shorten(tt.in, 3); got != tt.want || !utf8.ValidString(got) {
			t.Errorf("Shorten(%q, 3) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
