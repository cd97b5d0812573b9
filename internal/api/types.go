// Package api holds acu's JSON wire types and a typed client for the
// daemon's HTTP API. The CLI, `acu mcp` and the tests use the client; the
// package imports no server code.
package api

import (
	"encoding/json"
	"time"
)

// ErrorDetail is the body of every error response:
// {"error":{"code":"invalid","message":"timeout: must be 1..86400 seconds","field":"timeout"}}.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// ErrorBody wraps ErrorDetail on the wire.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// Error codes.
const (
	CodeInvalid      = "invalid"      // 400: malformed or invalid request
	CodeUnauthorized = "unauthorized" // 401
	CodeForbidden    = "forbidden"    // 403: foreign Host or Origin
	CodeScope        = "scope"        // 403: the token lacks the scope the route needs
	CodeNotFound     = "not_found"    // 404
	CodeConflict     = "conflict"     // 409: e.g. the run already ended
	CodeTooLarge     = "too_large"    // 413
	CodeWaitTimeout  = "wait_timeout" // 504: a run wait's own timeout fired
	CodeUnavailable  = "unavailable"  // 503: e.g. display unreachable
	CodeInternal     = "internal"     // 500
)

// Run is one unit of work: a wait job, an agent session, a task.
type Run struct {
	ID         string          `json:"id"`
	Kind       string          `json:"kind"`
	SessionKey string          `json:"sessionKey,omitempty"`
	TaskID     string          `json:"taskId,omitempty"`
	Status     string          `json:"status"`
	StartedAt  time.Time       `json:"startedAt"`
	EndedAt    *time.Time      `json:"endedAt,omitempty"`
	Error      string          `json:"error,omitempty"`
	Spec       json.RawMessage `json:"spec,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
}

// RunList is a page of runs, newest first. Next is the cursor for the
// following page ("" when there is none).
type RunList struct {
	Runs []Run  `json:"runs"`
	Next string `json:"next,omitempty"`
}

// Event is one entry of a run's event stream. Cursor is global and
// resumable (it is the SSE id); Seq increases strictly per run.
type Event struct {
	Cursor int64           `json:"cursor"`
	RunID  string          `json:"runId"`
	Seq    int64           `json:"seq"`
	Stream string          `json:"stream"`
	At     time.Time       `json:"at"`
	Data   json.RawMessage `json:"data"`
}

// Lifecycle is the data of an event on the "lifecycle" stream.
type Lifecycle struct {
	Phase     string     `json:"phase"` // start, end, error
	Status    string     `json:"status,omitempty"`
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	Error     string     `json:"error,omitempty"`
}

// EventList answers the catch-up path GET /v1/events?after=N (without
// Accept: text/event-stream). Epoch changes at every daemon start.
type EventList struct {
	Events []Event `json:"events"`
	Epoch  string  `json:"epoch"`
	Cursor int64   `json:"cursor"`
}

// WaitResult is what waiting on a run returns: it resolves only on the
// run's lifecycle end or error.
type WaitResult struct {
	RunID     string     `json:"runId"`
	Status    string     `json:"status"`
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	Error     string     `json:"error,omitempty"`
}

// CancelRequest is the optional body of a cancel call.
type CancelRequest struct {
	Reason string `json:"reason,omitempty"`
}

// Health is GET /health. It needs no token and reveals no secrets.
type Health struct {
	Status   string            `json:"status"` // ok, degraded
	Version  string            `json:"version"`
	Epoch    string            `json:"epoch"`
	Started  time.Time         `json:"started"`
	LiveRuns int               `json:"liveRuns"`
	Judge    *JudgeInfo        `json:"judge,omitempty"`
	Breakers map[string]string `json:"breakers,omitempty"` // model client role -> closed, open, half-open
	Problems []string          `json:"problems,omitempty"`
}

// JudgeInfo says which judge backend is in use and why.
type JudgeInfo struct {
	Backend string `json:"backend"`
	Model   string `json:"model,omitempty"`
	Reason  string `json:"reason"`
}

// CreateWait is POST /v1/waits. Timeout and PollInterval are seconds.
// WakeWhen is accepted as another name for Criteria.
type CreateWait struct {
	Criteria     string  `json:"criteria"`
	WakeWhen     string  `json:"wake_when,omitempty"`
	Timeout      float64 `json:"timeout,omitempty"`
	Target       string  `json:"target,omitempty"`
	Display      string  `json:"display,omitempty"`
	TaskID       string  `json:"task_id,omitempty"`
	PollInterval float64 `json:"poll_interval,omitempty"`
}

// UpdateWait is PATCH /v1/waits/{id}: new criteria, or a new timeout
// counted from now (the clock is reset).
type UpdateWait struct {
	Criteria *string  `json:"criteria,omitempty"`
	Timeout  *float64 `json:"timeout,omitempty"`
}

// Verdict is one judgement of a wait job.
type Verdict struct {
	At        time.Time `json:"at"`
	Met       bool      `json:"met"`
	Evidence  string    `json:"evidence,omitempty"`
	FrameHash string    `json:"frame_hash,omitempty"`
	LatencyMs float64   `json:"latency_ms"`
	CostUSD   float64   `json:"cost_usd"`
	Backend   string    `json:"backend,omitempty"`
	Model     string    `json:"model,omitempty"`
	Deduped   bool      `json:"deduped,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// Revision is one entry of a wait's history (creation and each update).
type Revision struct {
	At       time.Time `json:"at"`
	Criteria string    `json:"criteria"`
	Timeout  float64   `json:"timeout"`
	Deadline time.Time `json:"deadline"`
}

// Wait is a smart-wait job. Its ID is its run id. State is watching,
// resolved, timeout, cancelled or error; Message is the notification text
// once it ended. Durations are seconds.
type Wait struct {
	ID           string     `json:"id"`
	State        string     `json:"state"`
	Criteria     string     `json:"criteria"`
	Target       string     `json:"target"`
	Display      string     `json:"display,omitempty"`
	Source       string     `json:"source,omitempty"`
	TaskID       string     `json:"task_id,omitempty"`
	Timeout      float64    `json:"timeout"`
	PollInterval float64    `json:"poll_interval,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	Deadline     time.Time  `json:"deadline"`
	EndedAt      *time.Time `json:"ended_at,omitempty"`
	Evaluations  int        `json:"evaluations"`
	JudgeErrors  int        `json:"judge_errors"`
	Skipped      int        `json:"skipped"`
	LastVerdict  *Verdict   `json:"last_verdict,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
	Evidence     string     `json:"evidence,omitempty"`
	Screenshot   string     `json:"screenshot,omitempty"`
	FrameHash    string     `json:"frame_hash,omitempty"`
	Message      string     `json:"message,omitempty"`
	Reason       string     `json:"reason,omitempty"`
	History      []Revision `json:"history,omitempty"`
}

// WaitList is GET /v1/waits.
type WaitList struct {
	Waits []Wait `json:"waits"`
}

// SettleRequest is POST /v1/settle: wait until a target's frames stop
// changing for Quiet seconds, at most Timeout seconds.
type SettleRequest struct {
	Target  string  `json:"target,omitempty"`
	Display string  `json:"display,omitempty"`
	Quiet   float64 `json:"quiet,omitempty"`
	Timeout float64 `json:"timeout,omitempty"`
}

// SettleResult answers a settle.
type SettleResult struct {
	RunID     string  `json:"run_id,omitempty"`
	Settled   bool    `json:"settled"`
	Waited    float64 `json:"waited"` // seconds
	Changes   int     `json:"changes"`
	FrameHash string  `json:"frame_hash,omitempty"`
}

// LoginLink is POST /v1/auth/link: a one-time URL of the API page, whose
// code (in the URL fragment) the page swaps for a session of its own, so no
// page ever holds the token and no cookie is set.
type LoginLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Token scopes, each including the ones before it: read (screenshots,
// waits, runs, events, element map and windows listed), act (input,
// window operations, launch, clipboard, tasks) and admin (login links and
// everything else). The daemon's own token has admin.
const (
	ScopeRead  = "read"
	ScopeAct   = "act"
	ScopeAdmin = "admin"
)

// Scopes lists the scopes from least to most.
var Scopes = []string{ScopeRead, ScopeAct, ScopeAdmin}

// ScopeRank orders scopes: 0 for an unknown one.
func ScopeRank(scope string) int {
	for i, s := range Scopes {
		if s == scope {
			return i + 1
		}
	}
	return 0
}
