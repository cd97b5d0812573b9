package actions

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/runs"
)

// Kind is the run kind of an acting session.
const Kind = "session"

// StreamAction is the event stream of a session's action requests.
const StreamAction = "action"

// DefaultSessionIdle is Options.SessionIdle's default.
const DefaultSessionIdle = 10 * time.Minute

// Runs is what the service needs from the run registry (*runs.Registry).
type Runs interface {
	Start(ctx context.Context, o runs.StartOptions) (runs.Run, error)
	Emit(ctx context.Context, runID, stream string, data any) (runs.Event, error)
	End(ctx context.Context, runID, status, errMsg string, result any) (runs.Run, error)
}

// sessionSpec is a session run's spec.
type sessionSpec struct {
	Client  string `json:"client"`
	Display string `json:"display"`
}

// sessionResult is a session run's result.
type sessionResult struct {
	Requests int    `json:"requests"`
	Actions  int    `json:"actions"`
	Failed   int    `json:"failed"`
	Reason   string `json:"reason"`
}

type session struct {
	runID string
	last  time.Time
	res   sessionResult
}

type sessionKey struct{ client, display string }

// sessions keeps one live session run per client and display.
type sessions struct {
	runs Runs
	idle time.Duration
	now  func() time.Time

	mu   sync.Mutex
	live map[sessionKey]*session
}

// record appends ev to the session of client on dpy, starting one when
// there is none; it returns the session's run id.
func (s *sessions) record(ctx context.Context, client, dpy string, ev AuditEvent) (string, error) {
	if s.runs == nil {
		return "", nil
	}
	k := sessionKey{client, dpy}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.live[k]
	if ss == nil {
		run, err := s.runs.Start(ctx, runs.StartOptions{Kind: Kind, SessionKey: client + "@" + dpy, Spec: sessionSpec{Client: client, Display: dpy}})
		if err != nil {
			return "", err
		}
		ss = &session{runID: run.ID}
		s.live[k] = ss
	}
	ss.last = s.now()
	ss.res.Requests++
	ss.res.Actions += ev.Ran
	if !ev.OK {
		ss.res.Failed++
	}
	if _, err := s.runs.Emit(ctx, ss.runID, StreamAction, ev); err != nil {
		if errors.Is(err, runs.ErrEnded) { // ended under us (cancelled by a client): start afresh next time
			delete(s.live, k)
		}
		return ss.runID, err
	}
	return ss.runID, nil
}

// reap ends sessions idle for longer than idle (all of them when all is set).
func (s *sessions) reap(ctx context.Context, all bool) {
	if s.runs == nil {
		return
	}
	now := s.now()
	s.mu.Lock()
	var done []*session
	for k, ss := range s.live {
		if all || now.Sub(ss.last) >= s.idle {
			delete(s.live, k)
			done = append(done, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range done {
		ss.res.Reason = "client idle"
		if all {
			ss.res.Reason = "daemon stopped"
		}
		_, _ = s.runs.End(ctx, ss.runID, runs.StatusCompleted, "", ss.res)
	}
}

// AuditEvent is the data of one "action" event of a session run: who did
// what where, and how it went.
type AuditEvent struct {
	Client  string        `json:"client"`
	Token   string        `json:"token,omitempty"` // which token: "token-file", "session", or an extra token's id and name
	Remote  string        `json:"remote,omitempty"`
	Display string        `json:"display"`
	Actions []AuditAction `json:"actions"`
	Ran     int           `json:"ran"`
	OK      bool          `json:"ok"`
	Error   string        `json:"error,omitempty"`
	Code    string        `json:"code,omitempty"`
	Ms      float64       `json:"ms"`
}

// AuditAction is one action as recorded: its kind, where it landed and how
// it went. Typed text is recorded by length only.
type AuditAction struct {
	Kind    string  `json:"kind"`
	Element string  `json:"element,omitempty"`
	At      *[2]int `json:"at,omitempty"`
	Window  string  `json:"window,omitempty"`
	Keys    string  `json:"keys,omitempty"`
	TextLen int     `json:"text_len,omitempty"`
	Via     string  `json:"via,omitempty"`
	OK      bool    `json:"ok"`
	Error   string  `json:"error,omitempty"`
}
