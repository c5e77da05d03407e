package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"messages/models"
	"messages/models/cluster"
	"messages/models/migrate"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
)

// Dialects the store speaks.
const (
	DialectMySQL  = "mysql"
	DialectSQLite = "sqlite"
)

// DefaultDatabaseURL is the embedded database a first run creates when DATABASE_URL is unset.
const DefaultDatabaseURL = "sqlite:./data/messages.db"

// Store is the only place that speaks SQL. Every method takes the caller's environment
// id and filters by it.
type Store struct {
	db      *gorm.DB
	dialect string
	vitess  bool // the MySQL-protocol database is Vitess's vtgate (Vitess)
	// o are the settings Open was given, fixed from then on.
	o           openOptions
	retryStats  cluster.RetryStats
	auth        authCache
	templates   recordCache[models.Template]
	subscribers recordCache[models.Subscriber]
	boundaries  boundaryCache
	statements  statementCounter
	// batchPool is the MySQL pool of batched marks (markbatch.go), the only one with
	// multi-statements; nil on SQLite.
	batchPool *sql.DB
	// replicas serve lists when DATABASE_READ_URLS names some (UseReplicas); nil otherwise.
	replicas *replicaSet
	// gormLog is the logger of every handle the store opens (see WithLogger).
	gormLog *gormLogger
	// jsonFaults logs the rows read with a JSON column another writer broke (brokenjson.go).
	jsonFaults *jsonFaults
	// wrote is signalled, without waiting, when this process writes messages (Wrote).
	wrote chan struct{}
	// listIndexes are the indexes of messages a list page may name (listindex.go).
	listIndexes listIndexes
	// shards are the handles of single shards through vtgate (OnShard), opened on first
	// use; vtgateDSN is what they are opened from. Vitess only.
	shards    shardHandles
	vtgateDSN string
	// slots are the shards' bulkheads (EnterShard). Vitess only.
	slots shardSlots
}

// PoolOptions size the MySQL connection pool.
type PoolOptions struct {
	MaxOpenConns    int
	MaxIdleConns    int
	ConnMaxLifetime time.Duration
	ConnMaxIdleTime time.Duration
}

// DefaultPool suits a 2-core instance. ConnMaxLifetime stays well below MySQL's
// wait_timeout so the pool never hands out a connection the server already closed.
var DefaultPool = PoolOptions{MaxOpenConns: 20, MaxIdleConns: 10, ConnMaxLifetime: 5 * time.Minute, ConnMaxIdleTime: time.Minute}

// Open connects to a database named by a URL: mysql://user:pass@host:3306/db or
// sqlite:path. It does not migrate; call Migrate. GORM logs to slog.Default() unless
// WithLogger says otherwise.
func Open(ctx context.Context, databaseURL string, pool PoolOptions, opts ...OpenOption) (*Store, error) {
	o := defaultOpenOptions()
	for _, opt := range opts {
		opt(&o)
	}
	dialect, dialector, err := dialectorFor(databaseURL, o.hostRetryAfter, !o.mysqlServer)
	if err != nil {
		return nil, err
	}
	// One clock: GORM stamps the rows it times with the store's Now, so a test that fixes
	// the clock fixes every timestamp.
	s := &Store{dialect: dialect, o: o, auth: newAuthCache(), templates: newTemplateCache(), subscribers: newSubscriberCache(), boundaries: newBoundaryCache(),
		gormLog: newGormLogger(o), jsonFaults: newJSONFaults(o), wrote: make(chan struct{}, 1)}
	db, err := gorm.Open(dialector, s.gormConfig())
	if err != nil {
		return nil, openError(err, databaseURL)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	if dialect == DialectSQLite {
		// One connection serialises writers, so the embedded database never answers
		// "database is locked" under concurrent requests.
		sqlDB.SetMaxOpenConns(1)
	} else {
		sqlDB.SetMaxOpenConns(pool.MaxOpenConns)
		sqlDB.SetMaxIdleConns(pool.MaxIdleConns)
		sqlDB.SetConnMaxLifetime(pool.ConnMaxLifetime)
		sqlDB.SetConnMaxIdleTime(pool.ConnMaxIdleTime)
	}
	s.db = db
	if err := errors.Join(s.countStatements(db), s.containJSON(db)); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, openError(err, databaseURL)
	}
	if dialect == DialectMySQL {
		if s.vitess, err = migrate.IsVitess(ctx, sqlDB); err != nil {
			_ = sqlDB.Close()
			return nil, openError(err, databaseURL)
		}
		if !s.vitess && !o.mysqlServer {
			// The connections so far set no session time zone: vtgate checks a SET
			// time_zone on one shard of its choice (the first of the first keyspace), so
			// with that shard down every new connection would fail, every tenant's with
			// it; Vitess's shards run in UTC instead (checkUTC). MySQL gets it from here on.
			_ = sqlDB.Close()
			return Open(ctx, databaseURL, pool, append(opts, func(o *openOptions) { o.mysqlServer = true })...)
		}
		if s.vitess {
			if err := checkUTC(ctx, sqlDB); err != nil {
				_ = sqlDB.Close()
				return nil, err
			}
		}
		dsn, err := mysqlDSN(databaseURL, s.vitess)
		if err == nil {
			s.batchPool, err = openBatchPool(dsn, o.hostRetryAfter, pool)
		}
		if s.vitess {
			s.vtgateDSN = dsn
		}
		if err != nil {
			_ = sqlDB.Close()
			return nil, err
		}
	}
	return s, nil
}

