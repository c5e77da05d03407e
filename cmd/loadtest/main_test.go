package main

import (
	"bytes"
	"strings"
	"testing"
)

func noEnv(string) string { return "" }

// --help lists every flag with its default and variable, and exits 0; every command
// beneath the root has its own.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"median", "--help"}, {"events", "--help"}, {"events", "proxy", "--help"},
		{"peer", "--help"}, {"walk", "--help"}, {"hostile", "--help"}, {"idle", "--help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), args, noEnv, &stdout, &stderr); code != 0 {
			t.Fatalf("%v exited %d: %s", args, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "--") {
			t.Errorf("%v lists no flag:\n%s", args, stdout.String())
		}
	}
	var stdout bytes.Buffer
	run(t.Context(), []string{"--help"}, noEnv, &stdout, &bytes.Buffer{})
	for _, want := range []string{"[$LOADTEST_API_KEY]", "--duration duration", "(default: 10s)", "flag wins over its environment variable",
		"median", "events", "peer", "walk", "hostile", "idle"} {
		if !strings.Contains(strings.Join(strings.Fields(stdout.String()), " "), want) {
			t.Errorf("--help lacks %q:\n%s", want, stdout.String())
		}
	}
}

// Every mistake in the command line, at the root or beneath it, exits 2 and says where
// to look; a benchmark that cannot start exits 1.
func TestExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknownFlag", []string{"--bogus"}, 2, "(see loadtest --help)"},
		{"rootOffLoopback", []string{"--api-key", "k", "--base-url", "http://10.0.0.1"}, 2, "not loopback"},
		{"medianWithoutReports", []string{"median"}, 2, "needs the JSON reports"},
		{"eventsUnknownFlag", []string{"events", "--bogus"}, 2, "(see loadtest events --help)"},
		{"peerWithoutPeer", []string{"peer"}, 2, "--peer-url"},
		{"walkWithoutKey", []string{"walk"}, 2, "--api-key"},
		{"hostileUnknownPart", []string{"hostile", "--api-key", "a", "--other-key", "b", "--server-pid", "1", "--parts", "nope"}, 2, "unknown part"},
		{"idleWithoutServerBin", []string{"idle", "--api-key", "k", "--database-url", "mysql://root@127.0.0.1:3306/x"}, 2, "--server-bin"},
		{"idleReferenceOnlyBadSide", []string{"idle", "--sides", "reference,other"}, 2, "unknown side"},
		{"hostileNoSuchServer", []string{"hostile", "--api-key", "a", "--other-key", "b", "--server-pid", "999999999", "--parts", "flood"}, 1, "--server-pid 999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(t.Context(), tt.args, noEnv, &bytes.Buffer{}, &stderr); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.want)
			}
		})
	}
}
