package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"messages/models"
	"messages/models/seed"
	"messages/models/store"
)

// The demo environment a first run loads, with fixed ids so restarts find it again.
const (
	demoEnvironmentID  = "650000000000000000000001"
	demoOrganizationID = "650000000000000000000002"
	demoKeyFile        = "demo-api-key"
)

// ensureDemo loads a small demo environment into an empty embedded database and returns
// its API key. The key is kept in a file beside the database (the database holds only its
// hash), so it stays the same across restarts.
func ensureDemo(ctx context.Context, s *store.Store, databaseURL string) (demo, error) {
	key, err := ensureDemoData(ctx, s, databaseURL)
	if err != nil {
		return demo{}, err
	}
	// Sealed under the development secret, so the inbox session's subscriberHash can be
	// keyed with the demo key, whenever the key was made.
	if err := s.SealAPIKey(ctx, key); err != nil {
		return demo{}, err
	}
	app, err := s.ApplicationIdentifier(ctx, demoEnvironmentID)
	if err != nil {
		return demo{}, err
	}
	return demo{key: key, applicationIdentifier: app}, nil
}

// demo is what the development server tells a newcomer to try: the demo environment's
// API key and application identifier.
type demo struct {
	key, applicationIdentifier string
}

// ensureDemoData loads the demo environment and its messages, and returns its key.
func ensureDemoData(ctx context.Context, s *store.Store, databaseURL string) (string, error) {
	if _, err := s.EnsureEnvironment(ctx, demoEnvironmentID, demoOrganizationID, "Demo"); err != nil {
		return "", err
	}
	page, err := s.ListMessages(ctx, demoEnvironmentID, models.ListFilter{}, models.Page{Size: 1}, models.ListOptions{})
	if err != nil {
		return "", err
	}
	if len(page.Data) == 0 {
		if _, err := seed.Generate(ctx, s, seed.Options{
			Seed: 1, EnvironmentID: demoEnvironmentID, OrganizationID: demoOrganizationID,
			Messages: 240, Subscribers: 6, Templates: 4,
		}); err != nil {
			return "", err
		}
	}

	path := filepath.Join(filepath.Dir(strings.TrimPrefix(databaseURL, "sqlite:")), demoKeyFile)
	if b, err := os.ReadFile(path); err == nil {
		key := strings.TrimSpace(string(b))
		if c, err := s.Authenticate(ctx, key); err == nil && c.EnvironmentID == demoEnvironmentID {
			return key, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	key, _, err := s.CreateAPIKey(ctx, demoEnvironmentID, "demo")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("keep demo key: %w", err)
	}
	return key, nil
}
