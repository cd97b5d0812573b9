// Package handoff hands action requests between the daemons of a fleet
// (several acu daemons on one PostgreSQL database): a daemon that receives
// a request for another host stores it as a run of kind action for that
// host and waits for its end; the host's daemon claims the run, acts, and
// ends it with the answer. It sits beside the action service, below the
// HTTP server, which only decodes the request and encodes the answer. It
// does not act itself: Options.Act does.
package handoff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/runs"
)

// Kind is the run of an action request handed to another host.
const Kind = "action"

// DefaultTimeout bounds how long a request handed to another host waits
// for that daemon's answer, and how long the answering daemon acts.
const DefaultTimeout = 5 * time.Minute

// Runs is what the hand-off needs of the run registry (*runs.Registry).
type Runs interface {
	Host() string
	Start(ctx context.Context, o runs.StartOptions) (runs.Run, error)
	Wait(ctx context.Context, runID string, timeout time.Duration) (runs.Result, error)
	Get(ctx context.Context, runID string) (runs.Run, error)
	End(ctx context.Context, runID, status, errMsg string, result any) (runs.Run, error)
}

// Options configure a Handoff.
type Options struct {
	Runs Runs
	// Act runs a request another host sent here, for client (the sender's
	// client tag, "fleet:<origin>[:<client>]") and remote ("host <origin>").
	// Nil: this daemon claims no action runs.
	Act func(ctx context.Context, client, remote string, req api.ActRequest) (api.ActResponse, error)
	// Answer is how this daemon's API answers an error: the status and
	// body the sender gets, as if it had asked here. known is false for an
	// internal error, whose own text is then sent.
	Answer  func(err error) (status int, detail api.ErrorDetail, known bool)
	Timeout time.Duration // 0: DefaultTimeout
	Logger  *slog.Logger
}

// Handoff sends action requests to other hosts' daemons and runs the ones
// they send here.
type Handoff struct {
	opts Options
	log  *slog.Logger

	mu    sync.Mutex
	queue []claimed     // claimed runs Run has not started yet
	kick  chan struct{} // a claim was queued
}

// claimed is an action run another host stored for this one.
type claimed struct {
	id   string
	spec spec
}

// spec is an action run's spec: the request and who sent it.
type spec struct {
	Request api.ActRequest `json:"request"`
	Client  string         `json:"client,omitempty"`
	Origin  string         `json:"origin"` // the host whose daemon received it
}

// result is an action run's result: the answer, or the error with its HTTP
// status, as the host that ran it would have answered.
type result struct {
	Response *api.ActResponse `json:"response,omitempty"`
	Status   int              `json:"status,omitempty"`
	Error    *api.ErrorDetail `json:"error,omitempty"`
}

// New returns a hand-off; Run serves the runs it claims.
func New(o Options) *Handoff {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handoff{opts: o, log: log, kick: make(chan struct{}, 1)}
}

// TimeoutError: the other host's daemon did not end the run in time.
type TimeoutError struct {
	Host    string
	RunID   string
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("host %q did not answer the request within %s: is its daemon stuck? see GET /v1/runs/%s", e.Host, e.Timeout, e.RunID)
}

// NoAnswerError: the other host ended the run without an answer.
type NoAnswerError struct {
	Host, Status, Reason string
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("host %q ended the request %s without an answer: %s", e.Host, e.Status, e.Reason)
}

// Send hands req, from client, to host's daemon and returns its answer: an
// error it answered is an *api.StatusError with its status; one it never
// gave is a *TimeoutError or a *NoAnswerError.
func (h *Handoff) Send(ctx context.Context, host string, req api.ActRequest, client string) (api.ActResponse, error) {
	req.Host = ""
	reg := h.opts.Runs
	run, err := reg.Start(ctx, runs.StartOptions{Kind: Kind, Host: host,
		Spec: spec{Request: req, Client: client, Origin: reg.Host()}})
	if err != nil {
		return api.ActResponse{}, err
	}
	res, err := reg.Wait(ctx, run.ID, h.opts.Timeout)
	if err != nil {
		if errors.Is(err, runs.ErrWaitTimeout) {
			_, _ = reg.End(context.WithoutCancel(ctx), run.ID, runs.StatusError, "no answer from host "+host+" in time", nil)
			return api.ActResponse{}, &TimeoutError{Host: host, RunID: run.ID, Timeout: h.opts.Timeout}
		}
		return api.ActResponse{}, err
	}
	ended, err := reg.Get(ctx, run.ID)
	if err != nil {
		return api.ActResponse{}, err
	}
	var out result
	if len(ended.Result) > 0 {
		_ = json.Unmarshal(ended.Result, &out)
	}
	switch {
	case out.Response != nil:
		return *out.Response, nil
	case out.Error != nil:
		return api.ActResponse{}, &api.StatusError{Status: out.Status, ErrorDetail: *out.Error}
	}
	return api.ActResponse{}, &NoAnswerError{Host: host, Status: res.Status, Reason: res.Error}
}

// Claim takes an action run another daemon stored for this host (a claimed
// run of kind action): Run acts on it and ends it with the answer. It
// reports whether run is one it takes; it does not block.
func (h *Handoff) Claim(run runs.Run) bool {
	if run.Kind != Kind || h.opts.Act == nil {
		return false
	}
	var sp spec
	if err := json.Unmarshal(run.Spec, &sp); err != nil {
		return false
	}
	h.mu.Lock()
	h.queue = append(h.queue, claimed{id: run.ID, spec: sp})
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
	return true
}

// Run acts on the claimed runs, each on its own goroutine, until ctx ends;
// then it waits for those under way, whose requests ctx's end cancels.
func (h *Handoff) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.kick:
		}
		h.mu.Lock()
		q := h.queue
		h.queue = nil
		h.mu.Unlock()
		for _, c := range q {
			wg.Go(func() { h.serve(ctx, c) })
		}
	}
}

// serve acts on c and ends its run with the answer.
func (h *Handoff) serve(ctx context.Context, c claimed) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.Timeout)
	defer cancel()
	client := "fleet:" + c.spec.Origin
	if c.spec.Client != "" {
		client += ":" + c.spec.Client
	}
	resp, err := h.opts.Act(ctx, client, "host "+c.spec.Origin, c.spec.Request)
	status, errMsg := runs.StatusCompleted, ""
	out := result{Response: &resp}
	if err != nil {
		code, detail := h.answer(err)
		out = result{Status: code, Error: &detail}
		status, errMsg = runs.StatusError, fmt.Sprintf("%s (%d)", detail.Message, code)
	}
	if _, err := h.opts.Runs.End(context.WithoutCancel(ctx), c.id, status, errMsg, out); err != nil && !errors.Is(err, runs.ErrEnded) {
		h.log.Warn("end an action run from another host", "run_id", c.id, "err", err)
	}
}

// answer is the status and body the sender gets for err.
func (h *Handoff) answer(err error) (int, api.ErrorDetail) {
	if h.opts.Answer != nil {
		if status, detail, known := h.opts.Answer(err); known {
			return status, detail
		}
	}
	return 500, api.ErrorDetail{Code: api.CodeInternal, Message: err.Error()}
}
