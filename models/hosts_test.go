package models_test

import (
	"context"
	"net"
	"net/url"
	"testing"

	"messages/models"
	"messages/models/dbtest"
)

// TestOpenSeveralHosts: a DATABASE_URL naming a host that is down before one that is up
// opens, migrates and serves through the one that is up.
func TestOpenSeveralHosts(t *testing.T) {
	u, err := url.Parse(dbtest.URL(t, models.DialectMySQL))
	if err != nil {
		t.Fatal(err)
	}
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := gone.Addr().String()
	gone.Close()
	u.Host = down + "," + u.Host
	ctx := context.Background()
	s, err := models.Open(ctx, u.String(), models.DefaultPool)
	if err != nil {
		t.Fatalf("open %s: %v", u.Host, err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate through %s: %v", u.Host, err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}
