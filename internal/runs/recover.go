package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/acu-dev/acu/internal/store"
)

// Recover offers every live run that no lease covers (its owner stopped,
// its lease expired, or its process on this host is gone) to claim: the
// registry first takes the run over in the store (of two processes
// recovering at once, one wins), then claim may resume it (the wait engine
// claims its own kind; claimed runs become live here, their seq
// continuing); the rest are ended with phase "error" and RestartMessage (or
// OwnerLostMessage for a run of another program). Runs whose owner still
// holds its lease (a running `acu agent`, `acu task`, another daemon) are
// never touched. The daemon calls it at start-up and then periodically
// (Sweep). claim may be nil.
func (r *Registry) Recover(ctx context.Context, claim func(Run) bool) error {
	r.expireGoneOwners(ctx)
	self := r.self()
	left, err := r.st.UnownedRuns(ctx, r.now(), self.Host)
	if err != nil {
		return fmt.Errorf("recover runs: %w", err)
	}
	taken, err := r.takeFresh(ctx, self, left)
	if err != nil {
		return fmt.Errorf("recover runs: %w", err)
	}
	rc := &recovery{r: r, claim: claim, self: self, taken: taken}
	var errs []error
	for _, sr := range left {
		if err := rc.offer(ctx, Run(sr)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("recover runs: %w", err)
	}
	return nil
}

// takeFresh takes the runs nobody owns that this process may run (created
// for this host, or orphaned from it) in one transaction, not one each: a
// burst of runs created for this host is claimed at once. Each change of
// hands is recorded in that transaction: a daemon killed right after
// taking a run leaves the event with the owner it wrote. It returns the
// ids taken.
func (r *Registry) takeFresh(ctx context.Context, self store.Owner, left []store.Run) (map[string]bool, error) {
	var fresh []string
	var changes map[string]store.Event
	for _, sr := range left {
		if sr.Owner != "" || (sr.Host != "" && sr.Host != self.Host) {
			continue
		}
		fresh = append(fresh, sr.ID)
		phase := freshPhase(sr)
		if phase == "" {
			continue
		}
		data, err := json.Marshal(Ownership{Phase: phase, Host: self.Host, Owner: self.ID, Program: self.Program, PID: self.PID})
		if err != nil {
			return nil, err
		}
		if changes == nil {
			changes = make(map[string]store.Event)
		}
		changes[sr.ID] = store.Event{Stream: StreamOwnership, At: r.now(), Data: data}
	}
	r.wmu.Lock()
	defer r.wmu.Unlock()
	taken, evs, err := r.st.TakeUnowned(ctx, fresh, self.ID, changes)
	for _, ev := range evs {
		r.publishLocalLocked(ctx, Event(ev), nil)
	}
	return taken, err
}

// freshPhase is the ownership phase recorded when this process takes a run
// nobody owns: resumed for an orphan, claimed for a run created on another
// daemon for this host, none for this host's own.
func freshPhase(sr store.Run) string {
	switch {
	case sr.Status == StatusOrphaned:
		return PhaseResumed
	case sr.Host != "":
		return PhaseClaimed
	}
	return ""
}

// recovery is one Recover pass: what it took and what it learnt.
type recovery struct {
	r     *Registry
	claim func(Run) bool
	self  store.Owner
	taken map[string]bool // runs nobody owned, taken by takeFresh

	alive              map[string]bool // hosts with a live owner, read once when needed
	aliveRead, aliveOK bool
}

// offer takes run, if it is this host's and no other process took it
// first, then resumes it through claim or ends it.
func (rc *recovery) offer(ctx context.Context, run Run) error {
	r := rc.r
	r.mu.Lock()
	_, owned := r.live[run.ID]
	r.mu.Unlock()
	if owned {
		return nil
	}
	if run.Host != "" && run.Host != rc.self.Host {
		return rc.foreign(ctx, run)
	}
	prev := run.Owner
	if ok, err := rc.take(ctx, run); !ok {
		return err
	}
	// claim sees the run as it was found (Owner "" and a status other
	// than orphaned: never run by anyone, created for this host), then
	// it is this process's.
	wasOrphan := run.Status == StatusOrphaned
	claimed := rc.claim != nil && rc.claim(run)
	if !claimed {
		if _, err := r.End(ctx, run.ID, StatusError, r.lostMessage(ctx, prev), nil); err != nil && !errors.Is(err, ErrEnded) {
			return err
		}
		return nil
	}
	run.Owner = rc.self.ID
	if wasOrphan {
		run.Status = StatusRunning
	}
	r.mu.Lock()
	r.live[run.ID] = run
	r.mu.Unlock()
	if prev == "" && !wasOrphan {
		r.log.LogAttrs(ctx, slog.LevelDebug, "run claimed for this host", slog.String(keyRunID, run.ID), slog.String(keyKind, run.Kind))
	} else {
		r.log.LogAttrs(ctx, slog.LevelInfo, "run resumed from a stopped owner", slog.String(keyRunID, run.ID),
			slog.String(keyKind, run.Kind), slog.String("previous_owner", prev))
	}
	return nil
}

// take makes run this process's: a run nobody owned was taken with the
// rest (takeFresh); one of a gone owner is taken from it now. false with
// no error: another process took it, or it ended meanwhile.
func (rc *recovery) take(ctx context.Context, run Run) (bool, error) {
	if run.Owner == "" {
		return rc.taken[run.ID], nil
	}
	err := rc.r.st.TakeRun(ctx, run.ID, run.Owner, rc.self.ID)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotOwner), errors.Is(err, ErrEnded), errors.Is(err, ErrNotFound):
		return false, nil
	}
	return false, err
}

// foreign handles another host's run: only its daemon can run it. One whose
// owner is gone, on a host with no live owner left, is marked orphaned
// (once, fleet-wide) until that host comes back.
func (rc *recovery) foreign(ctx context.Context, run Run) error {
	if run.Owner == "" {
		return nil // waiting for its host, or already orphaned
	}
	if !rc.aliveRead {
		rc.alive, rc.aliveOK = rc.r.aliveHosts(ctx)
		rc.aliveRead = true
	}
	if rc.aliveOK && !rc.alive[run.Host] {
		return rc.r.orphan(ctx, run)
	}
	return nil
}
