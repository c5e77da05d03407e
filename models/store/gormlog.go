package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"messages/models/cluster"
	"messages/models/keyseal"
	"messages/models/migrate"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// DefaultSlowThreshold is how long a statement may run before it is logged as slow.
const DefaultSlowThreshold = 500 * time.Millisecond

// maxLoggedSQL bounds the statement text of a log record: a batch insert can be megabytes.
const maxLoggedSQL = 1 << 10

// OpenOption tunes Open beyond the pool.
type OpenOption func(*openOptions)

// openOptions are Open's settings besides the pool.
type openOptions struct {
	logger         *slog.Logger
	slow           time.Duration
	now            func() time.Time
	authTTL        time.Duration
	retry          cluster.RetryPolicy
	hostRetryAfter time.Duration
	migrationLease time.Duration
	markHook       func(ctx context.Context, messageID string) error
	sealer         *keyseal.Sealer
	shardURLs      map[string]string
	// mysqlServer: the database is known not to be Vitess's vtgate, so connections set
	// the session's time zone; until Open has found out, they set none (Open).
	mysqlServer bool
}

// defaultOpenOptions are the settings of an Open given no option.
func defaultOpenOptions() openOptions {
	return openOptions{slow: DefaultSlowThreshold, now: time.Now, authTTL: DefaultAuthTTL, retry: cluster.DefaultRetryPolicy,
		hostRetryAfter: cluster.DefaultHostRetryAfter, migrationLease: migrate.DefaultLease}
}

// WithClock makes now the store's clock, GORM's timestamps included, instead of
// time.Now: tests fix it for fixed timestamps.
func WithClock(now func() time.Time) OpenOption {
	return func(o *openOptions) { o.now = now }
}

// WithAuthTTL sets how long a checked credential is trusted without asking the database
// again (see authCache), instead of DefaultAuthTTL; 0 checks every request.
func WithAuthTTL(d time.Duration) OpenOption {
	return func(o *openOptions) { o.authTTL = d }
}

// WithRetryPolicy sets how transactions that lose a conflict are run again, instead of
// cluster.DefaultRetryPolicy.
func WithRetryPolicy(p cluster.RetryPolicy) OpenOption {
	return func(o *openOptions) { o.retry = p }
}

// WithHostRetryAfter sets how long a host of several that failed is tried only after the
// others, instead of cluster.DefaultHostRetryAfter.
func WithHostRetryAfter(d time.Duration) OpenOption {
	return func(o *openOptions) { o.hostRetryAfter = d }
}

// WithMigrationLease sets how long the migration lease lasts without renewal, instead of
// migrate.DefaultLease.
func WithMigrationLease(d time.Duration) OpenOption {
	return func(o *openOptions) { o.migrationLease = d }
}

// WithShardURLs names each shard's database by "keyspace/shard", for migrating a Vitess
// deployment whose vtgate DATABASE_URL names (migrate.Shards): ParseShardURLs reads
// DATABASE_SHARD_URLS.
func WithShardURLs(urls map[string]string) OpenOption {
	return func(o *openOptions) { o.shardURLs = urls }
}

// WithMarkHook makes every mark run hook inside its transaction, after its UPDATE holds
// the row and before COMMIT (before the message is read back, except in a batched mark,
// markbatch.go, which reads it in the same round trip); an error from hook fails the
// attempt as a statement's would. Tests use it to run a conflicting transaction at that
// moment; the hook's store calls join the mark's transaction.
func WithMarkHook(hook func(ctx context.Context, messageID string) error) OpenOption {
	return func(o *openOptions) { o.markHook = hook }
}

// WithKeySealer seals each new API key under s's secret beside its hash, so that
// subscriber hashes keyed with it can be verified (SubscriberHashKeys); without it keys
// are stored as hashes only.
func WithKeySealer(s *keyseal.Sealer) OpenOption {
	return func(o *openOptions) { o.sealer = s }
}

// WithLogger sends GORM's warnings, failed statements and slow statements to l as
// structured records, instead of slog.Default().
func WithLogger(l *slog.Logger) OpenOption {
	return func(o *openOptions) { o.logger = l }
}

