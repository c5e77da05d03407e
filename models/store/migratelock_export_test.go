package store

import (
	"context"
	"database/sql"
	"time"
)

// SetMigrationLease shortens the migration lease for one test and returns what restores it.
func SetMigrationLease(d time.Duration) (restore func()) {
	old := migrationLease
	migrationLease = d
	return func() { migrationLease = old }
}

// MigrationLockTable is the lease's table, for the external tests.
const MigrationLockTable = migrationLockTable

// NewMigrationLock is the lock MigrateUp takes on MySQL, for a test to hold by hand.
func NewMigrationLock(db *sql.DB, lost func(error)) interface {
	SessionLock(ctx context.Context, conn *sql.Conn) error
	SessionUnlock(ctx context.Context, conn *sql.Conn) error
} {
	return &migrationLock{db: db, lost: func(cause error) { lost(cause) }}
}
