package migrate

import (
	"context"
	"database/sql"
	"time"
)

// NewMigrationLock is the lock MigrateUp takes on MySQL, for a test to hold by hand, with
// a lease of the given length.
func NewMigrationLock(db *sql.DB, lease time.Duration, lost func(error)) interface {
	SessionLock(ctx context.Context, conn *sql.Conn) error
	SessionUnlock(ctx context.Context, conn *sql.Conn) error
} {
	return &migrationLock{db: db, lost: func(cause error) { lost(cause) }, lease: lease}
}
