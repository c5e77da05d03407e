package models

import (
	"context"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitHosts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, addr string
		want       []string
	}{
		{"oneHost", "db:3306", []string{"db:3306"}},
		{"several", "n1:3306,n2:3307,n3:3308", []string{"n1:3306", "n2:3307", "n3:3308"}},
		{"severalAsTheDriverHandsThem", "[n1:3306,n2:3307]:3306", []string{"n1:3306", "n2:3307"}},
		{"defaultPort", "n1,n2:3306", []string{"n1:3306", "n2:3306"}},
		{"ipv6", "[[::1]:3306,[::2]:3307]:3306", []string{"[::1]:3306", "[::2]:3307"}},
	} {
		if diff := cmp.Diff(tt.want, splitHosts(tt.addr)); diff != "" {
			t.Errorf("%s: splitHosts(%q) (-want +got):\n%s", tt.name, tt.addr, diff)
		}
	}
}

// TestDialHostsMovesToTheNextHost: a refused host is passed over for the next, which is
// then dialled first.
func TestDialHostsMovesToTheNextHost(t *testing.T) {
	t.Parallel()
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := gone.Addr().String()
	gone.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := down + "," + up.Addr().String()
	for range 2 {
		conn, err := dialHosts(context.Background(), addr)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		if got := conn.RemoteAddr().String(); got != up.Addr().String() {
			t.Errorf("dialled %s, want the host that is up, %s", got, up.Addr())
		}
		conn.Close()
	}
	v, _ := preferred.Load(addr)
	if v == nil || v.(interface{ Load() int32 }).Load() != 1 {
		t.Errorf("the host that answered is not remembered first")
	}
	if _, err := dialHosts(context.Background(), down+","+down); err == nil || !IsUnavailable(err) {
		t.Errorf("every host down: %v, want an unavailable error", err)
	}
}
