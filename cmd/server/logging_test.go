package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"
)

// Every string a log record carries is cut to 2 KiB, on a UTF-8 boundary, with the
// number of bytes cut: the message, attributes, those of groups and of With, and errors.
func TestLogStringsBounded(t *testing.T) {
	long := "é" + strings.Repeat("x", 2045) + strings.Repeat("é", 10_000) // bytes 2047 and 2048 are an é
	for _, env := range []string{"production", "development"} {
		t.Run(env, func(t *testing.T) {
			var buf bytes.Buffer
			logger := newLogger(&buf, config{appEnv: env})
			logger.With("with", long).WithGroup("g").Info(long, "attr", long, "err", errors.New(long),
				slog.Group("nested", "deep", long), "short", "kept")
			line := buf.String()
			if len(line) > 6*(2<<10)+1000 {
				t.Errorf("log line of %d bytes for five strings of %d", len(line), len(long))
			}
			if got := strings.Count(line, "[20000 bytes cut]"); got != 5 {
				t.Errorf("%d strings cut at 2 KiB with their count, want 5:\n%.3000s", got, line)
			}
			if !utf8.ValidString(line) || !strings.Contains(line, "kept") {
				t.Errorf("line is not valid UTF-8, or lost the short attribute:\n%.3000s", line)
			}
			if env == "production" {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("not one JSON record: %v", err)
				}
			}
		})
	}
}