// Now is the store's clock (WithClock).
func (s *Store) Now() time.Time { return s.o.now() }

// gormConfig is how the store's handles are opened, the primary's and the replicas'.
func (s *Store) gormConfig() *gorm.Config {
	return &gorm.Config{
		TranslateError: true,
		Logger:         s.gormLog,
		NowFunc:        func() time.Time { return s.Now().UTC().Truncate(time.Millisecond) },
	}
}

// openError says what to fix when the database refuses the server or cannot be reached.
// It keeps err wrapped, so callers still tell a passing outage (IsUnavailable) from a
// mistake that waiting cannot fix.
func openError(err error, databaseURL string) error {
	u, perr := url.Parse(databaseURL)
	if perr != nil || !strings.HasPrefix(databaseURL, "mysql://") {
		return fmt.Errorf("open database %s: %w", RedactURL(databaseURL), err)
	}
	host, user, name := u.Host, u.User.Username(), strings.TrimPrefix(u.Path, "/")
	var myErr *mysqldriver.MySQLError
	if errors.As(err, &myErr) {
		switch myErr.Number {
		case 1045: // ER_ACCESS_DENIED_ERROR
			return fmt.Errorf("MySQL at %s refused user %q: check the user name and password in DATABASE_URL: %w", host, user, err)
		case 1044: // ER_DBACCESS_DENIED_ERROR
			return fmt.Errorf("MySQL user %q may not use database %q: grant it SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, INDEX, DROP, TRIGGER on %s.* (docs/operating.md: Running on MySQL): %w", user, name, name, err)
		case 1049: // ER_BAD_DB_ERROR
			return fmt.Errorf("database %q does not exist on MySQL at %s: create it with CREATE DATABASE `%s` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, or fix its name in DATABASE_URL: %w", name, host, name, err)
		}
	}
	if models.IsUnavailable(err) {
		return fmt.Errorf("MySQL at %s is unreachable (is it running, and does DATABASE_URL name its host and port?): %w", host, err)
	}
	return fmt.Errorf("open database on MySQL at %s: %w", host, err)
}

// CheckDatabaseURL says what is wrong with a database URL without connecting: it must be
// mysql://user:password@host:3306/database or sqlite:path.
func CheckDatabaseURL(databaseURL string) error {
	switch {
	case strings.HasPrefix(databaseURL, "sqlite:"):
		if sqlitePath(databaseURL) == "" {
			return errors.New("DATABASE_URL: sqlite: needs a file path, e.g. sqlite:./data/messages.db")
		}
	case strings.HasPrefix(databaseURL, "mysql://"):
		if _, err := MySQLDSN(databaseURL); err != nil {
			return err
		}
		if u, _ := url.Parse(databaseURL); strings.Trim(u.Path, "/") == "" {
			return errors.New("DATABASE_URL names no database: put it after the host, e.g. mysql://user:password@host:3306/messages")
		}
	default:
		given := "DATABASE_URL"
		if _, err := url.Parse(databaseURL); err == nil {
			given = fmt.Sprintf("DATABASE_URL %q", RedactURL(databaseURL))
		}
		return fmt.Errorf("%s is not one of the two accepted forms: mysql://user:password@host:3306/database or sqlite:path/to/file.db", given)
	}
	return nil
}

func sqlitePath(databaseURL string) string {
	return strings.TrimPrefix(strings.TrimPrefix(databaseURL, "sqlite:"), "//")
}

