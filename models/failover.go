package models

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
)

// A DATABASE_URL may name several hosts of one cluster (a Galera cluster's nodes):
// mysql://user:password@node1:3306,node2:3306,node3:3306/messages. The MySQL driver dials
// one address, so the store registers its own dialer for the driver's "tcp" network: it
// dials the host that last answered and, when that one refuses or does not answer within
// hostDialTimeout, the next ones in order, and stays on the first that answers. An
// instance whose node dies therefore reconnects to another node as soon as its pooled
// connections to the dead one are found broken (at their next use), instead of
// answering 503 until the node returns. A single address is dialled as the driver would.
//
// What it does not do: a node that accepts connections but is not synced with its
// cluster (Galera's "WSREP has not yet prepared node", 1047) is still used, and answers
// 503 until it syncs; and connections are not moved back when an earlier host returns.

// hostDialTimeout bounds the dial of one host of several, so that a host that does not
// answer at all (not even with a refusal) leaves time for the next within the driver's
// connection timeout.
const hostDialTimeout = 2 * time.Second

func init() {
	mysqldriver.RegisterDialContext("tcp", dialHosts)
}

// preferred remembers, per list of hosts, the index of the host that last answered.
var preferred sync.Map // string -> *atomic.Int32

// dialHosts dials addr, which is one host:port or several separated by commas.
func dialHosts(ctx context.Context, addr string) (net.Conn, error) {
	hosts := splitHosts(addr)
	var d net.Dialer
	if len(hosts) == 1 {
		return d.DialContext(ctx, "tcp", hosts[0])
	}
	v, _ := preferred.LoadOrStore(addr, new(atomic.Int32))
	last := v.(*atomic.Int32)
	first := int(last.Load())
	var errs []error
	for i := range hosts {
		n := (first + i) % len(hosts)
		hctx, cancel := context.WithTimeout(ctx, hostDialTimeout)
		conn, err := d.DialContext(hctx, "tcp", hosts[n])
		cancel()
		if err == nil {
			last.Store(int32(n))
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// splitHosts returns the host:port addresses of addr, each with MySQL's port 3306 when it
// names none. The driver hands a list of several as "[h1:p1,h2:p2]:3306", having found no
// single port in it.
func splitHosts(addr string) []string {
	if !strings.Contains(addr, ",") {
		return []string{addr}
	}
	if strings.HasPrefix(addr, "[") {
		if end := strings.LastIndex(addr, "]:"); end > 0 {
			addr = addr[1:end]
		}
	}
	var hosts []string
	for _, h := range strings.Split(addr, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, "3306")
		}
		hosts = append(hosts, h)
	}
	return hosts
}
