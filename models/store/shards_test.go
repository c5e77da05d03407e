package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/store"
)

// The server places an environment on a shard as vtgate does (the xxhash vindex over the
// shards' key ranges), so that its bulkhead counts a request against the shard that will
// serve it.
func TestEnterShardPlacesEnvironmentsAsVTGate(t *testing.T) {
	t.Parallel()
	dbtest.EachVitess(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(32, 1))
		shards := map[string]int{}
		for range 64 {
			id := fmt.Sprintf("%016x%08x", rng.Uint64(), rng.Uint32())
			want := dbtest.ShardOf(t, s, id)
			if got := s.ShardHolding(ctx, id); got != want {
				t.Fatalf("environment %s: placed on %q, vtgate places it on %q", id, got, want)
			}
			shards[want]++
		}
		if len(shards) < 2 {
			t.Fatalf("64 environments on %v: the test needs both shards", shards)
		}
	})
}

// A shard's requests take at most three quarters of the pool: past that they wait for
// one of their own shard's slots, until their deadline (unavailable, 503), while another
// shard's requests take theirs at once.
func TestEnterShardBoundsOneShard(t *testing.T) {
	t.Parallel()
	dbtest.EachVitess(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		var a, b string
		for i := 0; a == "" || b == ""; i++ {
			id := fmt.Sprintf("%024x", i)
			switch shard := s.ShardHolding(ctx, id); {
			case shard == "messages/-80" && a == "":
				a = id
			case shard == "messages/80-" && b == "":
				b = id
			}
		}
		slots := store.DefaultPool.MaxOpenConns * 3 / 4
		var held []func()
		for range slots {
			release, err := s.EnterShard(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, release)
		}
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		began := time.Now()
		if _, err := s.EnterShard(short, a); !errors.Is(err, context.DeadlineExceeded) || !models.IsUnavailable(err) {
			t.Fatalf("slot %d of A's shard: %v, want to wait until the deadline, unavailable", slots+1, err)
		}
		if waited := time.Since(began); waited < 90*time.Millisecond {
			t.Fatalf("refused after %s, before the deadline", waited)
		}
		other, err := s.EnterShard(short, b)
		if err != nil {
			t.Fatalf("B's shard, with A's slots all taken: %v", err)
		}
		other()
		held[0]()
		release, err := s.EnterShard(ctx, a)
		if err != nil {
			t.Fatalf("a slot of A's shard once one was released: %v", err)
		}
		release()
		for _, release := range held[1:] {
			release()
		}
	})
}
