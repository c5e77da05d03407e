package main

import (
	"bytes"
	"strings"
	"testing"
)

// --help lists every flag with its default and variable, and exits 0; median has its own.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"median", "--help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), args, noEnv, &stdout, &stderr); code != 0 {
			t.Fatalf("%v exited %d: %s", args, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "--json") {
			t.Errorf("%v does not list --json:\n%s", args, stdout.String())
		}
	}
	var stdout bytes.Buffer
	run(t.Context(), []string{"--help"}, noEnv, &stdout, &bytes.Buffer{})
	for _, want := range []string{"[$LOADTEST_API_KEY]", "--duration duration", "(default: 10s)", "flag wins over its environment variable"} {
		if !strings.Contains(strings.Join(strings.Fields(stdout.String()), " "), want) {
			t.Errorf("--help lacks %q:\n%s", want, stdout.String())
		}
	}
}
