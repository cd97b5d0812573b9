package store

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Errors callers branch on.
var (
	// ErrNotFound: no row with that id or key.
	ErrNotFound = errors.New("not found")
	// ErrEnded: the run has already ended; it takes no more events and cannot end twice.
	ErrEnded = errors.New("run already ended")
	// ErrExists: a run with that id already exists.
	ErrExists = errors.New("already exists")
)

// Options configures Open. The zero value is usable.
type Options struct {
	// Clock returns the current time; time.Now when nil. Used for
	// updated_at, created_at and defaults of unset timestamps.
	Clock func() time.Time
	// Logger receives migration and lifecycle logs; discarded when nil.
	Logger *slog.Logger
	// BusyTimeout bounds how long a write waits for another process holding
	// the write lock (default 5s).
	BusyTimeout time.Duration
	// ReadConns is the size of the read pool (default: GOMAXPROCS, at least 2).
	ReadConns int
}

// DB is an open acu database. It is safe for concurrent use.
type DB struct {
	path  string  // the SQLite file, or the PostgreSQL DSN without its password
	pg    bool    // PostgreSQL (see postgres.go), not SQLite
	dsn   string  // PostgreSQL's connection string, for Listen; never logged
	w     *sql.DB // single connection, immediate transactions
	r     *sql.DB // read-only pool
	clock func() time.Time
	log   *slog.Logger

	// Statements of the per-event path, prepared once on the writer
	// connection: parsing them is most of an append's CPU.
	stLive, stInsertEvent *sql.Stmt

	opened os.FileInfo // the file as opened, to notice it deleted or replaced
	writes writeHealth // the last storage failure of a write, until one succeeds
}

//go:embed migrations/*.sql
var migrationFS embed.FS

// newDB returns a DB with opts' clock and logger, or their defaults (the
// clock, a logger that discards).
func newDB(opts Options) *DB {
	db := &DB{clock: opts.Clock, log: opts.Logger}
	if db.clock == nil {
		db.clock = time.Now
	}
	if db.log == nil {
		db.log = slog.New(slog.DiscardHandler)
	}
	return db
}

// Open opens (creating when missing) the database at path, creating its
// parent directory with mode 0700, and applies pending migrations.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if path == "" {
		return nil, errors.New("open store: empty database path: set the database path (ACU_DB)")
	}
	if IsPostgres(path) {
		db := newDB(opts)
		db.path, db.pg, db.dsn = redactDSN(path), true, path
		reads := opts.ReadConns
		if reads <= 0 {
			reads = defaultReads()
		}
		if err := openPostgres(ctx, path, db, reads); err != nil {
			db.Close()
			return nil, err
		}
		return db, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open store %s: create its directory: %w", path, err)
	}
	// Create the file owner-only before SQLite does (its WAL and shared-memory
	// files take the same mode): specs and notification messages are private.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	opened, err := f.Stat()
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db := newDB(opts)
	db.path, db.opened = path, opened
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 5 * time.Second
	}
	reads := opts.ReadConns
	if reads <= 0 {
		reads = defaultReads()
	}

	// A file: URI, so that '?' or '#' in the path cannot be read as parameters.
	base := "file:" + (&url.URL{Path: path}).EscapedPath()
	common := url.Values{}
	common.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	common.Add("_pragma", "foreign_keys(1)")
	common.Add("_pragma", "synchronous(NORMAL)")

	wq := url.Values{}
	for k, v := range common {
		wq[k] = append([]string(nil), v...)
	}
	wq.Add("_pragma", "journal_mode(WAL)")
	wq.Set("_txlock", "immediate")
	w, err := sql.Open("sqlite", base+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	db.w = w
	// The writer connection switches the file to WAL before any reader opens.
	// Switching the journal mode and migrating take the file's exclusive
	// lock, and SQLite answers SQLITE_BUSY at once, without waiting out the
	// busy timeout, when two processes open a new file at the same moment:
	// retry within the busy timeout.
	if err := retryBusy(ctx, busy, func() error { return w.PingContext(ctx) }); err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := retryBusy(ctx, busy, func() error { return db.migrate(ctx) }); err != nil {
		w.Close()
		return nil, err
	}
	if err := db.prepare(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}

	rq := common
	rq.Add("_pragma", "query_only(1)")
	r, err := sql.Open("sqlite", base+"?"+rq.Encode())
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	r.SetMaxOpenConns(reads)
	r.SetMaxIdleConns(reads)
	db.r = r
	if err := r.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return db, nil
}

