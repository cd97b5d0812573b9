package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// sqliteHeader opens every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// writeHealth remembers the last write that failed for a storage reason
// (disk full, I/O error, read-only, corruption) until a write succeeds.
type writeHealth struct {
	mu  sync.Mutex
	err error
	at  time.Time
}

func (w *writeHealth) record(err error, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		w.err = nil
		return
	}
	if w.err == nil {
		w.at = at
	}
	w.err = err
}

func (w *writeHealth) get() (at time.Time, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.at, w.err
}

// isStorageErr reports whether err is SQLite saying the file cannot be
// trusted or written: SQLITE_PERM, READONLY, IOERR, CORRUPT, FULL, CANTOPEN
// or NOTADB (primary codes). Domain errors (ErrEnded, a failed constraint)
// and SQLITE_BUSY are not.
func isStorageErr(err error) bool {
	var ce interface{ Code() int }
	if !errors.As(err, &ce) {
		return false
	}
	switch ce.Code() & 0xff {
	case 3, 8, 10, 11, 13, 14, 26:
		return true
	}
	return false
}

// Health reports why the database cannot be trusted to keep what acu
// writes, or nil: the file was deleted or replaced under the open handle
// (a restart would start empty and lose live waits), its header is no
// longer SQLite's (corruption), the last write failed for a storage reason
// (disk full, read-only, I/O error) and none has succeeded since, or a
// one-row probe write fails now. It does not read every page: run
// `PRAGMA integrity_check` for that.
func (db *DB) Health(ctx context.Context) error {
	if db.pg {
		return db.probe(ctx)
	}
	st, err := os.Stat(db.path)
	if err != nil {
		return fmt.Errorf("database file %s is gone (%v): what acu writes now is lost at the next start; stop acu, restore the file or move the data dir aside", db.path, err)
	}
	if db.opened != nil && !os.SameFile(st, db.opened) {
		return fmt.Errorf("database file %s was replaced by another file since acu opened it: restart acu to use it", db.path)
	}
	if err := checkHeader(db.path); err != nil {
		return err
	}
	return db.probe(ctx)
}

// probe writes the one-row probe and reports a remembered write failure.
func (db *DB) probe(ctx context.Context) error {
	// The probe does not clear a remembered failure: one page may still fit
	// in the WAL's allocated space on a full disk while the write that
	// failed (a run's outcome, many pages) does not.
	if err := db.runTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO health_probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at`, db.now().UnixMilli())
		return err
	}); err != nil && ctx.Err() == nil && !isBusy(err) {
		return fmt.Errorf("database %s cannot be written: %w (free disk space or fix the file's permissions)", db.path, err)
	}
	if at, err := db.writes.get(); err != nil {
		return fmt.Errorf("database %s: a write failed at %s and none has succeeded since: %w", db.path, at.UTC().Format(time.RFC3339), err)
	}
	return nil
}

func checkHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("database file %s cannot be read: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil {
		return fmt.Errorf("database file %s is truncated (%v): it is corrupt; stop acu and restore it", path, err)
	}
	if !bytes.Equal(head, sqliteHeader) {
		return fmt.Errorf("database file %s no longer starts with the SQLite header: it is corrupt; stop acu and restore it", path)
	}
	return nil
}
