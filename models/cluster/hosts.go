// Package cluster is what running on more than one database server takes, below the
// store: connections that follow the synced hosts of a cluster (hosts.go), and the
// policy by which a transaction that lost a conflict to another writer is run again
// (retry.go). It knows database/sql and the MySQL driver, not GORM nor the store.
package cluster

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
)

// A DATABASE_URL may name several hosts of one cluster (a Galera cluster's nodes):
// mysql://user:password@node1:3306,node2:3306,node3:3306/messages. The store then opens
// its pool through hostsConnector, which makes each new connection to the first host in
// the list that answers and is synced with its cluster:
//
//   - a host that refuses, does not answer within hostDialTimeout, or answers but is not
//     synced (Galera's wsrep_ready OFF, wsrep_local_state other than 4, or set to refuse
//     queries with 1047 "WSREP has not yet prepared node": wsrep_reject_queries)
//     is passed over for the next and not tried first again for WithHostRetryAfter's time;
//   - a pooled connection whose host later refuses queries with 1047 (a node leaving the
//     cluster's primary component, or set to reject queries) is discarded at that error,
//     and database/sql dials again: the statement was not run, so that is safe;
//   - connections stick to the first listed host, not spread over the hosts: writes from
//     one instance through one node wait on row locks instead of failing certification
//     against each other, and the list's order says which node an operator prefers (the
//     nearest). When an earlier host returns, the next new connection goes to it (the
//     pool makes one when it grows or one expires, within ConnMaxIdleTime or
//     ConnMaxLifetime: 1 and 5 minutes by default), and from then on every connection to
//     a later host is closed after its current use, so the instance moves back whole.
//
// A single host is opened by the driver as before, checks and all left out: a node that
// is not synced answers 1047 there, which is a 503 until it syncs.
//
// If no host is synced, connecting fails with the reasons of each; requests answer 503.

// hostDialTimeout bounds the dial of one host of several, so that a host that does not
// answer at all (not even with a refusal) leaves time for the next within the driver's
// connection timeout.
const hostDialTimeout = 2 * time.Second

// DefaultHostRetryAfter is how long a host that failed is tried only after the others.
const DefaultHostRetryAfter = 10 * time.Second

// NewHostsConnector returns the connector of a DSN that names several hosts (made by the
// store from a DATABASE_URL), passing over for retryAfter a host that failed; ok is false
// for a DSN of one host, which the driver opens as it is.
func NewHostsConnector(dsn string, retryAfter time.Duration) (c driver.Connector, ok bool) {
	cfg, err := mysqldriver.ParseDSN(dsn)
	if err != nil || len(splitHosts(cfg.Addr)) == 1 {
		return nil, false
	}
	hc, err := newHostsConnector(cfg, retryAfter)
	if err != nil {
		return nil, false
	}
	return hc, true
}

// hostsConnector makes connections to the first synced host of several; see above.
type hostsConnector struct {
	hosts []driver.Connector // one per host, in the list's order
	addrs []string
	// downUntil is, per host, until when (Unix nanoseconds) it is tried after the others.
	downUntil []atomic.Int64
	// latest is the host the latest new connection went to: a pooled connection to a
	// later host is closed after its use, so the pool follows it back.
	latest atomic.Int32
	now    func() time.Time
	// retryAfter is how long a host that failed is tried only after the others.
	retryAfter time.Duration
}

func newHostsConnector(cfg *mysqldriver.Config, retryAfter time.Duration) (*hostsConnector, error) {
	c := &hostsConnector{addrs: splitHosts(cfg.Addr), now: time.Now, retryAfter: retryAfter}
	c.downUntil = make([]atomic.Int64, len(c.addrs))
	for _, addr := range c.addrs {
		one := cfg.Clone()
		one.Addr = addr
		one.Timeout = min(one.Timeout, hostDialTimeout)
		if one.Timeout == 0 {
			one.Timeout = hostDialTimeout
		}
		conn, err := mysqldriver.NewConnector(one)
		if err != nil {
			return nil, err
		}
		c.hosts = append(c.hosts, conn)
	}
	return c, nil
}

