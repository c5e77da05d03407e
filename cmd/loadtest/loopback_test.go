package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		name, url string
		ok        bool
	}{
		{"ipv4Loopback", "http://127.0.0.1:8080", true},
		{"ipv4LoopbackRange", "http://127.1.2.3:8080/", true},
		{"ipv6Loopback", "http://[::1]:8080", true},
		{"localhost", "http://localhost:8080", true},
		{"localhostUpper", "https://LOCALHOST", true},
		{"privateAddressRefused", "http://10.0.0.5:8080", false},
		{"publicAddressRefused", "http://93.184.216.34", false},
		{"unspecifiedRefused", "http://0.0.0.0:8080", false},
		{"ipv6UnspecifiedRefused", "http://[::]:8080", false},
		{"hostnameRefused", "http://example.com", false},
		{"loopbackLookalikeRefused", "http://127.0.0.1.example.com", false},
		{"localhostSubdomainRefused", "http://localhost.example.com", false},
		{"userinfoTrickRefused", "http://127.0.0.1@example.com", false},
		{"otherSchemeRefused", "ftp://127.0.0.1", false},
		{"noHostRefused", "http://", false},
		{"notAURLRefused", "127.0.0.1:8080", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkLoopback(tt.url)
			if (err == nil) != tt.ok {
				t.Errorf("checkLoopback(%q) = %v, want ok=%v", tt.url, err, tt.ok)
			}
		})
	}
}

func TestCheckLoopbackDatabase(t *testing.T) {
	for url, ok := range map[string]bool{
		"mysql://root@127.0.0.1:3306/msgbench": true,
		"mysql://root@localhost/msgbench":      true,
		"mysql://root@db.internal:3306/prod":   false,
		"mysql://root@10.1.1.1:3306/prod":      false,
		"sqlite:./data/messages.db":            false,
	} {
		if err := checkLoopbackDatabase(url); (err == nil) != ok {
			t.Errorf("checkLoopbackDatabase(%q) = %v, want ok=%v", url, err, ok)
		}
	}
}

func TestDialLoopbackOnly(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "10.0.0.1:80": false, "192.168.1.1:443": false} {
		if err := dialLoopbackOnly("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("dialLoopbackOnly(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}

func TestRunRefusesNonLoopbackBaseURL(t *testing.T) {
	var stderr bytes.Buffer
	code := run(t.Context(), []string{"--base-url", "http://192.0.2.1:8080", "--api-key", "k"}, noEnv, &bytes.Buffer{}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "not loopback") {
		t.Errorf("exit %d, stderr %q; want 2 and a refusal", code, stderr.String())
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"defaultsNeedAKey", nil, "--api-key"},
		{"unknownScenario", []string{"--api-key", "k", "--scenarios", "rest-first-page,nope"}, `unknown scenario "nope"`},
		{"zeroConcurrency", []string{"--api-key", "k", "--concurrency", "0"}, "--concurrency"},
		{"databaseElsewhere", []string{"--api-key", "k", "--database-url", "mysql://root@db.example.com/x"}, "not loopback"},
		{"ok", []string{"--api-key", "k", "--scenarios", "rest-first-page, mark-action,rest-first-page"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseFlags(tt.args, noEnv, &bytes.Buffer{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(c.scenarios, ","); got != "rest-first-page,mark-action" {
					t.Errorf("scenarios = %s", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

func noEnv(string) string { return "" }
