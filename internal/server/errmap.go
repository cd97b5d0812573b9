package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/computer"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/handoff"
	"github.com/acu-dev/acu/internal/live"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/record"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/tasklog"
)

// This file is the one place where the errors of acu's services become
// responses. Handlers return what a service returned, wrapped with what the
// request was about (about) where the message names it; response finds its
// class (the HTTP status and default code), code, field and message here.

// class is the kind of a failure: it decides the response's status and,
// unless a rule names its own, its code.
type class uint8

const (
	classInternal     class = iota // 500: a bug or a failure the client cannot fix
	classInvalid                   // 400: the request is wrong
	classUnauthorized              // 401
	classForbidden                 // 403: the policy forbids it
	classNotFound                  // 404
	classConflict                  // 409: not in this state
	classTooLarge                  // 413
	classLimit                     // 429: a configured count is reached
	classStorage                   // 507: a configured disk budget is reached
	classBadGateway                // 502: another host answered nothing usable
	classUnavailable               // 503: a display, engine or tool is not there
	classTimeout                   // 504: another party did not answer in time
)

var classes = [...]struct {
	status int
	code   string
}{
	classInternal:     {http.StatusInternalServerError, api.CodeInternal},
	classInvalid:      {http.StatusBadRequest, api.CodeInvalid},
	classUnauthorized: {http.StatusUnauthorized, api.CodeUnauthorized},
	classForbidden:    {http.StatusForbidden, api.CodeForbidden},
	classNotFound:     {http.StatusNotFound, api.CodeNotFound},
	classConflict:     {http.StatusConflict, api.CodeConflict},
	classTooLarge:     {http.StatusRequestEntityTooLarge, api.CodeTooLarge},
	classLimit:        {http.StatusTooManyRequests, api.CodeLimit},
	classStorage:      {http.StatusInsufficientStorage, api.CodeLimit},
	classBadGateway:   {http.StatusBadGateway, api.CodeUnavailable},
	classUnavailable:  {http.StatusServiceUnavailable, api.CodeUnavailable},
	classTimeout:      {http.StatusGatewayTimeout, api.CodeUnavailable},
}

// fail is a client-facing error of class c; code "" is the class's.
func fail(c class, code, field, format string, args ...any) *httpError {
	if code == "" {
		code = classes[c].code
	}
	return newErr(classes[c].status, code, field, format, args...)
}

// subject is what a request was about: it picks the message of an error
// several services share (store.ErrNotFound is a missing run, frame or
// task) and what an error no rule knows becomes.
type subject uint8

const (
	aboutNothing   subject = iota
	aboutRun               // id: a run
	aboutWait              // id: a wait job
	aboutRecording         // id: a recording
	aboutRecorder          // starting a recording
	aboutLive              // id: a display of the live view
)

// aboutErr is an error of a request about one thing.
type aboutErr struct {
	subject subject
	id      string
	err     error
}

func (e *aboutErr) Error() string { return e.err.Error() }
func (e *aboutErr) Unwrap() error { return e.err }

// about wraps err, an error of a request about id, for response.
func about(s subject, id string, err error) error {
	if err == nil {
		return nil
	}
	return &aboutErr{subject: s, id: id, err: err}
}

// sentinel maps an error that services return as a value (errors.Is).
// msg's verbs: %[1]s the subject's id, %[2]v the error; "" is the error's
// own text.
type sentinel struct {
	about       subject // aboutNothing: whatever the request was about
	err         error
	class       class
	code, field string
	msg         string
}

