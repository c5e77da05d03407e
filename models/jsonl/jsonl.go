// Package jsonl is the JSON Lines format of messages: one Message record per line in the
// /v1 wire shape with its subscriber and template embedded. Export writes an
// environment's messages in it; Import checks every record (what the database and the
// platform's SDK accept) and writes them through the store's batch writer.
package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"messages/models"
)

const (
	// batchSize is how many messages one export page, or one import flush, carries.
	batchSize = 500
	// maxLine bounds one record; payloads reach about 1 MiB.
	maxLine = 8 << 20
	// maxBatchBytes flushes a batch of large records early: 500 records of 1 MiB would
	// otherwise sit in memory at once.
	maxBatchBytes = 4 << 20
	// importHold bounds how long an import holds the event feed back should the process
	// die before releasing its hold.
	importHold = time.Hour
	// progressEvery is how many lines an import reads between progress calls.
	progressEvery = 1000
)

// ImportStats counts what an import read: lines (blank ones included), message records,
// and the distinct subscribers, templates and environments those records carry.
type ImportStats struct{ Lines, Messages, Subscribers, Templates, Environments int }

// Import reads JSON Lines and upserts environments, subscribers, templates and messages,
// keeping ids and timestamps; fields the record does not define are ignored. It runs in
// one transaction: a bad line fails the whole import with an EINVALID error naming the
// line, and nothing is written. Importing the same file again changes nothing. A
// seekable reader (a file) is read again when the transaction loses a conflict.
// progress, when set, gets the lines read; on error the stats say how far the import got.
func Import(ctx context.Context, s *models.Store, r io.Reader, progress func(lines int)) (ImportStats, error) {
	var stats ImportStats
	// One transaction may run far longer than the live event feed looks back: hold the
	// feed at its start until it ends, so servers announce every message it commits.
	release, err := s.HoldChanges(ctx, importHold)
	if err != nil {
		return stats, err
	}
	defer func() { _ = release(context.WithoutCancel(ctx)) }()
	// A file can be read again from where it started, so its transaction runs again after
	// losing a conflict with a concurrent writer (on Galera, a mark of a message the
	// import replaces, committed first on another node). A stream cannot: a conflict fails
	// it whole, nothing written, and running it again is safe.
	run, reread := s.Transaction, func() error { return nil }
	if seeker, ok := r.(io.Seeker); ok {
		if start, err := seeker.Seek(0, io.SeekCurrent); err == nil { // a pipe cannot
			run = s.RetryTransaction
			reread = func() error { _, err := seeker.Seek(start, io.SeekStart); return err }
		}
	}
	err = run(ctx, func(ctx context.Context) error {
		if models.TxAttempt(ctx) > 1 {
			if err := reread(); err != nil {
				return fmt.Errorf("read import again: %w", err)
			}
			stats = ImportStats{}
		}
		imp := newImporter(ctx, s, &stats)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), maxLine)
		for sc.Scan() {
			stats.Lines++
			if progress != nil && stats.Lines%progressEvery == 0 {
				progress(stats.Lines)
			}
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			rec, err := decodeRecord(line)
			if err != nil {
				return lineError(stats.Lines, err)
			}
			if err := imp.add(stats.Lines, rec); err != nil {
				return err
			}
			if imp.bytes += len(line); len(imp.msgs.rows) >= batchSize || imp.bytes >= maxBatchBytes {
				if err := imp.flush(); err != nil {
					return err
				}
			}
		}
		if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
			return lineErrorf(stats.Lines+1, "longer than %d MiB", maxLine>>20)
		} else if err != nil {
			return fmt.Errorf("read import: %w", err)
		}
		return imp.flush()
	})
	if err != nil {
		return stats, err
	}
	if progress != nil && stats.Lines%progressEvery != 0 {
		progress(stats.Lines)
	}
	return stats, nil
}

// Export writes every message of an environment as JSON Lines in the shape Import reads,
// oldest first (createdAt, then _id), and returns how many it wrote. It pages by keyset,
// so memory stays flat however many messages there are.
func Export(ctx context.Context, s *models.Store, environmentID string, w io.Writer, progress func(n int)) (int, error) {
	if _, err := s.Environment(ctx, environmentID); err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	total := 0
	var after *models.Keyset
	for {
		msgs, err := s.MessagesOldestFirst(ctx, environmentID, after, batchSize)
		if err != nil {
			return total, err
		}
		for _, m := range msgs {
			if err := enc.Encode(m); err != nil {
				return total, err
			}
			total++
		}
		if progress != nil && len(msgs) > 0 {
			progress(total)
		}
		if len(msgs) < batchSize {
			return total, bw.Flush()
		}
		last := models.KeysetOf(msgs[len(msgs)-1])
		after = &last
	}
}