func dialectorFor(databaseURL string, hostRetryAfter time.Duration, noTimeZone bool) (string, gorm.Dialector, error) {
	if err := CheckDatabaseURL(databaseURL); err != nil {
		return "", nil, err
	}
	if strings.HasPrefix(databaseURL, "mysql://") {
		dsn, err := mysqlDSN(databaseURL, noTimeZone)
		if err != nil {
			return "", nil, err
		}
		return DialectMySQL, mysqlDialector(dsn, hostRetryAfter), nil
	}
	path := sqlitePath(databaseURL)
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, fmt.Errorf("create the directory of the SQLite database %s: %w", path, err)
		}
	}
	dsn := path + "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)"
	return DialectSQLite, sqlite.Open(dsn), nil
}

// MySQLDSN turns mysql://user:pass@host:port/db?param=value into a go-sql-driver DSN with
// the settings the store relies on: UTC DATETIME parsing, utf8mb4, and clientFoundRows so
// an UPDATE that changes nothing still reports the row it matched.
func MySQLDSN(databaseURL string) (string, error) { return mysqlDSN(databaseURL, false) }

// mysqlDSN is MySQLDSN, without the session time zone when noTimeZone (Open).
func mysqlDSN(databaseURL string, noTimeZone bool) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		// url.Parse's message would repeat the URL, password included.
		return "", errors.New("DATABASE_URL is not a valid URL: write it as mysql://user:password@host:3306/database, percent-encoding any of :/@?#% in the user or password")
	}
	cfg := mysqldriver.NewConfig()
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	if u.Port() == "" {
		cfg.Addr = u.Host + ":3306"
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.ClientFoundRows = true
	cfg.Collation = "utf8mb4_bin"
	// Arguments are escaped into the statement (safe with utf8mb4), so a statement is one
	// round trip and one parse, where a server-side prepared statement per query is two
	// round trips, two parses and a plan made without the values: MariaDB then plans an
	// inbox page around a filesort, and spends more time planning it than running it.
	cfg.InterpolateParams = true
	// ...and times as the columns hold them: nanoseconds in a literal make MariaDB compare
	// a TIMESTAMP(6) with text, which no index range can serve.
	if err := cfg.Apply(mysqldriver.TimeTruncate(time.Microsecond)); err != nil {
		return "", err
	}
	cfg.Timeout = 5 * time.Second
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	if noTimeZone {
		delete(cfg.Params, "time_zone")
	}
	for k, v := range u.Query() {
		cfg.Params[k] = v[0]
	}
	return cfg.FormatDSN(), nil
}

// checkUTC refuses a Vitess deployment whose MySQL does not run in UTC: the store reads
// and writes times as UTC, and on vtgate it sets no session time zone (Open). A shard
// that does not answer the question within 2 s (vtgate asks one of its choice) does not
// stop the store: the instance serves the other shards' tenants.
func checkUTC(ctx context.Context, db *sql.DB) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var zone, system string
	if err := db.QueryRowContext(ctx, "SELECT @@time_zone, @@system_time_zone").Scan(&zone, &system); err != nil {
		return nil
	}
	if zone == "SYSTEM" {
		zone = system
	}
	switch zone {
	case "+00:00", "UTC", "Etc/UTC", "GMT", "Etc/GMT", "Universal", "Zulu":
		return nil
	}
	return fmt.Errorf("Vitess: the shards' MySQL run in time zone %q; run them in UTC (default-time-zone = '+00:00' in my.cnf)", zone)
}

// Dialect names the database in use: DialectMySQL or DialectSQLite.
func (s *Store) Dialect() string { return s.dialect }

// Vitess reports whether the MySQL-protocol database is Vitess's vtgate: a sharded
// deployment (docs/scaling.md), whose parser and routing differ from MySQL's in the few
// places the store names.
func (s *Store) Vitess() bool { return s.vitess }

// DB exposes the GORM handle, for tests that inspect the database directly.
func (s *Store) DB() *gorm.DB { return s.db }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("database unreachable: %w", err)
	}
	return nil
}

// Close releases the connection pool, and the replicas' with their checks.
func (s *Store) Close() error {
	var replicas error
	if s.replicas != nil {
		replicas = s.replicas.close()
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	var batches error
	if s.batchPool != nil {
		batches = s.batchPool.Close()
	}
	return errors.Join(sqlDB.Close(), batches, replicas, s.shards.close())
}

// RedactURL hides the password of a database URL, for logs.
func RedactURL(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil || u.User == nil {
		return databaseURL
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// mysqlDialector is GORM's MySQL dialector for a DSN made by MySQLDSN: the driver's own
// for one host, a cluster.NewHostsConnector pool for several.
func mysqlDialector(dsn string, retryAfter time.Duration) gorm.Dialector {
	if c, ok := cluster.NewHostsConnector(dsn, retryAfter); ok {
		return mysql.New(mysql.Config{DSN: dsn, Conn: sql.OpenDB(c)})
	}
	return mysql.New(mysql.Config{DSN: dsn})
}
