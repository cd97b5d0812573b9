package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL is the second engine, for a fleet of daemons sharing one
// database (ACU_DB=postgres://…). The store's SQL is written once, in the
// subset both engines speak; the differences are handled here:
//
//   - placeholders: the store writes SQLite's ? and ?N; a thin wrapper
//     around pgx's database/sql driver rewrites them to $N (once per
//     distinct query, cached);
//   - migrations: the same files, with SQLite's types mapped (INTEGER to
//     BIGINT, INTEGER PRIMARY KEY AUTOINCREMENT to BIGSERIAL, BLOB to
//     BYTEA), applied under an advisory lock so two daemons starting at once
//     do not both migrate;
//   - booleans: stored as 0/1 integers on both engines (Go bools are sent as
//     integers);
//   - event order: SQLite runs one write transaction at a time, so the
//     global cursor is commit order. PostgreSQL does not: every transaction
//     that appends events takes one transaction-scoped advisory lock first
//     (eventLock), which makes cursor order commit order there too, and so
//     keeps "a reader that sees cursor c has seen everything before c",
//     which cross-process delivery relies on. It serialises event writers
//     across the fleet; bench/fleet measures what that costs.

// eventLockKey, migrateLockKey, tokenLockKey and ownerLockKey are the
// advisory lock keys ("acu" in
// ASCII, then a number).
const (
	eventLockKey   = 0x61637501
	migrateLockKey = 0x61637502
	tokenLockKey   = 0x61637503
	ownerLockKey   = 0x61637504
)

// IsPostgres reports whether dsn names a PostgreSQL database
// (postgres:// or postgresql://) rather than a SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// redactDSN returns dsn without its password, for logs and errors.
func redactDSN(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "postgres://(unparsable DSN)"
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

func openPostgres(ctx context.Context, dsn string, db *DB, reads int) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("open store %s: parse the PostgreSQL DSN: %w", db.path, err)
	}
	rcfg := cfg.Copy()
	if rcfg.RuntimeParams == nil {
		rcfg.RuntimeParams = map[string]string{}
	}
	rcfg.RuntimeParams["default_transaction_read_only"] = "on"
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "acu"
		rcfg.RuntimeParams["application_name"] = "acu"
	}
	db.w = sql.OpenDB(rebindConnector{stdlib.GetConnector(*cfg)})
	// One writer connection per process, as on SQLite: this process's
	// writes queue in Go, and the registry's group commit batches them.
	db.w.SetMaxOpenConns(1)
	db.w.SetMaxIdleConns(1)
	db.r = sql.OpenDB(rebindConnector{stdlib.GetConnector(*rcfg)})
	db.r.SetMaxOpenConns(reads)
	db.r.SetMaxIdleConns(reads)
	if err := db.w.PingContext(ctx); err != nil {
		return fmt.Errorf("open store %s: %w", db.path, err)
	}
	if err := db.migrate(ctx); err != nil {
		return err
	}
	if err := db.prepare(ctx); err != nil {
		return fmt.Errorf("open store %s: %w", db.path, err)
	}
	if err := db.r.PingContext(ctx); err != nil {
		return fmt.Errorf("open store %s: %w", db.path, err)
	}
	return nil
}

func defaultReads() int { return max(runtime.GOMAXPROCS(0), 2) }

// eventLock takes the fleet-wide event-order lock for the rest of tx (see
// the top of this file). A no-op on SQLite.
func (db *DB) eventLock(ctx context.Context, tx *sql.Tx) error {
	if !db.pg {
		return nil
	}
	// The notification is sent at commit, once per transaction: every
	// process listening reads the new events at once instead of at its
	// next poll.
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+strconv.Itoa(eventLockKey)+`), pg_notify('`+ChannelEvents+`', '')`)
	return err
}

// Channels of PostgreSQL notifications.
const (
	// ChannelEvents: events were committed.
	ChannelEvents = "acu_events"
	// ChannelClaims: a run waits for the daemon of the host named in the
	// payload to claim it.
	ChannelClaims = "acu_claims"
)

// ErrNoListen: the engine has no notifications (SQLite); poll instead.
var ErrNoListen = errors.New("this database engine has no notifications")

// Notify sends a notification on channel with payload to every listener
// (PostgreSQL); ErrNoListen on SQLite.
func (db *DB) Notify(ctx context.Context, channel, payload string) error {
	if !db.pg {
		return ErrNoListen
	}
	if _, err := db.w.ExecContext(ctx, `SELECT pg_notify(?, ?)`, channel, payload); err != nil {
		return fmt.Errorf("notify %s: %w", channel, err)
	}
	return nil
}

