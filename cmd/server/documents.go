package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"messages/graph"
	"messages/graph/manifest"
	"messages/models"
	"messages/models/store"
)

// documentsCommand manages the trusted documents (docs/browsers.md): the documents
// frontends were built with, which subscriber sessions may be limited to.
func (a *app) documentsCommand() *cli.Command {
	return &cli.Command{
		Name:  "documents",
		Usage: "manage trusted documents: the GraphQL documents frontends were built with (persisted operations)",
		Description: `Trusted documents are global: a frontend build serves every environment, and the
caller's credentials still decide whose data a document reads. What is added or removed
reaches every running instance within seconds (TRUSTED_DOCUMENTS, docs/browsers.md).`,
		HideHelpCommand: true,
		Commands: []*cli.Command{
			{
				Name: "add",
				Usage: "trust the documents of manifests as their build tools write them: relay-compiler's persisted queries, " +
					"@apollo/generate-persisted-query-manifest's manifest, GraphQL Code Generator's persisted-documents.json",
				Description: `Every document of every file is parsed and validated against the schema first; one
that fails refuses the whole manifest (its file, its id and the error are named, and
nothing of any file is added). An id that is a digest (64, 40 or 32 hex digits, or sha256:<hex>)
must be the SHA-256, SHA-1 or MD5 of its text.`,
				ArgsUsage: "FILE...",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if !cmd.Args().Present() {
						return usageError{errors.New("documents add takes one or more manifest files")}
					}
					manifests, err := readManifests(cmd.Args().Slice())
					if err != nil {
						return err
					}
					return a.withStore(ctx, cmd, func(s *store.Store) error {
						// Every file or none.
						added := make([]int, len(manifests))
						err := s.Transaction(ctx, func(ctx context.Context) error {
							for i, m := range manifests {
								var err error
								if added[i], err = s.TrustDocuments(ctx, m.docs); err != nil {
									return fmt.Errorf("%s: %w; nothing was added", m.name, err)
								}
							}
							return nil
						})
						if err != nil {
							return err
						}
						for i, m := range manifests {
							fmt.Fprintf(a.stderr, "%s (%s): %d trusted, %d new\n", m.name, m.format, len(m.docs), added[i])
						}
						return nil
					})
				},
			},
			{
				Name:  "list",
				Usage: "list the trusted documents: id, SHA-256 of the text, operation, manifest, when added",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					return a.withStore(ctx, cmd, func(s *store.Store) error {
						docs, err := s.TrustedDocuments(ctx)
						if err != nil {
							return err
						}
						tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "ID\tSHA256\tOPERATION\tMANIFEST\tADDED")
						for _, d := range docs {
							fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.ID, d.SHA256, orDash(d.OperationName), orDash(d.Manifest), d.CreatedAt.UTC().Format(time.RFC3339))
						}
						return tw.Flush()
					})
				},
			},
			{
				Name:      "remove",
				Usage:     "stop trusting a document, by its id or sha256:<hex> (every id of that text)",
				ArgsUsage: "ID",
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Args().Len() != 1 {
						return usageError{errors.New("documents remove takes one ID")}
					}
					id := cmd.Args().First()
					return a.withStore(ctx, cmd, func(s *store.Store) error {
						n, err := s.RemoveTrustedDocument(ctx, id)
						if err != nil {
							return err
						}
						fmt.Fprintf(a.stderr, "removed %s\n", plural(n, "document"))
						return nil
					})
				},
			},
		},
	}
}

// trustedManifest is one manifest file, read and checked.
type trustedManifest struct {
	name   string
	format manifest.Format
	docs   []models.TrustedDocument
}

// readManifests reads every file and checks every document against the schema, before
// anything is added: one that fails is the error, naming its file and id.
func readManifests(paths []string) ([]trustedManifest, error) {
	var out []trustedManifest
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(path)
		format, entries, err := manifest.Read(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w; nothing was added", path, err)
		}
		m := trustedManifest{name: name, format: format}
		for _, e := range entries {
			op, err := graph.CompileDocument(e.Body)
			if err != nil {
				return nil, fmt.Errorf("%s: document %q does not validate against the schema: %w; nothing was added", path, e.ID, err)
			}
			m.docs = append(m.docs, models.TrustedDocument{ID: e.ID, SHA256: e.SHA256, Body: e.Body, OperationName: op, Manifest: name})
		}
		out = append(out, m)
	}
	return out, nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
