package cluster

import (
	"context"
	"errors"
	"messages/models"
	"net"
	"strings"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
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

func TestNodeSynced(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		status map[string]string
		synced bool
	}{
		{"mysql", map[string]string{}, true},
		{"mariadbWithoutProvider", map[string]string{"wsrep_provider_name": "", "wsrep_ready": "OFF"}, true},
		{"synced", map[string]string{"wsrep_provider_name": "Galera", "wsrep_ready": "ON", "wsrep_local_state": "4"}, true},
		{"notReady", map[string]string{"wsrep_provider_name": "Galera", "wsrep_ready": "OFF", "wsrep_local_state": "4"}, false},
		{"joiner", map[string]string{"wsrep_provider_name": "Galera", "wsrep_ready": "ON", "wsrep_local_state": "1"}, false},
		{"donor", map[string]string{"wsrep_provider_name": "Galera", "wsrep_ready": "ON", "wsrep_local_state": "2"}, false},
	} {
		err := nodeSynced(tt.status)
		if (err == nil) != tt.synced || (err != nil && !errors.Is(err, errNotSynced)) {
			t.Errorf("%s: nodeSynced(%v) = %v, want synced %v", tt.name, tt.status, err, tt.synced)
		}
	}
}

// TestHostsConnectorEveryHostDown: with every host refusing, connecting fails with each
// host's reason, an unavailable error, and each host is tried after the others for a while.
func TestHostsConnectorEveryHostDown(t *testing.T) {
	t.Parallel()
	var down []string
	for range 2 {
		gone, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		down = append(down, gone.Addr().String())
		gone.Close()
	}
	cfg, err := mysqldriver.ParseDSN("root@tcp(" + strings.Join(down, ",") + ")/db")
	if err != nil {
		t.Fatal(err)
	}
	c, err := newHostsConnector(cfg, DefaultHostRetryAfter)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(down, c.addrs); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	_, err = c.Connect(context.Background())
	if err == nil || !models.IsUnavailable(err) || !strings.Contains(err.Error(), down[0]) || !strings.Contains(err.Error(), down[1]) {
		t.Errorf("every host down: %v, want an unavailable error naming both", err)
	}
	for i := range down {
		if c.downUntil[i].Load() <= time.Now().UnixNano() {
			t.Errorf("host %d is not put after the others", i)
		}
	}
}
