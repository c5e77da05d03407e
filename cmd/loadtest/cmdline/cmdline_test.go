package cmdline

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v3"
)

// command is a command with the kinds of flag the benchmarks have; its action keeps the
// settings it was run with.
func command(getenv func(string) string, got *[]Setting) *cli.Command {
	return &cli.Command{
		Name: "loadtest",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "api-key", Sources: FromEnv("LOADTEST_API_KEY", getenv)},
			&cli.StringFlag{Name: "database-url"},
			&cli.DurationFlag{Name: "duration", Value: 10 * time.Second},
			&cli.IntFlag{Name: "concurrency", Value: 8},
		},
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return Usage(errors.New("unexpected arguments"))
			}
			*got = Settings(cmd)
			return nil
		},
	}
}

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
		want map[string]Setting
	}{
		{"keyFromEnvironment", []string{"--duration", "2s", "--database-url", "mysql://root:pw@127.0.0.1:3306/x"}, map[string]Setting{
			"LOADTEST_API_KEY": {"LOADTEST_API_KEY", "xxxxx", "environment"},
			"--duration":       {"--duration", "2s", "flag"},
			"--database-url":   {"--database-url", "mysql://root:xxxxx@127.0.0.1:3306/x", "flag"},
			"--concurrency":    {"--concurrency", "8", "default"},
		}},
		{"flagBeatsEnvironment", []string{"--api-key", "flag-key"}, map[string]Setting{
			"LOADTEST_API_KEY": {"LOADTEST_API_KEY", "xxxxx", "flag"},
			"--duration":       {"--duration", "10s", "default"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var settings []Setting
			var stderr bytes.Buffer
			if code := Run(t.Context(), command(env, &settings), tt.args, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			got := map[string]Setting{}
			for _, s := range settings {
				if _, ok := tt.want[s.Name]; ok {
					got[s.Name] = s
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			var out bytes.Buffer
			PrintSettings(&out, settings)
			if strings.Contains(out.String(), "-key") || strings.Contains(out.String(), ":pw@") {
				t.Errorf("a secret is printed:\n%s", out.String())
			}
		})
	}
}

// A usage error exits 2, a flag that does not parse is one, any other error exits 1.
func TestRunExitCodes(t *testing.T) {
	noEnv := func(string) string { return "" }
	failing := command(noEnv, new([]Setting))
	failing.Commands = []*cli.Command{{Name: "fail", Action: func(context.Context, *cli.Command) error { return errors.New("boom") }}}
	tests := []struct {
		name       string
		args       []string
		code       int
		wantStderr string
	}{
		{"ok", nil, 0, ""},
		{"unknownFlag", []string{"--nope"}, 2, "(see loadtest --help)"},
		{"unknownSubcommandFlag", []string{"fail", "--nope"}, 2, "(see loadtest fail --help)"},
		{"usageError", []string{"extra"}, 2, "error: unexpected arguments"},
		{"failure", []string{"fail"}, 1, "error: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := Run(t.Context(), failing, tt.args, &stderr); code != tt.code || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tt.code, tt.wantStderr)
			}
		})
	}
}
