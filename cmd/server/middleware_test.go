package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"messages/graph"
	"messages/models"
	"messages/rest"
)

// A panic anywhere becomes a 500 with the error body and an errorId that leads to the
// stack in the log; nothing of the panic reaches the client.
func TestRecoverPanics(t *testing.T) {
	var log bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&log, nil))
	rs := rest.NewServer(&graph.Resolver{Logger: logger, Now: time.Now})
	h := recoverPanics(rs, logger, time.Now, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
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
	h := logRequests(logger, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

// The whole API answers in gzip when the client asks, and in plain bytes otherwise.
func TestGzipWhenAsked(t *testing.T) {
	t.Setenv("DATABASE_URL", "sqlite:"+t.TempDir()+"/g.db")
	t.Setenv("APP_ENV", "production")
	code, key, stderr := runCLI(t, "", "seed", "--messages", "50", "--subscribers", "3", "--templates", "2")
	if code != 0 {
		t.Fatalf("seed: %s", stderr)
	}
	code, key, stderr = runCLI(t, "", "apikey", "create", "--environment-id", demoEnvironmentID)
	if code != 0 {
		t.Fatalf("apikey: %s", stderr)
	}
	srv := start(t)
	req, _ := http.NewRequest(http.MethodGet, srv.base+"/v1/messages?limit=50", nil)
	req.Header.Set("Authorization", "ApiKey "+strings.TrimSpace(key))
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %d, Content-Encoding %q; want 200 gzip", res.StatusCode, res.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var page models.MessagesPage
	if err := json.NewDecoder(zr).Decode(&page); err != nil || len(page.Data) != 50 {
		t.Fatalf("gzip body: %d messages, %v", len(page.Data), err)
	}
}

// Shutdown stops accepting and lets an in-flight request finish.
func TestShutdownDrainsInFlight(t *testing.T) {
	started := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "done")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	got := make(chan string, 1)
	go func() {
		res, err := http.Get("http://" + ln.Addr().String())
		if err != nil {
			got <- err.Error()
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		got <- string(b)
	}()
	<-started
	if err := shutdown(srv, errc, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if body := <-got; body != "done" {
		t.Fatalf("in-flight request got %q, want done", body)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("server still accepts after shutdown")
	}
}