var sentinels = []sentinel{
	{about: aboutRun, err: runs.ErrNotFound, class: classNotFound, msg: "no run %[1]q: list runs with GET /v1/runs"},
	{about: aboutRun, err: runs.ErrEnded, class: classConflict, msg: "run %[1]q has already ended"},
	{about: aboutRun, err: runs.ErrWaitTimeout, class: classTimeout, code: api.CodeWaitTimeout, field: "timeout",
		msg: "run %[1]q did not end within the wait's timeout: wait again, or raise timeout"},
	{about: aboutRun, err: record.ErrNoFrames, class: classNotFound, msg: "run %[1]q has no judged frames"},
	{about: aboutWait, err: smartwait.ErrNotFound, class: classNotFound, msg: "no wait job %[1]q: list them with GET /v1/waits"},
	{about: aboutWait, err: smartwait.ErrNotLive, class: classConflict, msg: "wait job %[1]q has already ended"},
	{err: smartwait.ErrElsewhere, class: classConflict},
	{err: smartwait.ErrNoJudge, class: classUnavailable},
	{err: smartwait.ErrStopped, class: classUnavailable, msg: "the wait engine is shutting down: retry after the daemon restarts"},
	{about: aboutRecording, err: record.ErrNotFound, class: classNotFound, msg: "no recording %[1]q: list them with GET /v1/recordings"},
	{about: aboutRecording, err: record.ErrNotRunning, class: classConflict, msg: "recording %[1]q has already stopped"},
	{about: aboutRecording, err: record.ErrIncomplete, class: classConflict, code: api.CodeIncomplete, msg: "recording %[1]q is incomplete: %[2]v"},
	{err: record.ErrTooMany, class: classLimit},
	{err: record.ErrDiskBudget, class: classStorage},
	{about: aboutLive, err: live.ErrNotHeld, class: classConflict, msg: "%[1]s is not taken over: take it over first (POST /v1/live/takeover)"},
	{about: aboutLive, err: live.ErrHeld, class: classConflict, msg: "%[1]s: %[2]v: wait for its hand-back"},
	{err: orchestrator.ErrBusy, class: classConflict},
	{err: display.ErrBadName, class: classInvalid, field: "display"},
	{err: display.ErrNoDisplay, class: classUnavailable, field: "display"},
}

// typed maps the errors that carry their own fields (errors.As), in order.
var typed = []func(err error) *httpError{
	func(err error) *httpError { // the gate's policy: 403, 409 while the user is active
		r, ok := gate.IsRefused(err)
		if !ok {
			return nil
		}
		c := classForbidden
		if r.Code == api.CodeUserActive {
			c = classConflict
		}
		he := fail(c, r.Code, r.Field, "%s", r.Message)
		he.detail.ActiveMs, he.detail.RetryAfterMs = r.ActiveFor.Milliseconds(), r.RetryAfter.Milliseconds()
		return he
	},
	func(err error) *httpError {
		ae, ok := errors.AsType[*actions.Error](err)
		if !ok {
			return nil
		}
		c := classInvalid
		switch ae.Code {
		case api.CodeActDisabled, api.CodeDisplayDenied, api.CodeWindowDenied:
			c = classForbidden
		case api.CodeUserActive:
			c = classConflict
		case api.CodeUnavailable:
			c = classUnavailable
		}
		return &httpError{status: classes[c].status, detail: ae.Detail()}
	},
	func(err error) *httpError {
		de, ok := errors.AsType[*gate.Error](err)
		if !ok {
			return nil
		}
		c, ok := gateKinds[de.Kind]
		if !ok {
			return nil
		}
		return fail(c, "", de.Field, "%s", de.Message)
	},
	func(err error) *httpError {
		qe, ok := errors.AsType[*computer.QueryError](err)
		switch {
		case !ok:
			return nil
		case qe.Field == "vendor":
			return fail(classNotFound, "", "", "%s", qe.Message)
		}
		return fail(classInvalid, "", qe.Field, "%s", qe.Message)
	},
	func(err error) *httpError { // a task log's request refused
		te, ok := errors.AsType[*tasklog.Error](err)
		switch {
		case !ok:
			return nil
		case te.Kind == tasklog.NotFound:
			return fail(classNotFound, "", te.Field, "%s", te.Message)
		}
		return fail(classInvalid, "", te.Field, "%s", te.Message)
	},
	func(err error) *httpError { // a resume the run's state or the answerer does not allow
		re, ok := errors.AsType[*computer.ResumeError](err)
		if !ok {
			return nil
		}
		switch re.Kind {
		case computer.ResumeInvalid:
			return fail(classInvalid, "", re.Field, "%s", re.Message)
		case computer.ResumeForbidden:
			return fail(classForbidden, api.CodeScope, re.Field, "%s", re.Message)
		}
		return fail(classConflict, "", re.Field, "%s", re.Message)
	},
	func(err error) *httpError { // an answer relayed as it was (another host's, a dialect's)
		if se, ok := errors.AsType[*api.StatusError](err); ok {
			return &httpError{status: se.Status, detail: se.ErrorDetail}
		}
		return nil
	},
	func(err error) *httpError {
		ve, ok := errors.AsType[*smartwait.ValidationError](err)
		if !ok {
			return nil
		}
		msg := ve.Error()
		if strings.HasPrefix(ve.Message, ve.Field) {
			msg = ve.Message // already names its field ("target window:x on :1 matches no window")
		}
		return fail(classInvalid, "", ve.Field, "%s", msg)
	},
	func(err error) *httpError {
		if ie, ok := errors.AsType[*live.InputError](err); ok {
			return fail(classInvalid, "", fmt.Sprintf("events[%d]", ie.Index), "%v", ie)
		}
		return nil
	},
	func(err error) *httpError { // another host's daemon gave no answer
		if te, ok := errors.AsType[*handoff.TimeoutError](err); ok {
			return fail(classTimeout, "", "", "%s", te.Error())
		}
		if ne, ok := errors.AsType[*handoff.NoAnswerError](err); ok {
			return fail(classBadGateway, "", "", "%s", ne.Error())
		}
		return nil
	},
	func(err error) *httpError { // a target that matches no single window, listing the windows
		if te, ok := errors.AsType[*capture.TargetError](err); ok {
			return fail(classInvalid, "", "target", "%s", te.Error())
		}
		return nil
	},
}

