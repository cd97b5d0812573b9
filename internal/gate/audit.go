package gate

import (
	"context"
	"image"
	"log/slog"
	"time"

	"github.com/acu-dev/acu/internal/display"
)

// AuditEvent is one effect on the desktop, or one the policy refused,
// with who it was for.
type AuditEvent struct {
	Caller  Caller
	Display string
	Effect  string // click, type, key, window:close, launch, clipboard, …
	Window  string // the window it landed in, when known
	At      *image.Point
	Took    time.Duration
	Refused string // the refusal's code (window_denied, user_active, act_disabled, …)
	Err     error
}

// audit reports ev with the context's caller: to Options.Audit, and to
// the log (refusals at Info: they are what an operator looks for).
func (g *Gate) audit(ctx context.Context, ev AuditEvent) {
	ev.Caller = CallerOf(ctx)
	if g.opts.Audit != nil {
		g.opts.Audit(ctx, ev)
	}
	lvl := slog.LevelDebug
	if ev.Refused != "" {
		lvl = slog.LevelInfo
	}
	if !g.log.Enabled(ctx, lvl) {
		return
	}
	attrs := []any{"caller", ev.Caller.String(), "display", ev.Display, "effect", ev.Effect}
	if ev.Window != "" {
		attrs = append(attrs, "window", ev.Window)
	}
	if ev.Refused != "" {
		attrs = append(attrs, "refused", ev.Refused)
	}
	if ev.Err != nil {
		attrs = append(attrs, "err", ev.Err)
	}
	g.log.Log(ctx, lvl, "effect", attrs...)
}

// refused audits a refusal of effect on dpy.
func (g *Gate) refused(ctx context.Context, dpy, effect string, w *display.Window, err error) {
	ev := AuditEvent{Display: dpy, Effect: effect, Window: windowTitle(w), Err: err}
	if r, ok := IsRefused(err); ok {
		ev.Refused = r.Code
	}
	g.audit(ctx, ev)
}
