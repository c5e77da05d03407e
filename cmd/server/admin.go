package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"messages/models"
	"messages/models/jsonl"
	"messages/models/migrate"
	"messages/models/seed"
	"messages/models/store"
)

func (a *app) migrateCommand() *cli.Command {
	return &cli.Command{
		Name:  "migrate",
		Usage: "apply, roll back or list database migrations (no subcommand: up)",
		Description: `The schema is versioned SQL embedded in this binary, one set for MySQL and one for
SQLite. Every other command, serve included, applies pending migrations first, so
"migrate up" is for migrating ahead of a rollout. A database migrated by a newer binary
is refused: to go back to an older binary, run "migrate down" with the newer one first.`,
		DefaultCommand:  "up",
		HideHelpCommand: true,
		Commands: []*cli.Command{
			{
				Name:  "up",
				Usage: "apply every pending migration",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return a.withDatabase(ctx, cmd, func(s *store.Store) error {
						applied, err := s.MigrateUp(ctx)
						for _, m := range applied {
							fmt.Fprintf(a.stderr, "applied %d %s\n", m.Version, m.Name)
						}
						if err != nil {
							return err
						}
						return a.printVersion(ctx, s, "database is up to date")
					})
				},
			},
			{
				Name:  "down",
				Usage: "roll back the most recent migration, one step",
				Description: `Roll back with the binary that applied the migration: only it has the SQL to undo
it. Every command but migrate applies pending migrations again, serve included, so
deploy the older binary before starting anything else.`,
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return a.withDatabase(ctx, cmd, func(s *store.Store) error {
						m, err := s.MigrateDown(ctx)
						if err != nil {
							return err
						}
						fmt.Fprintf(a.stderr, "rolled back %d %s\n", m.Version, m.Name)
						return a.printVersion(ctx, s, "database rolled back")
					})
				},
			},
			{
				Name:  "status",
				Usage: "list every migration: version, name, applied or pending, and when (changes nothing)",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return a.withDatabase(ctx, cmd, func(s *store.Store) error {
						status, err := s.MigrationStatus(ctx)
						if err != nil {
							return err
						}
						tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "VERSION\tNAME\tSTATE\tAPPLIED AT")
						var newest, binary int64
						for _, m := range status {
							name, state, at := m.Name, "pending", "-"
							if m.Applied {
								state, at = "applied", m.AppliedAt.UTC().Format(time.RFC3339)
								newest = max(newest, m.Version)
							}
							if m.Unknown {
								name = "(unknown)" // applied by a newer binary
							} else {
								binary = m.Version
							}
							fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", m.Version, name, state, at)
						}
						if err := tw.Flush(); err != nil {
							return err
						}
						if newest > binary {
							fmt.Fprintln(a.stderr, "note:", &migrate.SchemaTooNewError{Database: newest, Binary: binary})
						}
						return nil
					})
				},
			},
		},
	}
}

// printVersion tells, on stderr, the schema version the database is at now.
func (a *app) printVersion(ctx context.Context, s *store.Store, what string) error {
	status, err := s.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	var version int64
	pending := 0
	for _, m := range status {
		if m.Applied {
			version = max(version, m.Version)
		} else {
			pending++
		}
	}
	fmt.Fprintf(a.stderr, "%s: schema version %d, %d pending\n", what, version, pending)
	return nil
}

