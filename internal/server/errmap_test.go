package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/computer"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/live"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/record"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/smartwait"
)

// TestErrorResponses: the services' errors, as handlers return them,
// answered by the one error boundary (writeError): at least one case per
// class, and the cases where what the request was about picks the message.
func TestErrorResponses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		want   api.ErrorDetail
	}{
		{"internal", errors.New("disk on fire"), 500,
			api.ErrorDetail{Code: api.CodeInternal, Message: "internal error: see the daemon's log"}},
		{"internal: an error no rule knows about a run", about(aboutRun, "run_1", errors.New("boom")), 500,
			api.ErrorDetail{Code: api.CodeInternal, Message: "internal error: see the daemon's log"}},
		{"invalid: a wait's validation", about(aboutWait, "", &smartwait.ValidationError{Field: "timeout", Message: "must be 1..86400 seconds"}), 400,
			api.ErrorDetail{Code: api.CodeInvalid, Field: "timeout", Message: "timeout: must be 1..86400 seconds"}},
		{"invalid: a bad display name", fmt.Errorf("capture: %w", display.ErrBadName), 400,
			api.ErrorDetail{Code: api.CodeInvalid, Field: "display", Message: "capture: " + display.ErrBadName.Error()}},
		{"invalid: a target that matches no window", &capture.TargetError{Display: ":9", Target: "window:nope"}, 400,
			api.ErrorDetail{Code: api.CodeInvalid, Field: "target"}},
		{"invalid: a live input event", about(aboutLive, ":9", &live.InputError{Index: 2, Err: errors.New("unknown key")}), 400,
			api.ErrorDetail{Code: api.CodeInvalid, Field: "events[2]", Message: "events[2]: unknown key"}},
		{"invalid: a dialect's query", &computer.QueryError{Field: "limit", Message: "limit: use WxH"}, 400,
			api.ErrorDetail{Code: api.CodeInvalid, Field: "limit", Message: "limit: use WxH"}},
		{"invalid: an action's own", &actions.Error{Code: api.CodeInvalid, Field: "actions[0].kind", Message: "unknown kind"}, 400,
			api.ErrorDetail{Code: api.CodeInvalid, Field: "actions[0].kind", Message: "unknown kind"}},
		{"forbidden: the gate's policy", fmt.Errorf("act: %w", &gate.Refused{Code: api.CodeWindowDenied, Message: "the window is denied"}), 403,
			api.ErrorDetail{Code: api.CodeWindowDenied, Message: "the window is denied"}},
		{"forbidden: acting is off", &actions.Error{Code: api.CodeActDisabled, Message: "acting is off"}, 403,
			api.ErrorDetail{Code: api.CodeActDisabled, Message: "acting is off"}},
		{"not found: a run", about(aboutRun, "run_1", fmt.Errorf("get: %w", runs.ErrNotFound)), 404,
			api.ErrorDetail{Code: api.CodeNotFound, Message: `no run "run_1": list runs with GET /v1/runs`}},
		{"not found: a wait", about(aboutWait, "w_1", smartwait.ErrNotFound), 404,
			api.ErrorDetail{Code: api.CodeNotFound, Message: `no wait job "w_1": list them with GET /v1/waits`}},
		{"not found: a recording", about(aboutRecording, "rec_1", record.ErrNotFound), 404,
			api.ErrorDetail{Code: api.CodeNotFound, Message: `no recording "rec_1": list them with GET /v1/recordings`}},
		{"not found: a window", &gate.Error{Kind: gate.NotFound, Field: "id", Message: "no window 0x1"}, 404,
			api.ErrorDetail{Code: api.CodeNotFound, Field: "id", Message: "no window 0x1"}},
		{"not found: a vendor", &computer.QueryError{Field: "vendor", Message: "no vendor x"}, 404,
			api.ErrorDetail{Code: api.CodeNotFound, Message: "no vendor x"}},
		{"conflict: the user is active", &gate.Refused{Code: api.CodeUserActive, Message: "the user is typing", ActiveFor: time.Second, RetryAfter: 2 * time.Second}, 409,
			api.ErrorDetail{Code: api.CodeUserActive, Message: "the user is typing", ActiveMs: 1000, RetryAfterMs: 2000}},
		{"conflict: a run ended", about(aboutRun, "run_1", runs.ErrEnded), 409,
			api.ErrorDetail{Code: api.CodeConflict, Message: `run "run_1" has already ended`}},
		{"conflict: a recording incomplete", about(aboutRecording, "rec_1", record.ErrIncomplete), 409,
			api.ErrorDetail{Code: api.CodeIncomplete, Message: `recording "rec_1" is incomplete: ` + record.ErrIncomplete.Error()}},
		{"conflict: a display not taken over", about(aboutLive, ":9", live.ErrNotHeld), 409,
			api.ErrorDetail{Code: api.CodeConflict, Message: ":9 is not taken over: take it over first (POST /v1/live/takeover)"}},
		{"conflict: the orchestrator is busy", fmt.Errorf("start: %w", orchestrator.ErrBusy), 409,
			api.ErrorDetail{Code: api.CodeConflict, Message: "start: " + orchestrator.ErrBusy.Error()}},
		{"too large: a clipboard", &gate.Error{Kind: gate.TooLarge, Field: "text", Message: "too much text"}, 413,
			api.ErrorDetail{Code: api.CodeTooLarge, Field: "text", Message: "too much text"}},
		{"limit: too many recordings", about(aboutRecorder, "", fmt.Errorf("%w: 4 are running", record.ErrTooMany)), 429,
			api.ErrorDetail{Code: api.CodeLimit, Message: record.ErrTooMany.Error() + ": 4 are running"}},
		{"storage: the disk budget", about(aboutRecorder, "", record.ErrDiskBudget), 507,
			api.ErrorDetail{Code: api.CodeLimit, Message: record.ErrDiskBudget.Error()}},
		{"bad gateway: another host's answer as it was", &api.StatusError{Status: 502, ErrorDetail: api.ErrorDetail{Code: api.CodeUnavailable, Message: "no answer"}}, 502,
			api.ErrorDetail{Code: api.CodeUnavailable, Message: "no answer"}},
		{"unavailable: the wait engine stopping", about(aboutWait, "w_1", smartwait.ErrStopped), 503,
			api.ErrorDetail{Code: api.CodeUnavailable, Message: "the wait engine is shutting down: retry after the daemon restarts"}},
		{"unavailable: no display", fmt.Errorf("open :9: %w", display.ErrNoDisplay), 503,
			api.ErrorDetail{Code: api.CodeUnavailable, Field: "display", Message: "open :9: " + display.ErrNoDisplay.Error()}},
		{"unavailable: the recorder cannot start", about(aboutRecorder, "", errors.New("ffmpeg not found")), 503,
			api.ErrorDetail{Code: api.CodeUnavailable, Message: "cannot record: ffmpeg not found"}},
		{"unavailable: a live display", about(aboutLive, ":9", errors.New("connection reset")), 503,
			api.ErrorDetail{Code: api.CodeUnavailable, Message: "display :9: connection reset"}},
		{"timeout: a run wait", about(aboutRun, "run_1", runs.ErrWaitTimeout), 504,
			api.ErrorDetail{Code: api.CodeWaitTimeout, Field: "timeout", Message: `run "run_1" did not end within the wait's timeout: wait again, or raise timeout`}},
		{"a handler's own error", errConflict("busy"), 409, api.ErrorDetail{Code: api.CodeConflict, Message: "busy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			writeError(rec, httptest.NewRequest("GET", "/", nil), tc.err)
			if rec.Code != tc.status {
				t.Errorf("status = %d, want %d", rec.Code, tc.status)
			}
			var body api.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if tc.want.Message == "" { // the error's own text, checked below
				tc.want.Message = body.Error.Message
				if body.Error.Message != tc.err.Error() {
					t.Errorf("message = %q, want the error's %q", body.Error.Message, tc.err.Error())
				}
			}
			if diff := cmp.Diff(tc.want, body.Error); diff != "" {
				t.Errorf("error body (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEveryClassHasAStatus: each class answers with its own status and a
// code.
func TestEveryClassHasAStatus(t *testing.T) {
	seen := map[int]class{}
	for c, v := range classes {
		if v.status == 0 || v.code == "" {
			t.Errorf("class %d has status %d, code %q", c, v.status, v.code)
		}
		if o, dup := seen[v.status]; dup {
			t.Errorf("classes %d and %d both answer %d", o, c, v.status)
		}
		seen[v.status] = class(c)
	}
}