// Listen calls fn for every notification on channels until ctx ends, on a
// connection of its own, reconnecting (after a second, then backing off to
// 30 s) when it drops; fn is also called with channel "" after each
// (re)connection, since notifications sent while disconnected are lost and
// the caller should read what it may have missed. ErrNoListen at once on
// SQLite.
func (db *DB) Listen(ctx context.Context, fn func(channel, payload string), channels ...string) error {
	if !db.pg {
		return ErrNoListen
	}
	delay := time.Second
	for ctx.Err() == nil {
		err := db.listenOnce(ctx, fn, channels)
		if ctx.Err() != nil {
			break
		}
		db.log.LogAttrs(ctx, slog.LevelWarn, "database notifications lost; reconnecting", slog.String("db", db.path),
			slog.Any("error", err), slog.Duration("in", delay))
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
	return nil
}

func (db *DB) listenOnce(ctx context.Context, fn func(channel, payload string), channels []string) error {
	c, err := pgx.Connect(ctx, db.dsn)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	for _, ch := range channels {
		if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	fn("", "")
	for {
		n, err := c.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Channel, n.Payload)
	}
}

// pgDDL maps a migration written for SQLite to PostgreSQL.
func pgDDL(s string) string {
	r := strings.NewReplacer(
		"INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY",
		"INTEGER PRIMARY KEY", "BIGINT PRIMARY KEY",
		"INTEGER", "BIGINT",
		"BLOB", "BYTEA",
	)
	return r.Replace(s)
}

// rebindCache maps SQLite-style queries to their PostgreSQL form.
var rebindCache sync.Map

// rebind rewrites ? and ?N placeholders (outside quoted literals) to $N.
func rebind(q string) string {
	if v, ok := rebindCache.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	quoted := false
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c == '\'' {
			quoted = !quoted
		}
		if c != '?' || quoted {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(q) && q[j] >= '0' && q[j] <= '9' {
			j++
		}
		b.WriteByte('$')
		if j > i+1 {
			b.WriteString(q[i+1 : j])
			i = j - 1
		} else {
			n++
			b.WriteString(strconv.Itoa(n))
		}
	}
	out := b.String()
	rebindCache.Store(q, out)
	return out
}

// rebindConnector wraps pgx's connector so every query is rebound.
type rebindConnector struct{ base driver.Connector }

func (c rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rebindConn{Conn: conn.(*stdlib.Conn)}, nil
}

func (c rebindConnector) Driver() driver.Driver { return c.base.Driver() }

// rebindConn is pgx's connection with rebound queries and Go bools sent as
// integers.
type rebindConn struct{ *stdlib.Conn }

func (c *rebindConn) Prepare(q string) (driver.Stmt, error) { return c.Conn.Prepare(rebind(q)) }

func (c *rebindConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(q))
}

func (c *rebindConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(q), args)
}

func (c *rebindConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(q), args)
}

func (c *rebindConn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
	}
	return nil
}

// pgStorageErr reports whether err is PostgreSQL saying it cannot keep
// what acu writes: insufficient resources (class 53: disk full, out of
// memory, too many connections), a system error (58) or an internal error
// (XX).
func pgStorageErr(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || len(pe.Code) < 2 {
		return false
	}
	switch pe.Code[:2] {
	case "53", "58", "XX":
		return true
	}
	return false
}

// jsonField is the SQL expression of a JSON text column's top-level string
// field on this engine.
func (db *DB) jsonField(col, field string) string {
	if db.pg {
		return "(" + col + "::jsonb ->> '" + field + "')"
	}
	return "json_extract(" + col + ", '$." + field + "')"
}

// textArg is s as stored in a text column that must keep any byte: SQLite
// stores NUL, PostgreSQL's text cannot, so there NUL is written as \0 and
// a backslash as \\ (unescapeNUL reverses it). Only notification
// messages need it: they are delivered byte for byte (or refused, by the
// exec notifier, for a NUL).
func (db *DB) textArg(s string) string {
	if !db.pg || !strings.ContainsAny(s, "\\\x00") {
		return s
	}
	return strings.NewReplacer("\\", "\\\\", "\x00", "\\0").Replace(s)
}

func unescapeNUL(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '0' {
				b.WriteByte(0)
			} else {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