// Connect dials the hosts in order, those that failed lately last, and returns a
// connection to the first that answers and is synced.
func (c *hostsConnector) Connect(ctx context.Context) (driver.Conn, error) {
	now := c.now().UnixNano()
	var order, later []int
	for i := range c.hosts {
		if c.downUntil[i].Load() > now {
			later = append(later, i)
		} else {
			order = append(order, i)
		}
	}
	var errs []error
	for _, i := range append(order, later...) {
		conn, err := c.hosts[i].Connect(ctx)
		if err == nil {
			if err = synced(ctx, conn); err != nil {
				_ = conn.Close()
			}
		}
		if err != nil {
			c.downUntil[i].Store(c.now().Add(c.retryAfter).UnixNano())
			errs = append(errs, fmt.Errorf("%s: %w", c.addrs[i], err))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		c.downUntil[i].Store(0)
		c.latest.Store(int32(i))
		mc, ok := conn.(mysqlConn)
		if !ok { // not the driver this was written for: no failover, but no harm
			return conn, nil
		}
		return &hostConn{mysqlConn: mc, c: c, host: i}, nil
	}
	return nil, errors.Join(errs...)
}

// Driver is the MySQL driver.
func (c *hostsConnector) Driver() driver.Driver { return c.hosts[0].Driver() }

// errNotSynced is a host that answers but is not a synced member of its cluster.
var errNotSynced = errors.New("the node is not synced with its cluster")

// synced checks a new connection's node: a server that is no Galera node (MySQL has none
// of the status variables, MariaDB without a provider names none) is taken as it is.
func synced(ctx context.Context, conn driver.Conn) error {
	rows, err := conn.(driver.QueryerContext).QueryContext(ctx,
		"SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_provider_name', 'wsrep_ready', 'wsrep_local_state')", nil)
	if err != nil {
		if isNotPrepared(err) {
			return fmt.Errorf("%w: %w", errNotSynced, err)
		}
		return err
	}
	status := map[string]string{}
	row := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(row); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			_ = rows.Close()
			return err
		}
		status[strings.ToLower(fmt.Sprintf("%s", row[0]))] = fmt.Sprintf("%s", row[1])
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := nodeSynced(status); err != nil || status["wsrep_provider_name"] == "" {
		return err
	}
	// A synced node may still refuse clients' statements on tables with 1047 (set to
	// reject queries for maintenance) while it answers SHOW and SELECT 1.
	rows, err = conn.(driver.QueryerContext).QueryContext(ctx, "SHOW GLOBAL VARIABLES LIKE 'wsrep_reject_queries'", nil)
	if err != nil {
		return err
	}
	reject := ""
	if err := rows.Next(row); err == nil {
		reject = fmt.Sprintf("%s", row[1])
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if reject != "" && !strings.EqualFold(reject, "NONE") {
		return fmt.Errorf("%w: wsrep_reject_queries is %s", errNotSynced, reject)
	}
	return nil
}

// nodeSynced judges a node by its wsrep status: synced is ready (ON) and in local state
// 4; a donor (2) serves reads but may stall writes during a state transfer, a joiner
// (1, 3) is behind.
func nodeSynced(status map[string]string) error {
	if status["wsrep_provider_name"] == "" {
		return nil
	}
	if ready, ok := status["wsrep_ready"]; ok && !strings.EqualFold(ready, "ON") {
		return fmt.Errorf("%w: wsrep_ready is %s", errNotSynced, ready)
	}
	if state, ok := status["wsrep_local_state"]; ok && state != "4" {
		return fmt.Errorf("%w: wsrep_local_state is %s, not 4 (synced)", errNotSynced, state)
	}
	return nil
}

// isNotPrepared is Galera's refusal of a node out of its cluster's primary component,
// or set to reject queries: 1047, "WSREP has not yet prepared node for application use".
func isNotPrepared(err error) bool {
	var myErr *mysqldriver.MySQLError
	return errors.As(err, &myErr) && myErr.Number == 1047
}

// mysqlConn is what database/sql uses of the driver's connections.
type mysqlConn interface {
	driver.Conn
	driver.Pinger
	driver.QueryerContext
	driver.ExecerContext
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.NamedValueChecker
	driver.SessionResetter
	driver.Validator
}

// hostConn is a connection to one host of several.
type hostConn struct {
	mysqlConn
	c    *hostsConnector
	host int
}

// IsValid keeps the connection in the pool only while its host is not known to have
// failed and no newer connection went to an earlier host.
func (hc *hostConn) IsValid() bool {
	return hc.mysqlConn.IsValid() && hc.c.downUntil[hc.host].Load() <= hc.c.now().UnixNano() &&
		int(hc.c.latest.Load()) >= hc.host
}

// QueryContext and ExecContext turn a 1047 into driver.ErrBadConn: the statement was
// refused, not run, so database/sql discards the connection and runs it again on a new
// one, which Connect makes to a synced host.
func (hc *hostConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := hc.mysqlConn.QueryContext(ctx, query, args)
	return rows, hc.refused(err)
}

func (hc *hostConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	res, err := hc.mysqlConn.ExecContext(ctx, query, args)
	return res, hc.refused(err)
}

func (hc *hostConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := hc.mysqlConn.BeginTx(ctx, opts)
	return tx, hc.refused(err)
}

func (hc *hostConn) refused(err error) error {
	if err != nil && isNotPrepared(err) {
		hc.c.downUntil[hc.host].Store(hc.c.now().Add(hc.c.retryAfter).UnixNano())
		return fmt.Errorf("%w (%s: %w)", driver.ErrBadConn, hc.c.addrs[hc.host], err)
	}
	return err
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