// WithSlowThreshold logs statements that run longer than d at warn, instead of those
// over DefaultSlowThreshold; 0 logs none.
func WithSlowThreshold(d time.Duration) OpenOption {
	return func(o *openOptions) { o.slow = d }
}

// gormLogger is GORM's logger.Interface over a *slog.Logger: a slow statement is a warn
// record with its duration, rows and text (cut to maxLoggedSQL, without its values), a
// failed one an error record, except gorm.ErrRecordNotFound, which callers expect, and a
// statement cancelled because its caller went away;
// GORM's own messages keep their level. Each statement at info, GORM's LogMode(Info), is
// off unless asked for.
type gormLogger struct {
	log   *slog.Logger
	level logger.LogLevel
	slow  time.Duration
}

var (
	_ logger.Interface  = (*gormLogger)(nil)
	_ gorm.ParamsFilter = (*gormLogger)(nil)
)

func newGormLogger(o openOptions) *gormLogger {
	if o.logger == nil {
		o.logger = slog.Default()
	}
	return &gormLogger{log: o.logger, level: logger.Warn, slow: o.slow}
}

// LogMode returns a copy logging at level, as GORM's Debug and Session ask.
func (l *gormLogger) LogMode(level logger.LogLevel) logger.Interface {
	c := *l
	c.level = level
	return &c
}

// Info logs one of GORM's messages at info.
func (l *gormLogger) Info(ctx context.Context, msg string, data ...any) {
	if l.level >= logger.Info {
		l.log.InfoContext(ctx, "gorm: "+fmt.Sprintf(msg, data...))
	}
}

// Warn logs one of GORM's messages at warn.
func (l *gormLogger) Warn(ctx context.Context, msg string, data ...any) {
	if l.level >= logger.Warn {
		l.log.WarnContext(ctx, "gorm: "+fmt.Sprintf(msg, data...))
	}
}

// Error logs one of GORM's messages at error.
func (l *gormLogger) Error(ctx context.Context, msg string, data ...any) {
	if l.level >= logger.Error {
		l.log.ErrorContext(ctx, "gorm: "+fmt.Sprintf(msg, data...))
	}
}

// Trace logs a statement that failed or ran slow; fc, which formats the statement, runs
// only then.
func (l *gormLogger) Trace(ctx context.Context, begin time.Time, fc func() (sql string, rowsAffected int64), err error) {
	elapsed := time.Since(begin)
	var level slog.Level
	msg := "sql"
	switch {
	case l.level <= logger.Silent:
		return
	case errors.Is(err, context.Canceled):
		// The caller went away (a client disconnected, a socket closed): nothing failed.
		return
	case err != nil && !errors.Is(err, gorm.ErrRecordNotFound):
		level, msg = slog.LevelError, "sql failed"
	case l.slow > 0 && elapsed > l.slow && l.level >= logger.Warn:
		level, msg = slog.LevelWarn, "slow sql"
	case l.level >= logger.Info:
		level = slog.LevelInfo
	default:
		return
	}
	if !l.log.Enabled(ctx, level) {
		return
	}
	sql, rows := fc()
	attrs := []slog.Attr{slog.String("duration", elapsed.String()), slog.Int64("rows", rows), slog.String("sql", cutSQL(sql))}
	if level == slog.LevelError {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	l.log.LogAttrs(ctx, level, msg, attrs...)
}

// ParamsFilter leaves a statement's values out of its logged text: they are payloads and
// subscriber ids.
func (l *gormLogger) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}

// cutSQL is sql's first maxLoggedSQL bytes at most, not splitting a UTF-8 sequence, and
// how many bytes were left out.
func cutSQL(sql string) string {
	if len(sql) <= maxLoggedSQL {
		return sql
	}
	n := maxLoggedSQL
	for back := 0; back < utf8.UTFMax-1 && !utf8.RuneStart(sql[n]); back++ {
		n--
	}
	return fmt.Sprintf("%s…[%d bytes cut]", sql[:n], len(sql)-n)
}
