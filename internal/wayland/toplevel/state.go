package toplevel

import (
	"context"
	"fmt"
	"time"

	"github.com/acu-dev/acu/internal/wayland"
)

// stateWait bounds how long Maximize and Minimize wait for the
// compositor to report the new state.
const stateWait = time.Second

// SwayID is sway's con_id of w, 0 when sway's IPC did not match it.
func (w Window) SwayID() int64 { return w.swayID }

// Maximize asks the compositor to maximize w (set_maximized) and waits
// until it reports w maximized. A compositor that ignores the request
// (sway, a tiling compositor) leaves it as it was: that is ErrUnsupported.
// phoc honours it.
func (m *Manager) Maximize(ctx context.Context, w Window) error {
	return m.setState(ctx, w, "maximize", wayland.ToplevelReqSetMaximized, func(w Window) bool { return w.Maximized })
}

// Minimize asks the compositor to minimize w (set_minimized) and waits
// until it reports w minimized; ErrUnsupported when it ignores it (sway
// and phoc 0.24 both do).
func (m *Manager) Minimize(ctx context.Context, w Window) error {
	return m.setState(ctx, w, "minimize", wayland.ToplevelReqSetMinimized, func(w Window) bool { return w.Minimized })
}

func (m *Manager) setState(ctx context.Context, w Window, what string, op uint16, done func(Window) bool) error {
	if err := m.request(ctx, w, what, op); err != nil {
		return err
	}
	deadline := time.Now().Add(stateWait)
	for {
		h, ok := m.handles[w.ID]
		if !ok {
			return fmt.Errorf("%s window %q on %s: %w", what, w.Title, m.display, ErrClosed)
		}
		if done(h.cur) {
			return nil
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%s window %q on %s: the compositor did not %s it within %s: it ignores the request (sway ignores maximize and minimize, phoc minimize; docs/wayland.md): %w",
				what, w.Title, m.display, what, stateWait, ErrUnsupported)
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if err := m.conn.Roundtrip(ctx); err != nil {
			return fmt.Errorf("%s window %q on %s: %w", what, w.Title, m.display, err)
		}
	}
}
