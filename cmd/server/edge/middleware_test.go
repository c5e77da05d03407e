package edge_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"messages/cmd/server/edge"
	"messages/rest"
)

// A panic anywhere becomes a 500 with the error body and an errorId that leads to the
// stack in the log; nothing of the panic reaches the client.
func TestRecoverPanics(t *testing.T) {
	var log bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&log, nil))
	h := edge.Recover(logger, time.Now, rest.NewErrorWriter(logger, time.Now))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret internal detail")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/messages", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	var body rest.ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.ErrorID == "" || body.Message != "internal error" || strings.Contains(rec.Body.String(), "secret") {
		t.Fatalf("body %s: want an errorId, the masked message and no panic text", rec.Body.String())
	}
	if !strings.Contains(log.String(), body.ErrorID) || !strings.Contains(log.String(), "secret internal detail") || !strings.Contains(log.String(), "goroutine") {
		t.Fatalf("log lacks the errorId, the panic or the stack:\n%s", log.String())
	}
}

// Every response carries a request id: the client's when sane, a fresh one otherwise;
// the access log has it with the route and environment, and never the API key.
func TestRequestLog(t *testing.T) {
	var log bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&log, nil))
	h := edge.Log(logger, time.Now)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	for _, tc := range []struct{ sent, want string }{
		{"abc-123.x_y", "abc-123.x_y"},
		{"evil\nlog line", ""},
		{strings.Repeat("a", 129), ""},
		{"", ""},
	} {
		log.Reset()
		req := httptest.NewRequest(http.MethodGet, "/v1/messages?subscriberId=s", nil)
		req.Header.Set("Authorization", "ApiKey super-secret-key")
		if tc.sent != "" {
			req.Header["X-Request-Id"] = []string{tc.sent}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		got := rec.Header().Get("X-Request-Id")
		if tc.want != "" && got != tc.want || tc.want == "" && (len(got) != 24 || got == tc.sent) {
			t.Errorf("sent %q, echoed %q", tc.sent, got)
		}
		var line map[string]any
		if err := json.Unmarshal(log.Bytes(), &line); err != nil {
			t.Fatalf("log line %q: %v", log.String(), err)
		}
		if line["requestId"] != got || line["status"] != float64(http.StatusTeapot) || line["method"] != "GET" {
			t.Errorf("log line %v lacks the request id, status or method", line)
		}
		if strings.Contains(log.String(), "super-secret-key") {
			t.Error("the API key reached the log")
		}
	}
}