func (a *app) apikeyCommand() *cli.Command {
	return &cli.Command{
		Name:  "apikey",
		Usage: "manage API keys",
		Commands: []*cli.Command{
			{
				Name:  "create",
				Usage: "create a key for an environment (created if new); prints the environment's applicationIdentifier, then the key alone on the last line",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "environment-id", Usage: "24-hex id of the environment the key unlocks", Required: true},
					&cli.StringFlag{Name: "organization-id", Usage: "24-hex organization id, used only when the environment is new (default: a new id)"},
					&cli.StringFlag{Name: "name", Usage: "label shown by apikey list"},
				},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return a.withStoreKeys(ctx, cmd, func(s *store.Store, keys keySecrets) error {
						if keys.sealer.Opens() && !keys.sealer.Enabled() {
							return usageError{errors.New("API_KEY_SECRET is not set, only API_KEY_SECRET_PREVIOUS: a new key is sealed under the current secret only, " +
								"never under the one being retired; set API_KEY_SECRET and create the key again")}
						}
						check, err := keys.check(ctx, s)
						if err != nil {
							return err
						}
						if len(check.Unopenable) > 0 {
							fmt.Fprintln(a.stderr, "warning:", keys.partly(check))
						}
						envID := cmd.String("environment-id")
						if _, err := s.EnsureEnvironment(ctx, envID, cmd.String("organization-id"), ""); err != nil {
							return err
						}
						key, rec, err := s.CreateAPIKey(ctx, envID, cmd.String("name"))
						if err != nil {
							return err
						}
						app, err := s.ApplicationIdentifier(ctx, envID)
						if err != nil {
							return err
						}
						fmt.Fprintf(a.stdout, "applicationIdentifier: %s\n", app)
						fmt.Fprintln(a.stdout, key)
						if rec.Sealed == nil {
							fmt.Fprintln(a.stderr, "API_KEY_SECRET is not set: this key is stored as a hash only, so inbox sessions cannot be opened with a subscriberHash keyed with it")
						}
						fmt.Fprintf(a.stderr, "created API key %s for environment %s; it is shown only once\n", rec.ID, envID)
						return nil
					})
				},
			},
			{
				Name:  "list",
				Usage: "list keys (never the keys themselves: id, environment and its applicationIdentifier, name, last 4 characters, state)",
				Flags: []cli.Flag{&cli.StringFlag{Name: "environment-id", Usage: "only this environment's keys"}},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return a.withStore(ctx, cmd, func(s *store.Store) error {
						keys, err := s.ListAPIKeys(ctx, cmd.String("environment-id"))
						if err != nil {
							return err
						}
						apps, err := applications(ctx, s, keys)
						if err != nil {
							return err
						}
						tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "ID\tENVIRONMENT\tAPPLICATION\tNAME\tENDS WITH\tCREATED\tSTATE")
						for _, k := range keys {
							state := "active"
							switch {
							case k.RevokedAt != nil:
								state = "revoked " + k.RevokedAt.UTC().Format(time.RFC3339)
							case len(k.Sealed) == 0:
								state = "active, hash only"
							}
							fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t...%s\t%s\t%s\n", k.ID, k.EnvironmentID, apps[k.EnvironmentID], k.Name, k.Hint,
								k.CreatedAt.UTC().Format(time.RFC3339), state)
						}
						return tw.Flush()
					})
				},
			},
			{
				Name: "reseal",
				Usage: "seal every active key again under API_KEY_SECRET, after rotating it (the old secret in API_KEY_SECRET_PREVIOUS); " +
					"fails, naming how many, when a key could not be opened",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "forget-unopenable", Usage: "first store the keys no given secret opens as hashes only, " +
					"for a secret that is lost: they still authenticate, but subscriber hashes keyed with them are refused"}},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					forget := cmd.Bool("forget-unopenable")
					return a.withStoreKeys(ctx, cmd, func(s *store.Store, keys keySecrets) error {
						if !keys.sealer.Enabled() && !forget {
							return usageError{errors.New("apikey reseal needs API_KEY_SECRET, the secret to seal every key under " +
								"(during a rotation, the new one, and the old one in API_KEY_SECRET_PREVIOUS)")}
						}
						if forget {
							n, err := s.ForgetUnopenableSeals(ctx)
							if err != nil {
								return err
							}
							fmt.Fprintf(a.stderr, "%s that no given secret opens now stored as hashes only\n", plural(n, "key"))
						}
						if err := keys.keep(ctx, s); err != nil || !keys.sealer.Enabled() {
							return err
						}
						resealed, unopened, err := s.ResealAPIKeys(ctx)
						if err != nil {
							return err
						}
						fmt.Fprintf(a.stderr, "resealed %s\n", plural(resealed, "key"))
						if unopened > 0 {
							return fmt.Errorf("%s could not be opened: give the secret they were sealed under in API_KEY_SECRET_PREVIOUS "+
								"and run apikey reseal again; %s", plural(unopened, "key"), forgetUnopenableHint)
						}
						return nil
					})
				},
			},
			{
				Name:      "revoke",
				Usage:     "revoke a key by its id (from apikey list)",
				ArgsUsage: "KEY_ID",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 1 {
						return usageError{fmt.Errorf("apikey revoke takes one KEY_ID")}
					}
					return a.withStore(ctx, cmd, func(s *store.Store) error {
						if err := s.RevokeAPIKey(ctx, cmd.Args().First()); err != nil {
							return err
						}
						fmt.Fprintln(a.stderr, "revoked", cmd.Args().First())
						return nil
					})
				},
			},
		},
	}
}

