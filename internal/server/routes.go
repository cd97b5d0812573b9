package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/computer"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/smartwait"
)

// Runs is what the server needs from the run registry (*runs.Registry).
type Runs interface {
	Get(ctx context.Context, id string) (runs.Run, error)
	List(ctx context.Context, f runs.ListFilter) ([]runs.Run, error)
	Wait(ctx context.Context, id string, timeout time.Duration) (runs.Result, error)
	End(ctx context.Context, id, status, errMsg string, result any) (runs.Run, error)
	Emit(ctx context.Context, runID, stream string, data any) (runs.Event, error)
	Events(ctx context.Context, after int64, f runs.Filter, limit int) ([]runs.Event, error)
	LastCursor(ctx context.Context) (int64, error)
	Subscribe(ctx context.Context, f runs.Filter, after int64) (*runs.Subscription, error)
	Cancel(ctx context.Context, id, reason string, engine func(ctx context.Context, id, reason string) error) (runs.Run, error)
}

// routes builds the handler from the route table (table.go): every route
// passes the Host and Origin checks and the body limit, and all but the open
// ones need a token (or a page's session header) of their scope.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.mount(mux)
	var h http.Handler = mux
	h = s.limitBody(h)
	h = Guard{AllowedHosts: s.opts.AllowedHosts, ListenHost: s.opts.ListenHost}.Wrap(h)
	h = s.accessLog(h)
	return h
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	h := api.Health{Status: "ok", Version: s.opts.Version, Epoch: s.opts.Epoch}
	if s.opts.Health != nil {
		h = s.opts.Health(r.Context())
	}
	writeJSON(w, http.StatusOK, h)
	return nil
}

func toAPIRun(r runs.Run) api.Run {
	out := api.Run{ID: r.ID, Kind: r.Kind, Host: r.Host, SessionKey: r.SessionKey, TaskID: r.TaskID, Status: r.Status,
		StartedAt: r.StartedAt, Error: r.Error, Spec: r.Spec, Result: r.Result, Creator: r.Creator}
	if !r.EndedAt.IsZero() {
		t := r.EndedAt
		out.EndedAt = &t
	}
	return out
}

func toAPIEvent(e runs.Event) api.Event {
	return api.Event{Cursor: e.Cursor, RunID: e.RunID, Seq: e.Seq, Stream: e.Stream, At: e.At, Data: e.Data}
}

