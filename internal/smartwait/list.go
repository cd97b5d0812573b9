package smartwait

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acu-dev/acu/internal/runs"
)

// Get returns a job, live or ended.
func (e *Engine) Get(ctx context.Context, id string) (Job, error) {
	if j := e.live(id); j != nil {
		j.mu.Lock()
		defer j.mu.Unlock()
		return j.view(), nil
	}
	run, err := e.opts.Runs.Get(ctx, id)
	if err != nil {
		if errors.Is(err, runs.ErrNotFound) {
			return Job{}, fmt.Errorf("get wait job %q: %w", id, ErrNotFound)
		}
		return Job{}, fmt.Errorf("get wait job %q: %w", id, err)
	}
	if run.Kind != KindWait {
		return Job{}, fmt.Errorf("get wait job %q: run is a %q: %w", id, run.Kind, ErrNotFound)
	}
	return jobFromRun(run)
}

// jobFromRun builds a Job from a stored run (ended, or live in another
// process's registry).
func jobFromRun(run runs.Run) (Job, error) {
	var sp spec
	if err := json.Unmarshal(run.Spec, &sp); err != nil {
		return Job{}, fmt.Errorf("decode wait job %q spec: %w", run.ID, err)
	}
	j := newJob(run.ID, sp)
	v := j.view()
	if run.EndedAt.IsZero() {
		return v, nil
	}
	v.Status = run.Status
	v.EndedAt = run.EndedAt
	v.Reason = run.Error
	if len(run.Result) > 0 {
		var r result
		if err := json.Unmarshal(run.Result, &r); err == nil {
			v.Evidence, v.Screenshot, v.FrameHash = r.Evidence, r.Screenshot, r.FrameHash
			v.Evaluations, v.JudgeErrors, v.Skipped = r.Evaluations, r.JudgeErrors, r.Skipped
			v.Message, v.LastError = r.Message, r.LastError
			if r.Reason != "" {
				v.Reason = r.Reason
			}
		}
	}
	return v, nil
}

// ListOptions select a page of wait jobs.
type ListOptions struct {
	// State is "" (all), "live" or "watching" (live jobs), or an end status
	// (resolved, timeout, cancelled, error).
	State string
	// Limit is the page size: DefaultListLimit when 0, at most MaxListLimit.
	Limit int
	// Before is a job id: the page after it (jobs are listed newest first).
	Before string
}

// Page is one page of wait jobs, newest first.
type Page struct {
	Jobs []Job
	// Total is how many jobs match the state, across all pages.
	Total int
	// Next is the id to pass as Before for the next page; "" on the last.
	Next string
}

// Page sizes of List.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// List returns a page of wait jobs by state, newest first as the registry
// orders them, with the total and the cursor of the next page, so no
// listing is ever cut short silently. An unknown Before is a
// *ValidationError for "before".
func (e *Engine) List(ctx context.Context, o ListOptions) (Page, error) {
	f := runs.ListFilter{Kind: KindWait}
	switch o.State {
	case "", "all":
	case "live", StatusWatching:
		live := true
		f.Live = &live
	case StatusResolved, StatusTimeout, StatusCancelled, StatusError:
		f.Status = o.State
	default:
		return Page{}, &ValidationError{Field: "state", Message: "must be one of live, resolved, timeout, cancelled, error (or empty for all)"}
	}
	limit := o.Limit
	switch {
	case limit == 0:
		limit = DefaultListLimit
	case limit < 0 || limit > MaxListLimit:
		return Page{}, &ValidationError{Field: "limit", Message: fmt.Sprintf("must be 1..%d", MaxListLimit)}
	}
	f.Limit, f.Before = limit+1, o.Before
	rs, err := e.opts.Runs.List(ctx, f)
	if err != nil {
		if o.Before != "" && errors.Is(err, runs.ErrNotFound) {
			return Page{}, &ValidationError{Field: "before", Message: fmt.Sprintf("no wait job %q: pass the next of the previous page", o.Before), Err: err}
		}
		return Page{}, fmt.Errorf("list wait jobs: %w", err)
	}
	var p Page
	if len(rs) > limit {
		rs = rs[:limit]
		p.Next = rs[limit-1].ID
	}
	f.Limit, f.Before = 0, ""
	if p.Total, err = e.opts.Runs.Count(ctx, f); err != nil {
		return Page{}, fmt.Errorf("count wait jobs: %w", err)
	}
	p.Jobs = make([]Job, 0, len(rs))
	for _, r := range rs {
		if j := e.live(r.ID); j != nil {
			j.mu.Lock()
			p.Jobs = append(p.Jobs, j.view())
			j.mu.Unlock()
			continue
		}
		v, err := jobFromRun(r)
		if err != nil {
			e.log.Warn("skip undecodable wait run", "run_id", r.ID, "error", err)
			continue
		}
		p.Jobs = append(p.Jobs, v)
	}
	return p, nil
}
