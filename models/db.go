package models

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/pressly/goose/v3"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Dialects the store speaks.
const (
	DialectMySQL  = "mysql"
	DialectSQLite = "sqlite"
)

// DefaultDatabaseURL is the embedded database a first run creates when DATABASE_URL is unset.
const DefaultDatabaseURL = "sqlite:./data/messages.db"

//go:embed migrations
var migrations embed.FS

// Store is the only place that speaks SQL. Every method takes the caller's environment
// id and filters by it.
type Store struct {
	db      *gorm.DB
	dialect string
	// Now is the clock; tests replace it for fixed timestamps.
	Now func() time.Time
	// CountTTL is how long a list's totalCount may be reused (see countCache); 0 counts
	// on every request.
	CountTTL time.Duration
	counts   countCache
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
// sqlite:path. It does not migrate; call Migrate.
func Open(ctx context.Context, databaseURL string, pool PoolOptions) (*Store, error) {
	dialect, dialector, err := dialectorFor(databaseURL)
	if err != nil {
		return nil, err
	}
	db, err := gorm.Open(dialector, &gorm.Config{
		TranslateError: true,
		Logger: logger.New(log.New(os.Stderr, "", log.LstdFlags), logger.Config{
			SlowThreshold:             500 * time.Millisecond,
			LogLevel:                  logger.Warn,
			IgnoreRecordNotFoundError: true,
			ParameterizedQueries:      true,
		}),
		NowFunc: func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) },
	})
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
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
	s := &Store{db: db, dialect: dialect, Now: time.Now}
	if err := s.Ping(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	return s, nil
}

func dialectorFor(databaseURL string) (string, gorm.Dialector, error) {
	switch {
	case strings.HasPrefix(databaseURL, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(databaseURL, "sqlite:"), "//")
		if path == "" {
			return "", nil, errors.New("DATABASE_URL: sqlite: needs a file path, e.g. sqlite:./data/messages.db")
		}
		if dir := filepath.Dir(path); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", nil, fmt.Errorf("create database directory: %w", err)
			}
		}
		dsn := path + "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)"
		return DialectSQLite, sqlite.Open(dsn), nil
	case strings.HasPrefix(databaseURL, "mysql://"):
		dsn, err := MySQLDSN(databaseURL)
		if err != nil {
			return "", nil, err
		}
		return DialectMySQL, mysql.New(mysql.Config{DSN: dsn}), nil
	default:
		return "", nil, errors.New("DATABASE_URL must start with mysql:// or sqlite:")
	}
}

// MySQLDSN turns mysql://user:pass@host:port/db?param=value into a go-sql-driver DSN with
// the settings the store relies on: UTC DATETIME parsing, utf8mb4, and clientFoundRows so
// an UPDATE that changes nothing still reports the row it matched.
func MySQLDSN(databaseURL string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", errors.New("DATABASE_URL is not a valid URL")
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
	cfg.Timeout = 5 * time.Second
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	for k, v := range u.Query() {
		cfg.Params[k] = v[0]
	}
	return cfg.FormatDSN(), nil
}

// Dialect names the database in use: DialectMySQL or DialectSQLite.
func (s *Store) Dialect() string { return s.dialect }

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

// Close releases the connection pool.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

func (s *Store) migrator() (*goose.Provider, error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, err
	}
	dir, dialect := "migrations/sqlite", goose.DialectSQLite3
	if s.dialect == DialectMySQL {
		dir, dialect = "migrations/mysql", goose.DialectMySQL
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(dialect, sqlDB, sub)
}

// Migrate applies every pending migration. It refuses to run against a database whose
// schema is newer than this binary knows.
func (s *Store) Migrate(ctx context.Context) error {
	p, err := s.migrator()
	if err != nil {
		return err
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil && !errors.Is(err, goose.ErrVersionNotFound) {
		// A fresh database has no version table yet; goose creates it in Up.
		current = 0
	}
	sources := p.ListSources()
	if len(sources) > 0 && current > sources[len(sources)-1].Version {
		return fmt.Errorf("database schema version %d is newer than this binary's %d: upgrade the binary", current, sources[len(sources)-1].Version)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
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