func (a *app) importCommand() *cli.Command {
	return &cli.Command{
		Name:  "import",
		Usage: "load messages from JSON Lines (one Message record per line, with subscriber and template); all or nothing, except on a Galera node: every line checked, then committed in chunks, and a run that stopped is completed by running it again",
		Flags: []cli.Flag{&cli.StringFlag{Name: "file", Usage: "file to read, or - for stdin", Required: true},
			&cli.BoolFlag{Name: "restore-deleted", Usage: "write the file's messages even those deleted after the file was written (by default they stay deleted)"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			var r io.Reader = os.Stdin
			o := jsonl.ImportOptions{RestoreDeleted: cmd.Bool("restore-deleted")}
			if name := cmd.String("file"); name != "-" {
				f, err := os.Open(name)
				if err != nil {
					return err
				}
				defer f.Close()
				r = f
				// When the file was last written: what was deleted since stays deleted. A
				// stream has no such time, so every deletion remembered counts.
				if info, err := f.Stat(); err == nil {
					o.WrittenAt = info.ModTime()
				}
			}
			return a.withStore(ctx, cmd, func(s *store.Store) error {
				p := newProgress(a.stderr, -1, "importing")
				o.Progress = p.set
				stats, err := jsonl.ImportWith(ctx, s, r, o)
				p.done()
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stderr, "imported %s, %s, %s and %s from %s\n",
					plural(stats.Messages, "message"), plural(stats.Subscribers, "subscriber"),
					plural(stats.Templates, "template"), plural(stats.Environments, "environment"),
					plural(stats.Lines, "line"))
				if stats.Deleted > 0 {
					fmt.Fprintf(a.stderr, "%s deleted after the file was written stayed deleted (--restore-deleted writes them)\n",
						plural(stats.Deleted, "message"))
				}
				return nil
			})
		},
	}
}

func (a *app) exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write an environment's messages as JSON Lines on stdout (the import format)",
		Flags: []cli.Flag{&cli.StringFlag{Name: "environment-id", Usage: "environment to export", Required: true}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return a.withStore(ctx, cmd, func(s *store.Store) error {
				p := newProgress(a.stderr, -1, "exporting")
				n, err := jsonl.Export(ctx, s, cmd.String("environment-id"), a.stdout, p.set)
				p.done()
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stderr, "exported %d messages\n", n)
				return nil
			})
		},
	}
}

func (a *app) seedCommand() *cli.Command {
	return &cli.Command{
		Name:  "seed",
		Usage: "load synthetic, deterministic messages for demos and benchmarks",
		Flags: []cli.Flag{
			&cli.Int64Flag{Name: "seed", Usage: "random seed: the same seed gives the same data", Value: 1},
			&cli.IntFlag{Name: "messages", Usage: "messages to create", Value: 1000},
			&cli.IntFlag{Name: "subscribers", Usage: "subscribers to create", Value: 100},
			&cli.IntFlag{Name: "templates", Usage: "workflow templates to create", Value: 20},
			&cli.StringFlag{Name: "environment-id", Usage: "24-hex environment to seed (created if new)", Value: demoEnvironmentID},
			&cli.StringFlag{Name: "organization-id", Usage: "24-hex organization of a new environment", Value: demoOrganizationID},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			n := cmd.Int("messages")
			if n < 0 || cmd.Int("subscribers") < 1 || cmd.Int("templates") < 1 {
				return usageError{fmt.Errorf("--messages must be >= 0, --subscribers and --templates >= 1")}
			}
			return a.withStore(ctx, cmd, func(s *store.Store) error {
				p := newProgress(a.stderr, n, "seeding")
				start := time.Now()
				stats, err := seed.Generate(ctx, s, seed.Options{
					Seed: cmd.Int64("seed"), EnvironmentID: cmd.String("environment-id"), OrganizationID: cmd.String("organization-id"),
					Messages: n, Subscribers: cmd.Int("subscribers"), Templates: cmd.Int("templates"), Progress: p.set,
				})
				p.done()
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stderr, seededSummary(stats, time.Since(start)))
				return nil
			})
		},
	}
}

