package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/gate"
)

// This file is the stagnation recovery: what the loop does when the
// element map stops changing.

// stagnation handles the layout-hash and unchanged-map signals: a stagnant
// layout is noted in the failure context; an element map unchanged
// UnchangedRecover times in a row and for at least Options.RecoverAfter gets
// a recovery action (dismiss, scroll, back, in turn). Dismiss presses Escape
// only on an active window the task is not about (see taskWindows): a model
// waiting for its dialog must not see recovery close it. It returns a fresh
// map after a recovery action.
func (l *loop) stagnation(ctx context.Context, i int, m *elements.Map, obs elements.Observation) *elements.Map {
	l.prev = m
	now := l.opts.Now()
	if l.taskWindows == nil {
		l.taskWindows = map[string]bool{}
		for k := range m.Elements {
			if e := &m.Elements[k]; e.Type == elements.TypeWindow {
				l.protect(e.Text)
			} else {
				l.protect(e.Window)
			}
		}
	}
	if obs.Stagnant && obs.Repeats == elements.StagnationRepeat {
		l.failureContext = append(l.failureContext, fmt.Sprintf("Screen structure stagnant: same layout seen %d times in last %d iterations", obs.Repeats, elements.StagnationWindow))
	}
	if obs.Iteration == 1 || !obs.Diff.Empty() {
		l.unchanged, l.changedAt = 0, now
		return nil
	}
	l.unchanged++
	still := now.Sub(l.changedAt)
	if l.unchanged < elements.UnchangedRecover || still < l.opts.RecoverAfter {
		return nil
	}
	ev := RecoveryEvent{Iteration: i, Unchanged: l.unchanged, UnchangedMs: still.Milliseconds(),
		Reason: fmt.Sprintf("element map unchanged %dx for %s", l.unchanged, still.Round(time.Second))}
	l.unchanged, l.changedAt = 0, now
	kinds := []struct{ name, keys string }{{"dismiss", "Escape"}, {"scroll", "Page_Down"}, {"back", "alt+Left"}}
	k := kinds[l.recoveries%len(kinds)]
	l.recoveries++
	if k.name == "dismiss" {
		if why := l.mayDismiss(m); why != "" {
			ev.Skipped = why
			k = kinds[l.recoveries%len(kinds)]
			l.recoveries++
		}
	}
	ev.Action, ev.Keys = k.name, k.keys
	var err error
	switch {
	case l.opts.Input != nil && k.name == "scroll":
		ev.Keys = ""
		err = l.opts.Input.Do(ctx, gate.Action{Kind: gate.KindScroll, X: gate.NormMax / 2, Y: gate.NormMax / 2, DY: 5})
	case l.opts.Input != nil:
		err = l.opts.Input.Do(ctx, gate.Action{Kind: gate.KindKey, Keys: k.keys})
	default:
		_, err = l.opts.Elements.Execute(ctx, m, elements.Step{Kind: elements.StepKey, Text: k.keys})
		if errors.Is(err, elements.ErrNoEffect) {
			err = nil // nothing changed: the next iteration shows it
		}
	}
	if err != nil {
		ev.Error = err.Error()
	}
	l.mark(ctx)
	what := k.name
	if ev.Keys != "" {
		what = "pressed " + ev.Keys
	}
	l.failureContext = append(l.failureContext, fmt.Sprintf("Element map unchanged %dx, %s to try a different path", ev.Unchanged, what))
	l.emit(ctx, StreamRecovery, ev)
	l.progress(ctx, fmt.Sprintf("recovery at iteration %d: %s (%s)", i, k.name, ev.Reason))
	m2, err := l.opts.Elements.Extract(ctx)
	if err != nil {
		return nil
	}
	l.prev = m2
	return m2
}

// protect adds a window to the ones the task is about.
func (l *loop) protect(window string) {
	if window == "" {
		return
	}
	if l.taskWindows == nil {
		l.taskWindows = map[string]bool{}
	}
	l.taskWindows[window] = true
}

// mayDismiss says why recovery must not press Escape on m ("" when it may):
// Escape goes to the active window, and closing the window the task is
// about (a dialog the model waits on) loses its work. Only an active window
// that appeared after the task started, that the model never acted in and
// that the task does not name may be dismissed.
func (l *loop) mayDismiss(m *elements.Map) string {
	for k := range m.Elements {
		e := &m.Elements[k]
		if e.Type != elements.TypeWindow || !e.Active {
			continue
		}
		switch {
		case l.taskWindows[e.Text]:
			return fmt.Sprintf("the active window %q is one the task is about", e.Text)
		case e.Text != "" && strings.Contains(strings.ToLower(l.task), strings.ToLower(e.Text)):
			return fmt.Sprintf("the task names the active window %q", e.Text)
		}
		return ""
	}
	return "no active window is known, and Escape could close the task's own window"
}
