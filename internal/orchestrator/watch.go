package orchestrator

import (
	"context"
	"fmt"
	"sync"

	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
)

// PointerWatch detects user input by the pointer: acu marks where the
// pointer is after each of its own actions; a pointer that has moved since
// (or a button held) was moved by someone else. Keyboard-only input is not
// seen. It is safe for concurrent use.
type PointerWatch struct {
	c *display.Conn

	mu     sync.Mutex
	marked bool
	x, y   int16
}

// NewPointerWatch watches the pointer of c's display; c stays the caller's.
func NewPointerWatch(c *display.Conn) *PointerWatch { return &PointerWatch{c: c} }

func (w *PointerWatch) query(ctx context.Context) (*xproto.QueryPointerReply, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := xproto.QueryPointer(w.c.X, w.c.Screen.Root).Reply()
	if err != nil {
		return nil, fmt.Errorf("query the pointer on %s: %w", w.c.Name, err)
	}
	return r, nil
}

// Mark records the pointer's position as acu's.
func (w *PointerWatch) Mark(ctx context.Context) error {
	r, err := w.query(ctx)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.marked, w.x, w.y = true, r.RootX, r.RootY
	w.mu.Unlock()
	return nil
}

// Foreign reports whether the pointer moved since the last Mark, or a
// button is held, and where it is.
func (w *PointerWatch) Foreign(ctx context.Context) (bool, string, error) {
	r, err := w.query(ctx)
	if err != nil {
		return false, "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	const buttons = xproto.KeyButMaskButton1 | xproto.KeyButMaskButton2 | xproto.KeyButMaskButton3
	moved := w.marked && (r.RootX != w.x || r.RootY != w.y)
	if moved || r.Mask&buttons != 0 {
		return true, fmt.Sprintf("pointer at %d,%d (acu left it at %d,%d)", r.RootX, r.RootY, w.x, w.y), nil
	}
	return false, "", nil
}
