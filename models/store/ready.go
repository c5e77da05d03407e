package store

import "context"

// MigrationsApplied reports whether the database is at this binary's schema, for
// readiness probes: every row of MigrationStatus applied, none unknown (a newer binary's
// schema is not one this binary can serve). Like MigrationStatus it only reads, so probing
// a fresh database leaves it untouched. An error means the database could not be asked.
func (s *Store) MigrationsApplied(ctx context.Context) (bool, error) {
	status, err := s.MigrationStatus(ctx)
	if err != nil {
		return false, err
	}
	for _, m := range status {
		if !m.Applied || m.Unknown {
			return false, nil
		}
	}
	return true, nil
}
