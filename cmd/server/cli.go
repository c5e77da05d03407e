package main

import (
	"fmt"
	"messages/models/store"

	"github.com/urfave/cli/v3"
)

// config is the configuration shared by every subcommand: flags win over environment
// variables, which win over defaults.
type config struct {
	databaseURL string
	// shardURLs names each shard's database on Vitess, which migrations run on.
	shardURLs     map[string]string
	defaultDB     bool
	appEnv        string
	introspection bool
	pool          store.PoolOptions
	// apiKeySecret seals new API keys and opens them; apiKeySecretPrevious only opens
	// those sealed before a rotation (models/keyseal).
	apiKeySecret, apiKeySecretPrevious []byte
	// settings is every flag's effective value and where it came from, for serve to log.
	settings []setting
}

func (c config) development() bool { return c.appEnv != "production" }

func (a *app) command() *cli.Command {
	return prepare(&cli.Command{
		Name:            "server",
		Usage:           "message service: GraphQL, REST /v1 and admin tasks",
		UsageText:       "server [global options] [command [command options]]",
		Description:     rootDescription,
		Writer:          a.stdout,
		ErrWriter:       a.stderr,
		DefaultCommand:  "serve",
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "database-url", Usage: "mysql://user:pass@host:3306/db (several hosts of one cluster: host1:3306,host2:3306) or sqlite:path", Value: store.DefaultDatabaseURL, Sources: cli.EnvVars("DATABASE_URL")},
			&cli.StringFlag{Name: "database-shard-urls", Usage: "on Vitess (DATABASE_URL is vtgate): each shard's database as keyspace/shard=mysql://user:pass@host:port/db, comma-separated, which migrations run on (docs/scaling.md)", Sources: cli.EnvVars("DATABASE_SHARD_URLS")},
			&cli.StringFlag{Name: "app-env", Usage: "development (playground, introspection, text logs) or production (JSON logs)", Value: "development", Sources: cli.EnvVars("APP_ENV")},
			&cli.StringFlag{Name: "api-key-secret", Usage: "secret (at least 32 bytes) that seals new API keys so the inbox session can check subscriber hashes; the same on every instance (unset: keys are stored as hashes only; development keeps one in ./data)", Sources: cli.EnvVars("API_KEY_SECRET")},
			&cli.StringFlag{Name: "api-key-secret-previous", Usage: "the secret API keys were sealed with before the current one: still opens them, and never seals a new one, until apikey reseal has run", Sources: cli.EnvVars("API_KEY_SECRET_PREVIOUS")},
			&cli.IntFlag{Name: "db-max-open-conns", Usage: "MySQL connection pool size", Value: store.DefaultPool.MaxOpenConns, Sources: cli.EnvVars("DB_MAX_OPEN_CONNS")},
		},
		Commands: []*cli.Command{
			a.serveCommand(),
			a.migrateCommand(),
			a.apikeyCommand(),
			a.importCommand(),
			a.exportCommand(),
			a.seedCommand(),
			a.documentsCommand(),
		},
	})
}

// loadConfig reads the shared flags.
func loadConfig(cmd *cli.Command) (config, error) {
	c := config{
		databaseURL: cmd.String("database-url"),
		defaultDB:   !cmd.IsSet("database-url"),
		appEnv:      cmd.String("app-env"),
		pool:        store.DefaultPool,
		settings:    settingsOf(cmd),
	}
	if v := cmd.String("api-key-secret"); v != "" {
		c.apiKeySecret = []byte(v)
	}
	if v := cmd.String("api-key-secret-previous"); v != "" {
		c.apiKeySecretPrevious = []byte(v)
	}
	if err := store.CheckDatabaseURL(c.databaseURL); err != nil {
		return c, usageError{err}
	}
	shards, err := store.ParseShardURLs(cmd.String("database-shard-urls"))
	if err != nil {
		return c, usageError{err}
	}
	c.shardURLs = shards
	if c.appEnv != "development" && c.appEnv != "production" {
		return c, usageError{fmt.Errorf("APP_ENV must be development or production, got %q", c.appEnv)}
	}
	if n := cmd.Int("db-max-open-conns"); n > 0 {
		c.pool.MaxOpenConns = n
		c.pool.MaxIdleConns = min(c.pool.MaxIdleConns, n)
	} else {
		return c, usageError{fmt.Errorf("DB_MAX_OPEN_CONNS must be positive, got %d", n)}
	}
	return c, nil
}