func (s *Server) handleListRuns(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := runs.ListFilter{Kind: q.Get("kind"), Status: q.Get("status"), TaskID: q.Get("task_id"), Before: q.Get("before"), Display: q.Get("display"), Host: q.Get("host")}
	if v := q.Get("live"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errInvalid("live", "live must be true or false, got %q", v)
		}
		f.Live = &b
	}
	limit, err := intParam(q.Get("limit"), "limit", 50, 1, 1000)
	if err != nil {
		return err
	}
	f.Limit = limit + 1
	list, err := s.opts.Runs.List(r.Context(), f)
	if err != nil {
		if f.Before != "" && errors.Is(err, runs.ErrNotFound) {
			return errInvalid("before", "before: no run %q: pass the last id of the previous page (its next)", f.Before)
		}
		return err
	}
	out := api.RunList{Runs: make([]api.Run, 0, len(list))}
	if len(list) > limit {
		list = list[:limit]
		out.Next = list[limit-1].ID
	}
	owners := map[string]*api.RunOwner{}
	for _, run := range list {
		a := toAPIRun(run)
		a.Owner = s.ownerOf(r.Context(), run.Owner, owners)
		out.Runs = append(out.Runs, a)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ownerLookup is the optional part of Runs that describes run owners.
type ownerLookup interface {
	Owner(ctx context.Context, id string) (runs.Owner, error)
}

// ownerOf describes owner id for the API, through seen (a page's cache);
// nil when the run has no owner or it cannot be read.
func (s *Server) ownerOf(ctx context.Context, id string, seen map[string]*api.RunOwner) *api.RunOwner {
	if id == "" {
		return nil
	}
	if o, ok := seen[id]; ok {
		return o
	}
	var out *api.RunOwner
	if ol, ok := s.opts.Runs.(ownerLookup); ok {
		if o, err := ol.Owner(ctx, id); err == nil {
			out = &api.RunOwner{ID: o.ID, Host: o.Host, PID: o.PID, Program: o.Program, StartedAt: o.StartedAt,
				LeaseUntil: o.LeaseUntil, Alive: !o.Expired(time.Now())}
		}
	}
	if seen != nil {
		seen[id] = out
	}
	return out
}

func (s *Server) handleGetRun(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	run, err := s.opts.Runs.Get(r.Context(), id)
	if err != nil {
		return about(aboutRun, id, err)
	}
	out := toAPIRun(run)
	out.Owner = s.ownerOf(r.Context(), run.Owner, nil)
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleCancelRun(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var req api.CancelRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
	}
	if err := smartwait.CheckReason(req.Reason); err != nil {
		return about(aboutWait, id, err)
	}
	run, err := s.opts.Runs.Get(r.Context(), id)
	if err != nil {
		return about(aboutRun, id, err)
	}
	if err := mayChangeRun(r.Context(), "cancelling", id, run.Creator); err != nil {
		return err
	}
	if !run.Live() {
		return errConflict("run %q has already ended (%s)", id, run.Status)
	}
	if run, err = s.opts.Runs.Cancel(r.Context(), id, req.Reason, s.opts.Cancellers[run.Kind]); err != nil {
		return about(aboutRun, id, err)
	}
	writeJSON(w, http.StatusOK, toAPIRun(run))
	return nil
}

// handleResumeRun: POST /v1/runs/{id}/resume answers a run that waits for
// the user (computer.Resume: its last control event is needs_user; safety
// checks need acknowledge and an admin).
func (s *Server) handleResumeRun(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var req api.ResumeRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
	}
	p := PrincipalOf(r.Context())
	run, ev, err := computer.Resume(r.Context(), s.opts.Runs, id, computer.Answer{Acknowledge: req.Acknowledge, Message: req.Message},
		computer.Answerer{By: p.String(), Admin: api.ScopeRank(p.Scope) >= api.ScopeRank(api.ScopeAdmin), Scope: p.Scope,
			May: func(creator string) error { return mayChangeRun(r.Context(), "resuming", id, creator) }})
	if err != nil {
		return about(aboutRun, id, err)
	}
	writeJSON(w, http.StatusOK, api.ResumeResult{Run: toAPIRun(run), Event: toAPIEvent(ev)})
	return nil
}

// maxRunWait bounds one HTTP wait; clients loop for longer waits.
const maxRunWait = 10 * time.Minute

func (s *Server) handleWaitRun(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	timeout := 30 * time.Second
	if v := r.URL.Query().Get("timeout"); v != "" {
		d, err := config.ParseDuration(v)
		if err != nil || d <= 0 || d > maxRunWait {
			return errInvalid("timeout", "timeout must be a duration or seconds from 0 to %s, got %q", maxRunWait, v)
		}
		timeout = d
	}
	res, err := s.opts.Runs.Wait(r.Context(), id, timeout)
	if err != nil {
		return about(aboutRun, id, err)
	}
	out := api.WaitResult{RunID: res.RunID, Status: res.Status, StartedAt: res.StartedAt, Error: res.Error}
	if !res.EndedAt.IsZero() {
		t := res.EndedAt
		out.EndedAt = &t
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func intParam(v, name string, def, lo, hi int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, errInvalid(name, "%s must be a whole number from %d to %d, got %q", name, lo, hi, v)
	}
	return n, nil
}

func eventFilter(r *http.Request) runs.Filter {
	q := r.URL.Query()
	f := runs.Filter{RunID: q.Get("run")}
	if v := q.Get("stream"); v != "" {
		for _, st := range strings.Split(v, ",") {
			if st = strings.TrimSpace(st); st != "" {
				f.Streams = append(f.Streams, st)
			}
		}
	}
	return f
}
