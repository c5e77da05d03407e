package main

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"messages/models"
)

// The whole API answers in gzip when the client asks, and in plain bytes otherwise.
func TestGzipWhenAsked(t *testing.T) {
	t.Setenv("DATABASE_URL", "sqlite:"+t.TempDir()+"/g.db")
	t.Setenv("APP_ENV", "production")
	code, _, stderr := runCLI(t, "", "seed", "--messages", "50", "--subscribers", "3", "--templates", "2")
	if code != 0 {
		t.Fatalf("seed: %s", stderr)
	}
	key, _ := createKey(t, demoEnvironmentID, "gzip")
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
	l := &listener{ln: ln, srv: srv, errc: make(chan error, 1), logger: slog.New(slog.DiscardHandler)}
	go func() { l.errc <- srv.Serve(ln) }()
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
	if err := l.shutdown(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if body := <-got; body != "done" {
		t.Fatalf("in-flight request got %q, want done", body)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("server still accepts after shutdown")
	}
}
