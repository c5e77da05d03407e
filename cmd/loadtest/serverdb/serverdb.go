// Package serverdb opens the server's own database for the benchmarks that read or
// write it beside the server: the raw floors, the events benchmark's plain SQL writes.
package serverdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	_ "github.com/go-sql-driver/mysql" // the server's driver

	"messages/models/store"
)

// Open opens databaseURL with the server's own driver settings (store.MySQLDSN), so a
// benchmark and the server differ only in what runs above the driver, and checks it
// answers. conns bounds the pool.
func Open(ctx context.Context, databaseURL string, conns int) (*sql.DB, error) {
	dsn, err := store.MySQLDSN(databaseURL)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("database: %w", err)
	}
	return db, nil
}
