// Package jsonl is the JSON Lines format of messages: one Message record per line in the
// /v1 wire shape with its subscriber and template embedded. Export writes an
// environment's messages in it; Import checks every record (what the database and the
// platform's SDK accept) and writes them through the store's batch writer.
package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"messages/models"
	"messages/models/cluster"
	"messages/models/store"
	"messages/models/wire"
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
// Committed is, on a Galera node, how many lines are committed so far (see Import).
// Deleted is how many of the messages were not written because they were deleted after
// the file was written (ImportOptions).
type ImportStats struct{ Lines, Messages, Subscribers, Templates, Environments, Committed, Deleted int }

// rowsPerMessage bounds the rows one message adds to a transaction's write set: its own,
// its subscriber's and its template's, and the counter rows its trigger writes (4 on
// insert; 4 taken off and 4 added when a replace moves it to another subscriber or
// channel).
const rowsPerMessage = 11

// Import reads JSON Lines and upserts environments, subscribers, templates and messages,
// keeping ids and timestamps; fields the record does not define are ignored. A bad line
// fails the whole import with an EINVALID error naming the line, and nothing is written.
// Importing the same file again changes nothing. progress, when set, gets the lines read;
// on error the stats say how far the import got.
//
// On SQLite and a single MySQL server it runs in one transaction: all or nothing. A
// seekable reader (a file) is read again when that transaction loses a conflict.
//
// On Vitess, where a transaction over several shards commits on each without being
// atomic, it runs as on Galera, each chunk one environment's (one shard's) transaction.
//
// On a Galera node, which certifies a transaction whole within wsrep_max_ws_rows and
// wsrep_max_ws_size and where one long transaction loses to every short write committed
// meanwhile, it runs in two passes (a stream is copied to a temporary file first): the
// first checks every line and writes nothing, so a bad line still writes nothing; the
// second commits the file in chunks, each in a transaction of its own within those
// limits, run again after a conflict. Should the second pass stop (the node lost, a
// chunk's conflicts never resolving), the chunks before it stay committed and the error
// says so: every row is an upsert by id, so running the same import again completes it
// and ends in the same state as one uninterrupted run.
func Import(ctx context.Context, s *store.Store, r io.Reader, progress func(lines int)) (ImportStats, error) {
	return ImportWith(ctx, s, r, ImportOptions{Progress: progress})
}

// ImportOptions are Import's settings beyond the reader.
type ImportOptions struct {
	// Progress, when set, gets the lines read.
	Progress func(lines int)
	// WrittenAt is when the file was written, when known: a message deleted at or after
	// it (its tombstone, kept for the events retention, says when) is not written again,
	// so an older file does not bring back what was deleted since. Zero: every deletion
	// the database remembers counts.
	WrittenAt time.Time
	// RestoreDeleted writes the file's messages whether or not they were deleted since.
	RestoreDeleted bool
}

// ImportWith is Import with options.
func ImportWith(ctx context.Context, s *store.Store, r io.Reader, o ImportOptions) (ImportStats, error) {
	progress := o.Progress
	var stats ImportStats
	// One transaction may run far longer than the live event feed looks back: hold the
	// feed at its start until it ends, so servers announce every message it commits.
	release, err := s.HoldChanges(ctx, importHold)
	if err != nil {
		return stats, err
	}
	defer func() { _ = release(context.WithoutCancel(ctx)) }()
	limit, err := s.WriteSetLimit(ctx)
	if err != nil {
		return stats, err
	}
	if limit.Certified || s.Vitess() {
		return importChunked(ctx, s, r, o, limit, s.Vitess())
	}
	// A file can be read again from where it started, so its transaction runs again after
	// losing a conflict with a concurrent writer. A stream cannot: a conflict fails it
	// whole, nothing written, and running it again is safe.
	run, reread := s.Transaction, func() error { return nil }
	if seeker, ok := r.(io.Seeker); ok {
		if start, err := seeker.Seek(0, io.SeekCurrent); err == nil { // a pipe cannot
			run = s.RetryTransaction
			reread = func() error { _, err := seeker.Seek(start, io.SeekStart); return err }
		}
	}
	err = run(ctx, func(ctx context.Context) error {
		if cluster.Attempt(ctx) > 1 {
			if err := reread(); err != nil {
				return fmt.Errorf("read import again: %w", err)
			}
			stats = ImportStats{}
		}
		return readAll(newImporter(ctx, s, &stats, o), r, progress)
	})
	if err != nil {
		return stats, err
	}
	if progress != nil && stats.Lines%progressEvery != 0 {
		progress(stats.Lines)
	}
	return stats, nil
}