var gateKinds = map[gate.Kind]class{
	gate.Invalid:     classInvalid,
	gate.NotFound:    classNotFound,
	gate.Conflict:    classConflict,
	gate.TooLarge:    classTooLarge,
	gate.Unavailable: classUnavailable,
}

// fallbacks are what an error no rule knows becomes, by subject; other
// subjects' are internal errors (500), logged.
var fallbacks = map[subject]sentinel{
	aboutRecorder: {class: classUnavailable, msg: "cannot record: %[2]v"}, // no ffmpeg, no display
	aboutLive:     {class: classUnavailable, msg: "display %[1]s: %[2]v"}, // the display cannot be read or driven
}

// response is how the API answers err; known is false for an internal
// error, whose detail only the log keeps.
func response(err error) (he *httpError, known bool) {
	if he, ok := errors.AsType[*httpError](err); ok {
		return he, true
	}
	for _, m := range typed {
		if he := m(err); he != nil {
			return he, true
		}
	}
	var sub subject
	var id string
	if ae, ok := errors.AsType[*aboutErr](err); ok {
		sub, id = ae.subject, ae.id
	}
	for _, s := range sentinels {
		if (s.about == aboutNothing || s.about == sub) && errors.Is(err, s.err) {
			return s.response(id, err), true
		}
	}
	if fb, ok := fallbacks[sub]; ok {
		return fb.response(id, err), true
	}
	if msg := err.Error(); strings.HasPrefix(msg, "target") || strings.Contains(msg, "parse target") {
		return fail(classInvalid, "", "target", "%s", msg), true
	}
	return fail(classInternal, "", "", "internal error: see the daemon's log"), false
}

func (s sentinel) response(id string, err error) *httpError {
	switch {
	case s.msg == "":
		return fail(s.class, s.code, s.field, "%s", err.Error())
	case !strings.Contains(s.msg, "%"):
		return fail(s.class, s.code, s.field, "%s", s.msg)
	}
	return fail(s.class, s.code, s.field, s.msg, id, err)
}

// ErrorResponse is how the API answers err: its status and body; known is
// false for an internal error. The fleet hand-off records it as the answer
// of a request another host sent.
func ErrorResponse(err error) (status int, detail api.ErrorDetail, known bool) {
	he, known := response(err)
	return he.status, he.detail, known
}