func (db *DB) prepare(ctx context.Context) error {
	var err error
	live := `SELECT ended_at FROM runs WHERE id = ?`
	if db.pg {
		live += ` FOR UPDATE` // PostgreSQL runs writers at once: lock the row
	}
	if db.stLive, err = db.w.PrepareContext(ctx, live); err != nil {
		return err
	}
	db.stInsertEvent, err = db.w.PrepareContext(ctx, `INSERT INTO events (run_id, seq, stream, at, data)
		VALUES (?1, (SELECT COALESCE(max(seq), 0) + 1 FROM events WHERE run_id = ?1), ?2, ?3, ?4)
		RETURNING cursor, seq`)
	return err
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// Close closes both connection pools. Committed data is already durable.
func (db *DB) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{db.stLive, db.stInsertEvent} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store %s: %w", db.path, err)
	}
	return nil
}

// tx runs fn in one immediate write transaction, committing when fn returns
// nil and rolling back otherwise.
// A failure for a storage reason is remembered for Health until a write
// succeeds.
func (db *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	err := db.runTx(ctx, fn)
	switch {
	case err == nil:
		db.writes.record(nil, time.Time{})
	case isStorageErr(err) || pgStorageErr(err):
		db.writes.record(err, db.clock())
	}
	return err
}

func (db *DB) runTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// now returns the injected clock's time, in UTC, at storage precision.
func (db *DB) now() time.Time { return db.clock().UTC().Truncate(time.Millisecond) }

// ms converts t to stored unix milliseconds; the zero time is NULL.
func ms(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// fromMS converts a stored timestamp back; NULL is the zero time.
func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

// jsonArg validates raw JSON for storage; empty is NULL.
func jsonArg(what string, raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%s: invalid JSON", what)
	}
	return string(raw), nil
}

// fromJSON converts a stored JSON column back; NULL is nil.
func fromJSON(v sql.NullString) json.RawMessage {
	if !v.Valid {
		return nil
	}
	return json.RawMessage(v.String)
}

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and '_'", name)
		}
		b, err := migrationFS.ReadFile("migrations/" + name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", ms[i-1].name, ms[i].name, ms[i].version)
		}
	}
	return ms, nil
}

// migrate applies every embedded migration not yet recorded, in order, each
// in its own transaction together with its schema_migrations row.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("migrate store %s: %w", db.path, err)
	}
	create := `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`
	if db.pg {
		// Daemons starting together take turns; the writer pool has one
		// connection, so the session lock and the migrations share it.
		if _, err := db.w.ExecContext(ctx, `SELECT pg_advisory_lock(`+strconv.Itoa(migrateLockKey)+`)`); err != nil {
			return fmt.Errorf("migrate store %s: take the migration lock: %w", db.path, err)
		}
		defer db.w.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+strconv.Itoa(migrateLockKey)+`)`)
		create = pgDDL(create)
	}
	if _, err := db.w.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("migrate store %s: create schema_migrations: %w", db.path, err)
	}
	for _, m := range ms {
		err := db.tx(ctx, func(tx *sql.Tx) error {
			var n int
			// Checked inside the write transaction, so two processes opening
			// the same new file cannot both apply a migration.
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			ddl := m.sql
			if db.pg {
				ddl = pgDDL(ddl)
			}
			if _, err := tx.ExecContext(ctx, ddl); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, db.now().UnixMilli()); err != nil {
				return err
			}
			db.log.LogAttrs(ctx, slog.LevelInfo, "applied migration", slog.String("db", db.path), slog.String("migration", m.name))
			return nil
		})
		if err != nil {
			return fmt.Errorf("migrate store %s: apply %s: %w", db.path, m.name, err)
		}
	}
	return nil
}

// SchemaVersion returns the highest applied migration version.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := db.r.QueryRowContext(ctx, `SELECT COALESCE(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version of %s: %w", db.path, err)
	}
	return v, nil
}

// retryBusy runs fn until it returns something other than SQLITE_BUSY, or
// limit passes.
func retryBusy(ctx context.Context, limit time.Duration, fn func() error) error {
	deadline := time.Now().Add(limit)
	delay := 5 * time.Millisecond
	for {
		err := fn()
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (primary code 5).
func isBusy(err error) bool {
	var ce interface{ Code() int }
	if errors.As(err, &ce) {
		return ce.Code()&0xff == 5
	}
	return strings.Contains(err.Error(), "SQLITE_BUSY")
}
