package main

import (
	"strings"
	"testing"
	"time"

	"messages/models/seed"
)

// seed ends with a sentence a person reads, naming the demo environment when it filled it.
func TestSeedSaysWhatItWrote(t *testing.T) {
	for name, tc := range map[string]struct {
		stats seed.Stats
		took  time.Duration
		want  string
	}{
		"demoEnvironment": {
			seed.Stats{EnvironmentID: demoEnvironmentID, OrganizationID: demoOrganizationID, Messages: 1000, Subscribers: 100, Templates: 20},
			1394 * time.Millisecond,
			"seeded 1000 messages, 100 subscribers and 20 templates into the demo environment 650000000000000000000001 in 1.39s",
		},
		"otherEnvironment": {
			seed.Stats{EnvironmentID: "670000000000000000000001", Messages: 0, Subscribers: 1, Templates: 1},
			42 * time.Millisecond,
			"seeded 0 messages, 1 subscriber and 1 template into environment 670000000000000000000001 in 40ms",
		},
	} {
		t.Run(name, func(t *testing.T) {
			if got := seededSummary(tc.stats, tc.took); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}

	t.Setenv("DATABASE_URL", "sqlite:"+t.TempDir()+"/seed.db")
	code, _, stderr := runCLI(t, "", "seed", "--messages", "30", "--subscribers", "3", "--templates", "2")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	const want = "seeded 30 messages, 3 subscribers and 2 templates into the demo environment 650000000000000000000001 in "
	if code != 0 || !strings.HasPrefix(lines[len(lines)-1], want) {
		t.Errorf("seed: exit %d, last line %q; want exit 0 and a line starting %q", code, lines[len(lines)-1], want)
	}
}
