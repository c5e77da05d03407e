package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each setting says where its value came from: a flag beats the environment, which beats
// the default; the API key and the database password are masked.
func TestSettingsSources(t *testing.T) {
	env := func(key string) string {
		if key == "LOADTEST_API_KEY" {
			return "env-key"
		}
		return ""
	}
	tests := []struct {
		name string
		args []string
		want map[string]setting
	}{
		{"keyFromEnvironment", []string{"--duration", "2s", "--database-url", "mysql://root:pw@127.0.0.1:3306/x"}, map[string]setting{
			"LOADTEST_API_KEY": {"LOADTEST_API_KEY", "xxxxx", "environment"},
			"--duration":       {"--duration", "2s", "flag"},
			"--database-url":   {"--database-url", "mysql://root:xxxxx@127.0.0.1:3306/x", "flag"},
			"--concurrency":    {"--concurrency", "8", "default"},
		}},
		{"flagBeatsEnvironment", []string{"--api-key", "flag-key"}, map[string]setting{
			"LOADTEST_API_KEY": {"LOADTEST_API_KEY", "xxxxx", "flag"},
			"--duration":       {"--duration", "10s", "default"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseFlags(tt.args, env, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]setting{}
			for _, s := range c.settings {
				if _, ok := tt.want[s.name]; ok {
					got[s.name] = s
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(setting{})); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			var out bytes.Buffer
			printConfig(&out, c.settings)
			if strings.Contains(out.String(), "-key") || strings.Contains(out.String(), ":pw@") {
				t.Errorf("a secret is printed:\n%s", out.String())
			}
		})
	}
}

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
