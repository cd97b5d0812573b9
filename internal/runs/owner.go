package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/store"
)

// DefaultLease is how long an owner's lease lasts without a heartbeat; the
// heartbeat renews it every third of that.
const DefaultLease = 15 * time.Second

// Self describes this process as a run owner for program ("serve",
// "agent", "task", "computer"): host name, pid and the pid's start time,
// with an id unique to this process instance. host overrides the machine's
// host name when not empty.
func Self(program, host string) store.Owner {
	if host == "" {
		host, _ = os.Hostname()
		if host == "" {
			host = "localhost"
		}
	}
	pid := os.Getpid()
	return store.Owner{
		ID:       fmt.Sprintf("%s:%d:%s", host, pid, randomID(6)),
		Host:     host,
		PID:      pid,
		PIDStart: pidStart(pid),
		Program:  program,
	}
}

// pidStart returns the start time of process pid in clock ticks since boot
// (field 22 of /proc/PID/stat), 0 when it cannot be read.
func pidStart(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	const startField = 22 - 3 // fields after ')' begin with field 3
	if len(f) <= startField {
		return 0
	}
	n, _ := strconv.ParseInt(f[startField], 10, 64)
	return n
}

// gone reports whether owner o's process is known to have exited: it ran on
// this host (host) and no process with its pid and start time exists.
func gone(o store.Owner, host string) bool {
	if o.Host != host || o.PID <= 0 {
		return false
	}
	start := pidStart(o.PID)
	if start == 0 {
		return true
	}
	return o.PIDStart != 0 && start != o.PIDStart
}

// Owner describes a process instance that owns runs (see Self).
type Owner = store.Owner

// Owner returns the owner with that id; ErrNotFound when unknown.
func (r *Registry) Owner(ctx context.Context, id string) (Owner, error) {
	return r.st.GetOwner(ctx, id)
}

// OwnerID is the id of the owner set by Own, empty before.
func (r *Registry) OwnerID() string { return r.ownerID() }

func (r *Registry) ownerID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.owner.ID
}

func (r *Registry) self() store.Owner {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.owner
}

// Own makes o (see Self) the owner of every run this registry starts from
// now on: it registers o with a lease of lease (DefaultLease when <= 0)
// and renews it by heartbeat every third of that until release is called,
// which marks o stopped (its runs, if any are left live, are then free to
// be taken over at once). Call it before Start and Recover.
func (r *Registry) Own(ctx context.Context, o store.Owner, lease time.Duration) (release func(), err error) {
	if lease <= 0 {
		lease = DefaultLease
	}
	o.StartedAt = r.now()
	o.LeaseUntil = o.StartedAt.Add(lease)
	if err := r.st.RegisterOwner(ctx, o); err != nil {
		return nil, fmt.Errorf("own runs: %w", err)
	}
	r.mu.Lock()
	r.owner = o
	r.mu.Unlock()
	r.log.LogAttrs(ctx, slog.LevelInfo, "run owner registered", slog.String("owner", o.ID), slog.String("program", o.Program),
		slog.Duration("lease", lease))

	hctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
			}
			err := r.st.RenewOwner(hctx, o.ID, r.now().Add(lease))
			if errors.Is(err, store.ErrNotFound) {
				o.LeaseUntil = r.now().Add(lease)
				err = r.st.RegisterOwner(hctx, o)
			}
			if err != nil && hctx.Err() == nil {
				r.log.LogAttrs(hctx, slog.LevelWarn, "renew the run owner's lease; retrying", slog.String("owner", o.ID), slog.Any(keyError, err))
			}
		}
	}()
	return func() {
		stop()
		<-done
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := r.st.StopOwner(sctx, o.ID); err != nil {
			r.log.LogAttrs(sctx, slog.LevelWarn, "mark the run owner stopped", slog.String("owner", o.ID), slog.Any(keyError, err))
		}
	}, nil
}

// expireGoneOwners ends the lease of every owner of a live run whose
// process is gone from this host (killed), so its runs need not wait out
// the lease.
func (r *Registry) expireGoneOwners(ctx context.Context) {
	host := r.self().Host
	if host == "" {
		host, _ = os.Hostname()
	}
	owners, err := r.st.Owners(ctx, r.now())
	if err != nil {
		r.log.LogAttrs(ctx, slog.LevelWarn, "list run owners", slog.Any(keyError, err))
		return
	}
	for _, o := range owners {
		if o.Expired(r.now()) || !gone(o, host) {
			continue
		}
		if err := r.st.ExpireOwner(ctx, o.ID); err != nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "expire a gone run owner", slog.String("owner", o.ID), slog.Any(keyError, err))
			continue
		}
		r.log.LogAttrs(ctx, slog.LevelInfo, "run owner's process is gone; its lease ends now", slog.String("owner", o.ID),
			slog.String("program", o.Program), slog.Int("pid", o.PID))
	}
}

// lostMessage is the error for a run whose owner prev stopped.
func (r *Registry) lostMessage(ctx context.Context, prev string) string {
	if prev == "" {
		return RestartMessage
	}
	o, err := r.st.GetOwner(ctx, prev)
	if err != nil || o.Program == "" || o.Program == "serve" {
		return RestartMessage
	}
	return OwnerLostMessage(o.Program, o.PID, o.Host)
}

