package store_test

// On a Vitess deployment (dbtest.DialectVitess): where the rows land, read from each
// shard's own database rather than through vtgate.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/migrate"
	"messages/models/store"
)

// Every environment's rows, in every sharded table, are on exactly one shard, the one its
// id hashes to; the unsharded tables' rows are on the unsharded keyspace's one shard; and
// two environments on different shards each find only their own messages.
func TestEveryEnvironmentLivesOnOneShard(t *testing.T) {
	dbtest.EachVitess(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		// Environments until both shards hold at least one (ids are random: each lands on
		// either shard with even odds).
		tenants := map[string]*dbtest.Tenant{}
		placed := map[string]string{} // environment → shard
		for i := 0; len(tenants) < 2 || len(slices.Compact(slices.Sorted(maps.Values(placed)))) < 2; i++ {
			if i == 64 {
				t.Fatalf("64 environments all landed on %v", placed)
			}
			tn := dbtest.NewTenant(t, s, fmt.Sprint("tenant-", i))
			tenants[tn.Env.ID] = tn
			placed[tn.Env.ID] = dbtest.ShardOf(t, s, tn.Env.ID)
		}
		for _, tn := range tenants {
			sub := tn.Subscriber(t, "alice")
			tpl := tn.Template(t, "welcome")
			for range 3 {
				tn.Message(t, sub, tpl, nil)
			}
		}

		v, err := migrate.LoadVSchema()
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]map[string][]string{} // table → environment → shards holding rows
		for _, shard := range dbtest.VitessShards(t) {
			db := dbtest.ShardDB(t, shard)
			keyspace, _, _ := strings.Cut(shard, "/")
			for table, spec := range v[keyspace].Tables {
				column := "environment_id"
				if !v[keyspace].Sharded {
					column = map[string]string{"environments": "id", "api_keys": "environment_id"}[table]
					if column == "" {
						continue // bookkeeping: no environment
					}
				} else if len(spec.ColumnVindexes) > 0 {
					column = spec.ColumnVindexes[0].Column
				}
				rows, err := db.QueryContext(ctx, fmt.Sprintf("SELECT DISTINCT `%s` FROM `%s`", column, table))
				if err != nil {
					t.Fatalf("%s on %s: %v", table, shard, err)
				}
				for rows.Next() {
					var env string
					if err := rows.Scan(&env); err != nil {
						t.Fatal(err)
					}
					if found[table] == nil {
						found[table] = map[string][]string{}
					}
					found[table][env] = append(found[table][env], shard)
				}
				if err := rows.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, table := range []string{"messages", "subscribers", "templates", "message_counts"} {
			for env := range tenants {
				if diff := cmp.Diff([]string{placed[env]}, found[table][env]); diff != "" {
					t.Errorf("%s of environment %s on the wrong shards (-placed +found):\n%s", table, env, diff)
				}
			}
		}
		for _, table := range []string{"environments", "api_keys"} {
			for env := range tenants {
				if diff := cmp.Diff([]string{"messages_global/0"}, found[table][env]); diff != "" {
					t.Errorf("%s of environment %s (-want +found):\n%s", table, env, diff)
				}
			}
		}
		for env := range tenants {
			p, err := s.ListMessages(ctx, env, models.ListFilter{}, models.Page{Size: 10}, models.ListOptions{Count: true})
			if err != nil {
				t.Fatal(err)
			}
			if p.TotalCount != 3 || len(p.Data) != 3 {
				t.Errorf("environment %s lists %d of %d messages, want its own 3", env, len(p.Data), p.TotalCount)
			}
		}
	})
}
