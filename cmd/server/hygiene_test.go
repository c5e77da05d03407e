package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"messages/models"
)

// longLines returns the lines of log longer than n bytes, each cut for the message.
func longLines(log string, n int) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if len(line) > n {
			out = append(out, line[:300])
		}
	}
	return out
}

// Overlong URIs are refused with a short 414 in production; the largest legitimate GET,
// a GraphQL query at its size limit, is served.
func TestLongURIs(t *testing.T) {
	e := newE2ETenant(t, models.DialectMySQL)
	query := "{ messages(limit: 1) { totalCount } }\n#"
	query += strings.Repeat("comment ", (32<<10-len(query))/8)
	t.Run("graphqlGetQueryAtLimitServed", func(t *testing.T) {
		r := e.do(t, http.MethodGet, "/graphql?query="+url.QueryEscape(query), nil, nil)
		if r.status != http.StatusOK || !strings.Contains(string(r.body), `"totalCount"`) {
			t.Fatalf("GET /graphql with a %d-byte query: %d %.300s", len(query), r.status, r.body)
		}
	})
	t.Run("graphqlGet414", func(t *testing.T) {
		uri := "/graphql?query=" + url.QueryEscape(query+strings.Repeat("{}", 16<<10))
		uriTooLong(t, uri, e.do(t, http.MethodGet, uri, nil, nil))
	})
}

// A 404 quotes the start of the path only, and no log line is longer than a few KiB,
// whatever the path.
func TestNotFoundBounded(t *testing.T) {
	e := newE2ETenant(t, models.DialectMySQL)
	t.Run("notFound404QuotesPathStart", func(t *testing.T) {
		path := "/" + strings.Repeat("é", 10_000) // 60 KB percent-encoded, under the URI limit
		r := e.do(t, http.MethodGet, path, nil, nil)
		var body struct {
			StatusCode int    `json:"statusCode"`
			Message    string `json:"message"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil || r.status != http.StatusNotFound || body.StatusCode != http.StatusNotFound {
			t.Fatalf("%d %.300s (%v), want 404 with the error body", r.status, r.body, err)
		}
		if len(body.Message) > len("Cannot GET ")+200+len("…") || !strings.HasSuffix(body.Message, "é…") {
			t.Errorf("message of %d bytes, want at most 200 of the path and an ellipsis: %.300s", len(body.Message), body.Message)
		}
		if long := longLines(e.srv.stderr.String(), 4<<10); len(long) > 0 {
			t.Errorf("%d log lines over 4 KiB, the first: %s", len(long), long[0])
		}
		if !strings.Contains(e.srv.stderr.String(), "bytes cut]") {
			t.Errorf("the request's log line does not say its path was cut")
		}
	})
	t.Run("path900KBShortAnswer", func(t *testing.T) {
		r := e.do(t, http.MethodGet, "/"+strings.Repeat("x", 900_000), nil, nil)
		if r.status < 400 || len(r.body) > 1<<10 {
			t.Fatalf("%d with %d bytes, want a short refusal", r.status, len(r.body))
		}
		if long := longLines(e.srv.stderr.String(), 4<<10); len(long) > 0 {
			t.Errorf("%d log lines over 4 KiB, the first: %s", len(long), long[0])
		}
	})
}

// /graphql answers the methods it does not take with 405, Allow and the documented error
// body with GraphQL's errors array, not gqlgen's 400.
func TestGraphQLMethodNotAllowed(t *testing.T) {
	e := newE2ETenant(t, models.DialectMySQL)
	op := []byte(`{"query":"{ messages { totalCount } }"}`)
	for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch} {
		t.Run("graphql405"+method, func(t *testing.T) {
			r := e.do(t, method, "/graphql", http.Header{"Content-Type": {"application/json"}}, op)
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, POST" {
				t.Fatalf("%d Allow %q: %.300s, want 405 with Allow: GET, POST", r.status, r.header.Get("Allow"), r.body)
			}
			var body struct {
				StatusCode int    `json:"statusCode"`
				Path       string `json:"path"`
				Message    string `json:"message"`
				Errors     []struct {
					Message    string            `json:"message"`
					Extensions map[string]string `json:"extensions"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(r.body, &body); err != nil || body.StatusCode != http.StatusMethodNotAllowed || body.Path != "/graphql" ||
				body.Message == "" || len(body.Errors) != 1 || body.Errors[0].Extensions["code"] == "" {
				t.Errorf("body %s (%v), want the error body with GraphQL's errors array", r.body, err)
			}
		})
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run("graphql200"+method, func(t *testing.T) {
			uri, body := "/graphql", op
			if method == http.MethodGet {
				uri, body = "/graphql?query="+url.QueryEscape("{ messages { totalCount } }"), nil
			}
			if r := e.do(t, method, uri, http.Header{"Content-Type": {"application/json"}}, body); r.status != http.StatusOK {
				t.Fatalf("%d %.300s", r.status, r.body)
			}
		})
	}
}
