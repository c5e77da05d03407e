package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
)

// The replicas' health: each is asked every CheckInterval how far behind the primary it
// is, and its state decides whether lists may read from it (replicas.go).

// run checks every replica every CheckInterval until ctx ends.
func (rs *replicaSet) run(ctx context.Context) {
	defer close(rs.done)
	t := time.NewTicker(rs.opts.CheckInterval)
	defer t.Stop()
	for {
		var wg sync.WaitGroup
		for _, r := range rs.replicas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := rs.checkOne(ctx, r)
				rs.set(r, st, err)
			}()
		}
		wg.Wait()
		rs.forgetWrites()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// checkOne asks a replica how far behind it is (SHOW REPLICA STATUS, or SHOW SLAVE
// STATUS on servers that predate it), within one CheckInterval.
func (rs *replicaSet) checkOne(ctx context.Context, r *replica) (*ReplicaStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, rs.opts.CheckInterval)
	defer cancel()
	st := &ReplicaStatus{Addr: r.addr, State: ReplicaDown, Lag: -1, CheckedAt: rs.now()}
	lag, err := replicationLag(ctx, r.check)
	switch {
	case err != nil:
		return st, err
	case lag == nil:
		st.State = ReplicaStopped
	case *lag > rs.opts.MaxLag:
		st.State, st.Lag = ReplicaLagging, *lag
	default:
		st.State, st.Lag = ReplicaReady, *lag
	}
	return st, nil
}

// replicationLag returns Seconds_Behind_Master (Seconds_Behind_Source on MySQL 8), or nil
// when the server is not replicating: the column is NULL while a replication thread is
// stopped, and there is no row on a server that is no replica at all.
func replicationLag(ctx context.Context, db *sql.DB) (*time.Duration, error) {
	rows, err := db.QueryContext(ctx, "SHOW REPLICA STATUS")
	var myErr *mysqldriver.MySQLError
	if errors.As(err, &myErr) && myErr.Number == 1064 { // ER_PARSE_ERROR: before MariaDB 10.5, MySQL 8.0.22
		rows, err = db.QueryContext(ctx, "SHOW SLAVE STATUS")
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		return nil, rows.Err()
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	for i, c := range cols {
		if c != "Seconds_Behind_Master" && c != "Seconds_Behind_Source" {
			continue
		}
		if !vals[i].Valid {
			return nil, nil
		}
		n, err := strconv.ParseInt(vals[i].String, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", c, vals[i].String, err)
		}
		lag := time.Duration(n) * time.Second
		return &lag, nil
	}
	return nil, errors.New("SHOW REPLICA STATUS has no Seconds_Behind_Master column")
}

// set records a replica's new status, logging a change of state.
func (rs *replicaSet) set(r *replica, st *ReplicaStatus, err error) {
	old := r.status.Swap(st)
	if old.State == st.State || rs.opts.Logger == nil {
		return
	}
	attrs := []any{"replica", r.addr, "state", st.State, "was", old.State}
	if st.Lag >= 0 {
		attrs = append(attrs, "lagSeconds", st.Lag.Seconds())
	}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	if st.State == ReplicaReady {
		rs.opts.Logger.Info("read replica ready", attrs...)
	} else {
		rs.opts.Logger.Warn("read replica skipped: lists read from the primary", attrs...)
	}
}
