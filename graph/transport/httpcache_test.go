package transport_test

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// strongETag is the form of the ETag of a GET query's answer: quoted, not weak.
var strongETag = regexp.MustCompile(`^"[A-Za-z0-9_-]+"$`)

// validators is what the caching tests compare of a reply.
type validators struct {
	Status       int
	CacheControl string
	Vary         []string
	ETag         string
	Body         bool // whether the reply has a body
}

func (r reply) validators() validators {
	return validators{Status: r.status, CacheControl: r.header.Get("Cache-Control"), Vary: r.header.Values("Vary"),
		ETag: r.header.Get("ETag"), Body: len(r.body) > 0}
}

// TestGetCaching: a query sent as GET is answered with Cache-Control: private, no-cache
// and a strong ETag of its answer; the same request with the ETag in If-None-Match is
// 304 without a body, after the query ran, until the data changes; POST is never stored.
func TestGetCaching(t *testing.T) {
	const query = `{ value }`
	data := newStub()
	endpoint := serve(t, data.handler())
	rawQuery := url.Values{"query": {query}}.Encode()
	get := func(t *testing.T, header ...string) reply {
		t.Helper()
		return send(t, http.MethodGet, endpoint, rawQuery, "", append([]string{"Accept", acceptResponse}, header...)...)
	}
	first := get(t)
	etag := first.header.Get("ETag")
	if first.answer(t).Codes != nil || !strongETag.MatchString(etag) {
		t.Fatalf("ETag %q, want a strong entity tag on an answer without errors: %s", etag, first.body)
	}
	fresh := validators{Status: http.StatusOK, CacheControl: "private, no-cache", Vary: []string{"Authorization", "Accept"}, ETag: etag, Body: true}
	notModified := fresh
	notModified.Status, notModified.Body = http.StatusNotModified, false

	tests := []struct {
		name        string
		ifNoneMatch string
		want        validators
	}{
		{"get200SameETagAgain", "", fresh},
		{"get304IfNoneMatchETag", etag, notModified},
		{"get304IfNoneMatchWeakETagInList", `"other", W/` + etag, notModified},
		{"get304IfNoneMatchAny", "*", notModified},
		{"get200IfNoneMatchOtherETag", `"other"`, fresh},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := data.runs()
			var header []string
			if tt.ifNoneMatch != "" {
				header = []string{"If-None-Match", tt.ifNoneMatch}
			}
			r := get(t, header...)
			if diff := cmp.Diff(tt.want, r.validators()); diff != "" {
				t.Errorf("answer (-want +got):\n%s\n%.500s", diff, r.body)
			}
			if data.runs() == before {
				t.Error("the query did not run: an ETag validates the answer, it does not replace running the query")
			}
		})
	}

	t.Run("get200ETagPerMediaType", func(t *testing.T) {
		r := send(t, http.MethodGet, endpoint, rawQuery, "", "Accept", acceptJSON, "If-None-Match", etag)
		if r.status != http.StatusOK || r.header.Get("ETag") == etag || !strongETag.MatchString(r.header.Get("ETag")) {
			t.Errorf("application/json answered %d with ETag %q; want 200 with an ETag of its own, not %q", r.status, r.header.Get("ETag"), etag)
		}
	})

	t.Run("post200NeverStored", func(t *testing.T) {
		r := send(t, http.MethodPost, endpoint, "", postBody(query, nil), "Accept", acceptResponse, "If-None-Match", etag)
		want := validators{Status: http.StatusOK, CacheControl: "no-store", Body: true}
		if diff := cmp.Diff(want, r.validators()); diff != "" {
			t.Errorf("answer (-want +got):\n%s", diff)
		}
	})

	t.Run("get200NewETagOnceTheDataChanged", func(t *testing.T) {
		if r := send(t, http.MethodPost, endpoint, "", postBody(`mutation { change }`, nil)); r.status != http.StatusOK {
			t.Fatalf("mutation answered %d: %s", r.status, r.body)
		}
		r := get(t, "If-None-Match", etag)
		if r.status != http.StatusOK || r.answer(t).Codes != nil || !strongETag.MatchString(r.header.Get("ETag")) || r.header.Get("ETag") == etag {
			t.Errorf("answered %d with ETag %q; want 200 with a new ETag, not %q: %s", r.status, r.header.Get("ETag"), etag, r.body)
		}
	})
}
