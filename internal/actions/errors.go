package actions

import (
	"fmt"
	"time"

	"github.com/acu-dev/acu/internal/api"
)

// Error is a request the service refuses: invalid input (api.CodeInvalid,
// naming Field), acting off or not allowed here (api.CodeActDisabled,
// CodeDisplayDenied, CodeWindowDenied) or the user active (CodeUserActive).
// The server maps Code to the HTTP status.
type Error struct {
	Code        string
	Field       string
	Message     string
	ActiveFor   time.Duration // CodeUserActive: how long the user has been active
	RetryAfter  time.Duration // CodeUserActive: when the quiet period ends if the user stays still
	Suggestions []string      // unknown element ids: near matches
}

func (e *Error) Error() string { return e.Message }

// Detail returns the error's wire form.
func (e *Error) Detail() api.ErrorDetail {
	return api.ErrorDetail{Code: e.Code, Message: e.Message, Field: e.Field, ActiveMs: e.ActiveFor.Milliseconds(),
		RetryAfterMs: e.RetryAfter.Milliseconds(), Suggestions: e.Suggestions}
}

func invalid(field, format string, args ...any) *Error {
	return &Error{Code: api.CodeInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
}
