package store

import "context"

// ShardHolding is the shard EnterShard places environmentID on, "" when none.
func (s *Store) ShardHolding(ctx context.Context, environmentID string) string {
	s.shardSlot(ctx, environmentID)
	s.slots.mu.Lock()
	defer s.slots.mu.Unlock()
	return shardOf(s.slots.ranges, environmentID)
}
