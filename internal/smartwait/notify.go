package smartwait

import (
	"context"
	"fmt"

	"github.com/acu-dev/acu/internal/notify"
)

// Notifier durably enqueues a notification for every configured notifier
// and wakes the deliverer (*notify.Dispatcher).
type Notifier interface {
	Notify(ctx context.Context, n notify.Notification) error
}

// notify queues msg (cleaned by cleanMessage) with the idempotency key
// <job id>:<outcome>, so re-resolving after a crash queues nothing new.
func (e *Engine) notify(ctx context.Context, id, outcome, msg string) error {
	if e.opts.Notify == nil {
		return nil
	}
	n := notify.Notification{Key: id + ":" + outcome, RunID: id, Event: outcome, Message: cleanMessage(msg)}
	if err := e.opts.Notify.Notify(ctx, n); err != nil {
		return fmt.Errorf("enqueue %s notification of %s: %w", outcome, id, err)
	}
	return nil
}
