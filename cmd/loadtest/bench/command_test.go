package bench

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"

	"messages/cmd/loadtest/cmdline"
)

func noEnv(string) string { return "" }

// run runs the benchmark's command line as main mounts it (the benchmark at the root,
// median beneath it) and returns the exit code.
func run(t *testing.T, args []string, stdout, stderr io.Writer) int {
	t.Helper()
	root := &cli.Command{Name: "loadtest", Writer: stdout, ErrWriter: stderr, Flags: Flags(noEnv), Action: Action(stdout, stderr),
		Commands: []*cli.Command{MedianCommand(stdout)}}
	return cmdline.Run(t.Context(), root, args, stderr)
}

// parseFlags reads args as the benchmark's command line, without running it.
func parseFlags(args []string) (config, error) {
	var c config
	root := &cli.Command{Name: "loadtest", Writer: io.Discard, ErrWriter: io.Discard, Flags: Flags(noEnv),
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Action: func(_ context.Context, cmd *cli.Command) error {
			var err error
			c, err = configFrom(cmd)
			return err
		}}
	err := root.Run(context.Background(), append([]string{"loadtest"}, args...))
	return c, err
}

func TestRunRefusesNonLoopbackBaseURL(t *testing.T) {
	var stderr bytes.Buffer
	code := run(t, []string{"--base-url", "http://192.0.2.1:8080", "--api-key", "k"}, &bytes.Buffer{}, &stderr)
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
			c, err := parseFlags(tt.args)
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

// median without reports is a usage error.
func TestMedianNeedsReports(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(t, []string{"median"}, &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), "needs the JSON reports") {
		t.Errorf("exit %d, stderr %q; want 2", code, stderr.String())
	}
}