// seededSummary is seed's last line: what it wrote and where, in words, naming the demo
// environment as such, since seeding it is the default.
func seededSummary(st seed.Stats, took time.Duration) string {
	where := "environment " + st.EnvironmentID
	if st.EnvironmentID == demoEnvironmentID {
		where = "the demo environment " + st.EnvironmentID
	}
	return fmt.Sprintf("seeded %s, %s and %s into %s in %s", plural(st.Messages, "message"),
		plural(st.Subscribers, "subscriber"), plural(st.Templates, "template"), where, took.Round(10*time.Millisecond))
}

// plural counts n of a noun that takes an s.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// withDatabase opens the database without migrating it, for the migrate commands. GORM
// logs as serve does, on stderr.
func (a *app) withDatabase(ctx context.Context, cmd *cli.Command, f func(*store.Store) error) error {
	return a.openDatabase(ctx, cmd, func(s *store.Store, _ keySecrets) error { return f(s) })
}

// openDatabase opens the database, with the sealer of the configured API key secrets,
// and gives f the store and the secrets.
func (a *app) openDatabase(ctx context.Context, cmd *cli.Command, f func(*store.Store, keySecrets) error) error {
	c, err := loadConfig(cmd)
	if err != nil {
		return err
	}
	keys, err := keySealer(c)
	if err != nil {
		return err
	}
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	s, err := store.Open(openCtx, c.databaseURL, c.pool, append([]store.OpenOption{store.WithLogger(newLogger(a.stderr, c)),
		store.WithClock(a.now), store.WithKeySealer(keys.sealer), store.WithShardURLs(c.shardURLs)}, a.storeOptions...)...)
	cancel()
	if err != nil {
		return err
	}
	defer s.Close()
	return f(s, keys)
}

// withStore opens and migrates the database for one admin task, keeping a fresh
// development secret first (or refusing to replace one keys are sealed under).
func (a *app) withStore(ctx context.Context, cmd *cli.Command, f func(*store.Store) error) error {
	return a.withStoreKeys(ctx, cmd, func(s *store.Store, keys keySecrets) error {
		if err := keys.keep(ctx, s); err != nil {
			return err
		}
		return f(s)
	})
}

// withStoreKeys is withStore for a task that needs the secrets, and keeps a fresh
// development secret itself.
func (a *app) withStoreKeys(ctx context.Context, cmd *cli.Command, f func(*store.Store, keySecrets) error) error {
	return a.openDatabase(ctx, cmd, func(s *store.Store, keys keySecrets) error {
		migrateCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := s.Migrate(migrateCtx)
		cancel()
		if err != nil {
			return err
		}
		return f(s, keys)
	})
}

// applications returns the application identifier of each environment of keys, "-" for
// one that has none yet.
func applications(ctx context.Context, s *store.Store, keys []models.APIKey) (map[string]string, error) {
	apps := map[string]string{}
	for _, k := range keys {
		if _, ok := apps[k.EnvironmentID]; ok {
			continue
		}
		env, err := s.Environment(ctx, k.EnvironmentID)
		if err != nil {
			return nil, err
		}
		apps[k.EnvironmentID] = "-"
		if env.ApplicationIdentifier != nil {
			apps[k.EnvironmentID] = *env.ApplicationIdentifier
		}
	}
	return apps, nil
}
