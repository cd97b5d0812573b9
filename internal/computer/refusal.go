package computer

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
)

// refusal is an error that carries its own wire detail: the action
// service's *actions.Error (a bad request, acting off, a denied display or
// window, the user at the controls with when to retry).
type refusal interface {
	error
	Detail() api.ErrorDetail
}

// refusalStatus is the HTTP status of a refusal's code, as the API answers
// it (api.CodeUserActive 409, the policy's refusals 403); other codes are
// the request's (400).
var refusalStatus = map[string]int{
	api.CodeUserActive:    http.StatusConflict,
	api.CodeActDisabled:   http.StatusForbidden,
	api.CodeDisplayDenied: http.StatusForbidden,
	api.CodeWindowDenied:  http.StatusForbidden,
	api.CodeUnavailable:   http.StatusServiceUnavailable,
}

// typed is a Desktop whose refusals reach the dialects as the API's
// *api.StatusError, with their code and retry time, whoever the caller is:
// the daemon's route, `acu computer` in process, a test on the action
// service. Errors already in that form, and plain failures, pass as they
// are.
type typed struct{ Desktop }

func typedErr(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*api.StatusError](err); ok {
		return err
	}
	r, ok := errors.AsType[refusal](err)
	if !ok {
		return err
	}
	status, ok := refusalStatus[r.Detail().Code]
	if !ok {
		status = http.StatusBadRequest
	}
	return &api.StatusError{Status: status, ErrorDetail: r.Detail()}
}

func (d typed) Act(ctx context.Context, req api.ActRequest) (api.ActResponse, error) {
	resp, err := d.Desktop.Act(ctx, req)
	return resp, typedErr(err)
}

func (d typed) Shot(ctx context.Context, dpy string, o api.ShotOptions) (*api.ActShot, error) {
	s, err := d.Desktop.Shot(ctx, dpy, o)
	return s, typedErr(err)
}

func (d typed) Pointer(ctx context.Context, dpy string) (int, int, error) {
	x, y, err := d.Desktop.Pointer(ctx, dpy)
	return x, y, typedErr(err)
}

func (d typed) Settle(ctx context.Context, dpy string, quiet, timeout time.Duration) (api.SettleResult, error) {
	r, err := d.Desktop.Settle(ctx, dpy, quiet, timeout)
	return r, typedErr(err)
}

var _ dialect.Desktop = typed{}
