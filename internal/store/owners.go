package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNotOwner: the run is owned by someone else than the caller named (it
// was taken over, or its owner changed in between).
var ErrNotOwner = errors.New("run is owned by another process")

// Owner is one process instance that runs work: `acu serve`, a standalone
// `acu agent`, `acu task` or `acu computer`. It holds a lease it renews by
// heartbeat; its live runs may be taken over only once the lease has
// expired (or, on the same host, once its process is gone, which the caller
// checks with Host, PID and PIDStart).
type Owner struct {
	ID          string
	Host        string
	PID         int
	PIDStart    int64 // the process's start in clock ticks since boot; 0 when unknown
	Program     string
	StartedAt   time.Time
	HeartbeatAt time.Time
	LeaseUntil  time.Time
	StoppedAt   time.Time // set when the process stopped cleanly
	// Displays are the X displays it serves (a daemon's DISPLAY).
	Displays []string
	// Machine identifies the machine it runs on (runs.MachineID); empty
	// for owners recorded before it was kept.
	Machine string
}

// HostClashError: a process registering as an owner found a live owner of
// the same host name on another machine. Mine is the one refused.
type HostClashError struct {
	Mine, Theirs Owner
}

func (e *HostClashError) Error() string {
	return fmt.Sprintf("host id %q is already held by acu %s (pid %d, owner %s) on machine %s, and this machine is %s: "+
		"two machines with one host id take over each other's runs; give each machine its own ACU_HOST_ID "+
		"(the default is the host name, which cloned machines share), or stop the other process",
		e.Mine.Host, e.Theirs.Program, e.Theirs.PID, e.Theirs.ID, e.Theirs.Machine, e.Mine.Machine)
}

// Expired reports whether the owner's lease no longer covers its runs at
// now: it stopped, or did not renew in time.
func (o Owner) Expired(now time.Time) bool {
	return !o.StoppedAt.IsZero() || !now.Before(o.LeaseUntil)
}

const ownerCols = `id, host, pid, pid_start, program, started_at, heartbeat_at, lease_until, stopped_at, displays, machine`

func scanOwner(s scanner) (Owner, error) {
	var o Owner
	var started, beat, until, stopped sql.NullInt64
	var displays string
	if err := s.Scan(&o.ID, &o.Host, &o.PID, &o.PIDStart, &o.Program, &started, &beat, &until, &stopped, &displays, &o.Machine); err != nil {
		return Owner{}, err
	}
	if displays != "" {
		o.Displays = strings.Split(displays, ",")
	}
	o.StartedAt, o.HeartbeatAt, o.LeaseUntil, o.StoppedAt = fromMS(started), fromMS(beat), fromMS(until), fromMS(stopped)
	return o, nil
}

// RegisterOwner records o (a new process instance) with a lease until
// o.LeaseUntil. Registering an id again replaces the row. When o names its
// machine, a live owner (lease holding at now) of the same host on another
// machine refuses it: *HostClashError.
func (db *DB) RegisterOwner(ctx context.Context, o Owner) error {
	if o.ID == "" || o.Host == "" {
		return errors.New("register owner: id and host are required")
	}
	now := db.now()
	if o.StartedAt.IsZero() {
		o.StartedAt = now
	}
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if o.Machine != "" {
			// One registration at a time across a fleet, so two machines
			// starting at once with one host id cannot both pass.
			if err := db.ownerLock(ctx, tx); err != nil {
				return err
			}
			other, err := scanOwner(tx.QueryRowContext(ctx, `SELECT `+ownerCols+` FROM owners
				WHERE host = ? AND id <> ? AND machine <> '' AND machine <> ? AND stopped_at IS NULL AND lease_until > ?
				ORDER BY started_at, id LIMIT 1`, o.Host, o.ID, o.Machine, now.UnixMilli()))
			if err == nil {
				return &HostClashError{Mine: o, Theirs: other}
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO owners (`+ownerCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)
			ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, lease_until = excluded.lease_until, stopped_at = NULL,
			displays = excluded.displays, machine = excluded.machine`,
			o.ID, o.Host, o.PID, o.PIDStart, o.Program, o.StartedAt.UnixMilli(), now.UnixMilli(), o.LeaseUntil.UnixMilli(),
			strings.Join(o.Displays, ","), o.Machine)
		return err
	})
	if err != nil {
		return fmt.Errorf("register owner %s: %w", o.ID, err)
	}
	return nil
}

// RenewOwner extends owner id's lease to until. ErrNotFound when the owner
// is unknown; a stopped owner stays stopped.
func (db *DB) RenewOwner(ctx context.Context, id string, until time.Time) error {
	err := db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE owners SET heartbeat_at = ?, lease_until = ? WHERE id = ? AND stopped_at IS NULL`,
			db.now().UnixMilli(), until.UnixMilli(), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("renew lease of owner %s: %w", id, err)
	}
	return nil
}

// StopOwner marks owner id stopped: its lease ends now, so whatever it left
// live is free to be taken over at once.
func (db *DB) StopOwner(ctx context.Context, id string) error {
	return db.endLease(ctx, "stop", id, true)
}

// ExpireOwner ends owner id's lease now without marking it stopped: a
// process on the same host found it gone (killed), so its runs need not
// wait out the lease.
func (db *DB) ExpireOwner(ctx context.Context, id string) error {
	return db.endLease(ctx, "expire", id, false)
}

// endLease ends owner id's lease now (never extends it), and marks the
// owner stopped when stopped is set; what names the operation in errors.
func (db *DB) endLease(ctx context.Context, what, id string, stopped bool) error {
	q := `UPDATE owners SET lease_until = CASE WHEN lease_until < ?1 THEN lease_until ELSE ?1 END WHERE id = ?2`
	if stopped {
		q = `UPDATE owners SET stopped_at = ?1, lease_until = CASE WHEN lease_until < ?1 THEN lease_until ELSE ?1 END WHERE id = ?2`
	}
	err := db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, q, db.now().UnixMilli(), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s owner %s: %w", what, id, err)
	}
	return nil
}

// GetOwner returns owner id, or ErrNotFound.
func (db *DB) GetOwner(ctx context.Context, id string) (Owner, error) {
	o, err := scanOwner(db.r.QueryRowContext(ctx, `SELECT `+ownerCols+` FROM owners WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Owner{}, fmt.Errorf("get owner %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Owner{}, fmt.Errorf("get owner %q: %w", id, err)
	}
	return o, nil
}

// Owners returns the owners of live runs and every owner whose lease has
// not expired at now, oldest first.
func (db *DB) Owners(ctx context.Context, now time.Time) ([]Owner, error) {
	return db.queryOwners(ctx, "list owners", `SELECT `+ownerCols+` FROM owners
		WHERE (stopped_at IS NULL AND lease_until > ?) OR id IN (SELECT owner FROM runs WHERE ended_at IS NULL)
		ORDER BY started_at, id`, now.UnixMilli())
}

// LiveOwners returns every owner whose lease holds at now, by host, then
// oldest first: the processes of the fleet (or of this machine).
func (db *DB) LiveOwners(ctx context.Context, now time.Time) ([]Owner, error) {
	return db.queryOwners(ctx, "list live owners", `SELECT `+ownerCols+` FROM owners WHERE stopped_at IS NULL AND lease_until > ?
		ORDER BY host, started_at, id`, now.UnixMilli())
}

func (db *DB) queryOwners(ctx context.Context, what, q string, args ...any) ([]Owner, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []Owner
	for rows.Next() {
		o, err := scanOwner(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// UnownedRuns returns the live runs no lease covers at now, oldest first:
// runs without an owner, of an unknown owner, or of an owner whose lease
// has expired. They are what a process may take over (TakeRun).
//
// In a fleet a daemon can act only on runs of its own host (or of no host),
// plus the runs of other hosts that still name an owner (to mark them
// orphaned): host limits the result to those, so a daemon does not read the
// runs waiting for every other host on every look. Empty host: all.
func (db *DB) UnownedRuns(ctx context.Context, now time.Time, host string) ([]Run, error) {
	q := `SELECT ` + runCols + ` FROM runs r WHERE ended_at IS NULL AND NOT EXISTS
		(SELECT 1 FROM owners o WHERE o.id = r.owner AND o.stopped_at IS NULL AND o.lease_until > ?1)`
	args := []any{now.UnixMilli()}
	if host != "" {
		q += ` AND (host IN ('', ?2) OR owner <> '')`
		args = append(args, host)
	}
	return db.queryRuns(ctx, q+` ORDER BY started_at, id`, args...)
}

// TakeRun moves live run id from owner from to owner to, only if from still
// owns it (an orphaned run becomes running again): two processes taking over the same run cannot both succeed.
// ErrNotOwner when from no longer owns it, ErrEnded when it has ended,
// ErrNotFound when it does not exist. The caller checks that from's lease
// has expired.
func (db *DB) TakeRun(ctx context.Context, id, from, to string) error {
	err := db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET owner = ?, updated_at = ?,
			status = CASE WHEN status = '`+StatusOrphaned+`' THEN '`+StatusRunning+`' ELSE status END
			WHERE id = ? AND owner = ? AND ended_at IS NULL`,
			to, db.now().UnixMilli(), id, from)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		if err := db.liveCheck(ctx, tx, id); err != nil {
			return err
		}
		return ErrNotOwner
	})
	if err != nil {
		return fmt.Errorf("take run %q from owner %q: %w", id, from, err)
	}
	return nil
}

// Run statuses the store itself sets.
const (
	StatusRunning  = "running"
	StatusOrphaned = "orphaned"
)

// StreamOwnership is the stream of a run's changes of hands: orphaned when
// its host's daemon died, resumed when that host took it back.
const StreamOwnership = "ownership"

// OrphanRun marks live run id orphaned: its owner from (a daemon of
// another host whose lease has expired) can no longer run it and no other
// host can. The run stays live, unowned, with status orphaned, until its
// host's daemon takes it back (TakeRun from ""). ev, an ownership event,
// is appended in the same transaction. Of several daemons finding the same
// run, exactly one succeeds; the others get ErrNotOwner.
func (db *DB) OrphanRun(ctx context.Context, id, from string, ev Event) (Run, Event, error) {
	var run Run
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if err := db.eventLock(ctx, tx); err != nil {
			return err
		}
		var err error
		run, err = scanRun(tx.QueryRowContext(ctx, `UPDATE runs SET owner = '', status = '`+StatusOrphaned+`', updated_at = ?
			WHERE id = ? AND owner = ? AND owner <> '' AND ended_at IS NULL RETURNING `+runCols, db.now().UnixMilli(), id, from))
		if errors.Is(err, sql.ErrNoRows) {
			if err := db.liveCheck(ctx, tx, id); err != nil {
				return err
			}
			return ErrNotOwner
		}
		if err != nil {
			return err
		}
		ev.RunID = id
		return db.insertEvent(ctx, tx, &ev)
	})
	if err != nil {
		return Run{}, Event{}, fmt.Errorf("orphan run %q: %w", id, err)
	}
	return run, ev, nil
}

// TakeUnowned moves the listed live runs that have no owner to owner to,
// in one transaction (an orphaned one becomes running again), and returns
// the ids it took: of two processes taking the same runs at once, each run
// goes to one. It is TakeRun for a batch of runs from "". evs holds, by
// run id, an event (an ownership change) to append to each run taken, in
// the same transaction, so a process that dies right after taking a run
// leaves its event too; the events appended are returned (Seq and Cursor
// set).
func (db *DB) TakeUnowned(ctx context.Context, ids []string, to string, evs map[string]Event) (map[string]bool, []Event, error) {
	taken := make(map[string]bool, len(ids))
	var added []Event
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := make([]any, 0, len(chunk)+2)
		args = append(args, to, db.now().UnixMilli())
		for _, id := range chunk {
			args = append(args, id)
		}
		var got []string
		var adding []Event
		err := db.tx(ctx, func(tx *sql.Tx) error {
			got, adding = got[:0], adding[:0]
			withEvents := false
			for _, id := range chunk {
				if _, ok := evs[id]; ok {
					withEvents = true
					break
				}
			}
			if withEvents {
				if err := db.eventLock(ctx, tx); err != nil {
					return err
				}
			}
			rows, err := tx.QueryContext(ctx, `UPDATE runs SET owner = ?, updated_at = ?,
				status = CASE WHEN status = '`+StatusOrphaned+`' THEN '`+StatusRunning+`' ELSE status END
				WHERE owner = '' AND ended_at IS NULL AND id IN (?`+strings.Repeat(", ?", len(chunk)-1)+`) RETURNING id`, args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				got = append(got, id)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, id := range got {
				ev, ok := evs[id]
				if !ok {
					continue
				}
				ev.RunID = id
				if err := db.insertEvent(ctx, tx, &ev); err != nil {
					return err
				}
				adding = append(adding, ev)
			}
			return nil
		})
		if err != nil {
			return taken, added, fmt.Errorf("take %d unowned runs: %w", len(chunk), err)
		}
		for _, id := range got {
			taken[id] = true
		}
		added = append(added, adding...)
	}
	return taken, added, nil
}
