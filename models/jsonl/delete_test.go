package jsonl_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"messages/models"
	"messages/models/dbtest"
	"messages/models/jsonl"
	"messages/models/store"
)

// An export after a delete no longer has the message; importing a file written before
// the delete leaves it deleted, unless the import restores deleted messages or the file
// was written after the delete.
func TestImportKeepsDeletedMessagesDeleted(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		tn := dbtest.NewTenant(t, s, "deleted")
		sub, tpl := tn.Subscriber(t, "ada"), tn.Template(t, "welcome")
		kept, gone := tn.Message(t, sub, tpl, nil), tn.Message(t, sub, tpl, nil)
		var before bytes.Buffer
		if _, err := jsonl.Export(ctx, s, tn.Env.ID, &before, nil); err != nil {
			t.Fatal(err)
		}
		written := time.Now()
		time.Sleep(5 * time.Millisecond) // the tombstone's stamp is after the file's time
		if out, err := s.DeleteMessages(ctx, tn.Env.ID, models.DeleteTarget{MessageIDs: []string{gone.ID}}); err != nil || out.Deleted != 1 {
			t.Fatalf("delete: %+v, %v", out, err)
		}
		var after bytes.Buffer
		n, err := jsonl.Export(ctx, s, tn.Env.ID, &after, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 || strings.Contains(after.String(), gone.ID) || !strings.Contains(after.String(), kept.ID) {
			t.Fatalf("export after the delete: %d messages, has the deleted one: %v", n, strings.Contains(after.String(), gone.ID))
		}
		stored := func() bool {
			var c int64
			if err := s.DB().Model(&models.Message{}).Where("id = ?", gone.ID).Count(&c).Error; err != nil {
				t.Fatal(err)
			}
			return c == 1
		}

		for _, o := range []jsonl.ImportOptions{{WrittenAt: written}, {}} {
			stats, err := jsonl.ImportWith(ctx, s, bytes.NewReader(before.Bytes()), o)
			if err != nil {
				t.Fatal(err)
			}
			if stats.Deleted != 1 || stored() {
				t.Fatalf("import of the older file (written at %v): %+v, the message stored again: %v", o.WrittenAt, stats, stored())
			}
		}
		// A file written after the deletion (a copy made since, of a database that still had
		// the message) is written.
		stats, err := jsonl.ImportWith(ctx, s, bytes.NewReader(before.Bytes()), jsonl.ImportOptions{WrittenAt: time.Now().Add(time.Minute)})
		if err != nil || stats.Deleted != 0 || !stored() {
			t.Fatalf("import of a file written after the deletion: %+v, %v, stored %v", stats, err, stored())
		}
		if _, err := s.DeleteMessages(ctx, tn.Env.ID, models.DeleteTarget{MessageIDs: []string{gone.ID}}); err != nil {
			t.Fatal(err)
		}
		stats, err = jsonl.ImportWith(ctx, s, bytes.NewReader(before.Bytes()), jsonl.ImportOptions{RestoreDeleted: true})
		if err != nil || stats.Deleted != 0 || !stored() {
			t.Fatalf("import restoring deleted messages: %+v, %v, stored %v", stats, err, stored())
		}
		// Stored again, the message is imported over as any other, its tombstone notwithstanding.
		if stats, err := jsonl.Import(ctx, s, bytes.NewReader(before.Bytes()), nil); err != nil || stats.Deleted != 0 {
			t.Fatalf("import over the restored message: %+v, %v", stats, err)
		}
	})
}
