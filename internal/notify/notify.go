package notify

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Notifier delivers one message to one place. Notify must honour ctx (the
// dispatcher gives every attempt its own deadline) and return nil only when
// the message was accepted: exit status 0, a 2xx response.
type Notifier interface {
	// Name is the notifier's name in outbox rows ("exec", "webhook").
	Name() string
	// Notify makes one delivery attempt.
	Notify(ctx context.Context, d Delivery) error
}

// Checker is implemented by notifiers that can tell, before the first wake,
// that they cannot work (a missing executable, a bad URL). `acu doctor` and
// start-up call it.
type Checker interface {
	Check() error
}

// Notification is what a feature wants delivered: Key identifies the
// notification for deduplication (for a wait job: "<run id>:resolved"),
// Event names what happened ("resolved", "timeout").
type Notification struct {
	Key     string
	RunID   string
	Event   string
	Message string
}

// Delivery is one attempt to deliver one outbox row through one notifier.
type Delivery struct {
	ID       int64  // outbox row id
	Key      string // idempotency key of the row: "<notification key>:<notifier>"
	BaseKey  string // the notification's own key
	Notifier string
	RunID    string
	Event    string
	Message  string
	Attempt  int       // 1 for the first attempt, counting attempts recorded before restarts
	Created  time.Time // when the notification was enqueued
}

// ErrNoNotifier is returned when an outbox row names a notifier that is not
// configured; the row is retried with backoff, so a restart with the
// notifier configured still delivers it.
var ErrNoNotifier = errors.New("no such notifier configured")

// RetryAfterError is returned by a notifier whose target asked to be retried
// no sooner than After (an HTTP 429 or 503 with Retry-After). The dispatcher
// waits at least that long, bounded by its maximum delay.
type RetryAfterError struct {
	After time.Duration
	Err   error
}

func (e *RetryAfterError) Error() string { return e.Err.Error() }
func (e *RetryAfterError) Unwrap() error { return e.Err }

// PermanentError is returned by a notifier for a delivery that no retry can
// make work (a message exec cannot pass as an argument). The dispatcher
// dead-letters the row at once instead of retrying it.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// errAttemptTimeout is the cause of a context that hit a notifier's own
// per-attempt timeout.
var errAttemptTimeout = errors.New("attempt timed out")

// Build returns the notifiers named in names ("exec", "webhook"), in order,
// configured from the given options. Each name appears at most once.
func Build(names []string, ex ExecOptions, wh WebhookOptions) ([]Notifier, error) {
	var out []Notifier
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			return nil, fmt.Errorf("notifier %q listed twice: list each once", name)
		}
		seen[name] = true
		switch name {
		case "exec":
			ex.Name = name
			n, err := NewExec(ex)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		case "webhook":
			wh.Name = name
			n, err := NewWebhook(wh)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		default:
			return nil, fmt.Errorf("unknown notifier %q: the notifiers are exec and webhook", name)
		}
	}
	return out, nil
}

// Check runs Check on every notifier that has one and joins the problems,
// for `acu doctor` and start-up.
func Check(notifiers []Notifier) error {
	var errs []error
	for _, n := range notifiers {
		if c, ok := n.(Checker); ok {
			if err := c.Check(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