// Sweep calls Recover with claim every interval until ctx ends, so runs of
// an owner that dies while this process runs are taken over (or ended) once
// its lease expires. The daemon runs it.
func (r *Registry) Sweep(ctx context.Context, interval time.Duration, claim func(Run) bool) {
	if interval <= 0 {
		interval = DefaultLease / 3
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.kick:
		}
		if err := r.Recover(ctx, claim); err != nil && ctx.Err() == nil {
			r.log.LogAttrs(ctx, slog.LevelWarn, "take over runs of stopped owners", slog.Any(keyError, err))
		}
	}
}

// Kick makes Sweep run now (a database notification said a run waits for
// this host). It never blocks.
func (r *Registry) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// notifier is the optional part of Store that wakes other processes.
type notifier interface {
	Notify(ctx context.Context, channel, payload string) error
}

// wakeHost tells host's daemon that a run waits for it to claim (on
// PostgreSQL; elsewhere its next sweep finds it).
func (r *Registry) wakeHost(ctx context.Context, host string) {
	n, ok := r.st.(notifier)
	if !ok {
		return
	}
	if err := n.Notify(ctx, store.ChannelClaims, host); err != nil && !errors.Is(err, store.ErrNoListen) {
		r.log.LogAttrs(ctx, slog.LevelWarn, "wake the daemon of a host", slog.String("host", host), slog.Any(keyError, err))
	}
}

// AliveHosts returns the hosts with a process whose lease holds now, in
// order.
func (r *Registry) AliveHosts(ctx context.Context) ([]string, error) {
	owners, err := r.st.LiveOwners(ctx, r.now())
	if err != nil {
		return nil, err
	}
	var hosts []string
	for _, o := range owners { // by host
		if len(hosts) == 0 || hosts[len(hosts)-1] != o.Host {
			hosts = append(hosts, o.Host)
		}
	}
	return hosts, nil
}

// aliveHosts is AliveHosts as a set; ok is false when it cannot be read
// (then nothing is orphaned this round).
func (r *Registry) aliveHosts(ctx context.Context) (set map[string]bool, ok bool) {
	hs, err := r.AliveHosts(ctx)
	if err != nil {
		r.log.LogAttrs(ctx, slog.LevelWarn, "list alive hosts", slog.Any(keyError, err))
		return nil, false
	}
	set = make(map[string]bool, len(hs))
	for _, h := range hs {
		set[h] = true
	}
	return set, true
}

// Ownership is the data of an ownership event.
type Ownership struct {
	Phase string `json:"phase"` // claimed, orphaned, resumed
	Host  string `json:"host"`
	// Owner is the process that was lost (orphaned) or took it (claimed,
	// resumed).
	Owner   string `json:"owner"`
	Program string `json:"program,omitempty"`
	PID     int    `json:"pid,omitempty"`
}

// orphan marks run orphaned: its host has no live process left. Of the
// daemons finding it, one wins; it publishes the ownership event and calls
// OnOrphaned.
func (r *Registry) orphan(ctx context.Context, run Run) error {
	lost, _ := r.st.GetOwner(ctx, run.Owner)
	data, _ := json.Marshal(Ownership{Phase: PhaseOrphaned, Host: run.Host, Owner: run.Owner, Program: lost.Program, PID: lost.PID})
	r.wmu.Lock()
	sr, sev, err := r.st.OrphanRun(ctx, run.ID, run.Owner, store.Event{Stream: store.StreamOwnership, At: r.now(), Data: data})
	if err != nil {
		r.wmu.Unlock()
		if errors.Is(err, store.ErrNotOwner) || errors.Is(err, ErrEnded) {
			return nil // another daemon did, or it ended
		}
		return err
	}
	r.publishLocalLocked(ctx, Event(sev), nil)
	r.wmu.Unlock()
	r.log.LogAttrs(ctx, slog.LevelWarn, "run orphaned: its host's daemon is gone", slog.String(keyRunID, run.ID),
		slog.String("host", run.Host), slog.String("lost_owner", run.Owner))
	r.mu.Lock()
	hook := r.onOrphan
	r.mu.Unlock()
	if hook != nil {
		hook(Run(sr), lost)
	}
	return nil
}

// Host is this registry's host (its owner's), empty before Own.
func (r *Registry) Host() string { return r.self().Host }

// SetHooks sets OnOrphaned and OnEndedElsewhere (see Options) once the
// engines they call exist. Nil leaves a hook as it is.
func (r *Registry) SetHooks(onOrphaned func(Run, Owner), onEndedElsewhere func(Run)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if onOrphaned != nil {
		r.onOrphan = onOrphaned
	}
	if onEndedElsewhere != nil {
		r.onElse = onEndedElsewhere
	}
}

// LiveOwners returns the processes whose lease holds now, by host.
func (r *Registry) LiveOwners(ctx context.Context) ([]Owner, error) {
	return r.st.LiveOwners(ctx, r.now())
}