// importChunked is Import on a Galera node or a sharded (Vitess) database: a pass that
// checks, then a pass that commits chunk by chunk; sharded, a chunk is of one environment,
// so each transaction is one shard's.
func importChunked(ctx context.Context, s *store.Store, r io.Reader, o ImportOptions, limit store.WriteSetLimit, sharded bool) (ImportStats, error) {
	progress := o.Progress
	var stats ImportStats
	file, done, err := rewindable(r)
	if err != nil {
		return stats, err
	}
	defer done()
	start, err := file.Seek(0, io.SeekCurrent)
	if err != nil {
		return stats, err
	}
	check := newImporter(ctx, s, &stats, o)
	check.check = true
	if err := readAll(check, file, nil); err != nil {
		return stats, err
	}
	if _, err := file.Seek(start, io.SeekStart); err != nil {
		return stats, fmt.Errorf("read import again: %w", err)
	}
	stats = ImportStats{}
	imp := newImporter(ctx, s, &stats, o)
	imp.chunk, imp.chunkBytes = batchSize, maxBatchBytes
	imp.perEnvironment = sharded
	if limit.Rows > 0 {
		imp.chunk = max(1, min(imp.chunk, int(limit.Rows)/rowsPerMessage))
	}
	if limit.Bytes > 0 {
		// Input bytes stand for row bytes; half the limit leaves room for the indexes'
		// keys and the counter rows.
		imp.chunkBytes = int(max(1, min(int64(imp.chunkBytes), limit.Bytes/2)))
	}
	if err := readAll(imp, file, progress); err != nil {
		if stats.Committed > 0 {
			return stats, fmt.Errorf("import stopped with its first %d lines committed; run the same import again to complete it: %w", stats.Committed, err)
		}
		return stats, err
	}
	if progress != nil && stats.Lines%progressEvery != 0 {
		progress(stats.Lines)
	}
	return stats, nil
}

// rewindable returns r when it can be read again from where it stands, and otherwise a
// temporary file holding the rest of it, removed by done.
func rewindable(r io.Reader) (file io.ReadSeeker, done func(), err error) {
	if seeker, ok := r.(io.ReadSeeker); ok {
		if _, err := seeker.Seek(0, io.SeekCurrent); err == nil {
			return seeker, func() {}, nil
		}
	}
	f, err := os.CreateTemp("", "import-*.jsonl")
	if err != nil {
		return nil, nil, fmt.Errorf("copy the import to a temporary file: %w", err)
	}
	done = func() { f.Close(); os.Remove(f.Name()) }
	if _, err := io.Copy(f, r); err != nil {
		done()
		return nil, nil, fmt.Errorf("copy the import to a temporary file: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		done()
		return nil, nil, err
	}
	return f, done, nil
}

// readAll reads every line of r into imp, which writes (or, checking, checks) a batch
// whenever one is full, and the last at the end.
func readAll(imp *importer, r io.Reader, progress func(lines int)) error {
	stats := imp.stats
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
		if imp.bytes += len(line); imp.full() {
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
}

// Export writes every message of an environment as JSON Lines in the shape Import reads,
// oldest first (createdAt, then _id), and returns how many it wrote. It pages by keyset,
// so memory stays flat however many messages there are.
func Export(ctx context.Context, s *store.Store, environmentID string, w io.Writer, progress func(n int)) (int, error) {
	if _, err := s.Environment(ctx, environmentID); err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	total := 0
	var after *models.Keyset
	for {
		msgs, err := s.MessagesOldestFirst(ctx, environmentID, after, batchSize)
		if err != nil {
			return total, err
		}
		for _, m := range msgs {
			// Each line is the message's /v1 form, as GET /v1/messages writes it.
			b, err := wire.Message(m)
			if err != nil {
				return total, err
			}
			if _, err := bw.Write(append(b, '\n')); err != nil {
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
