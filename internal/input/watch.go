package input

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jezek/xgb/screensaver"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
)

// PointerWatch detects user input by the pointer: acu marks where the
// pointer is after each of its own actions; a pointer that has moved since
// (or a button held) was moved by someone else. Keyboard-only input is not
// seen (Watch adds it). It is safe for concurrent use.
type PointerWatch struct {
	c *display.Conn

	mu     sync.Mutex
	marked bool
	x, y   int16
	own    uint16 // buttons acu holds down on purpose (SetOwnButtons)
}

// SetOwnButtons records the buttons acu itself holds down across actions
// (a mouse_down awaiting its mouse_up), as X key-button masks, so Foreign
// does not read them as someone else's.
func (w *PointerWatch) SetOwnButtons(mask uint16) {
	w.mu.Lock()
	w.own = mask
	w.mu.Unlock()
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
	if moved || r.Mask&buttons&^w.own != 0 {
		return true, fmt.Sprintf("pointer at %d,%d (acu left it at %d,%d)", r.RootX, r.RootY, w.x, w.y), nil
	}
	return false, "", nil
}

// DefaultIdleMargin is WatchOptions.Margin's default.
const DefaultIdleMargin = 100 * time.Millisecond

// WatchOptions configures NewWatch.
type WatchOptions struct {
	// Margin is how much shorter than the time since acu's last input the
	// server's idle time must be to count as someone else's input; it
	// absorbs acu's own input reaching the server just after Mark (input
	// made on another connection) and clock granularity. Default
	// DefaultIdleMargin.
	Margin time.Duration
	// Logger receives the note when the server lacks MIT-SCREEN-SAVER; nil
	// discards.
	Logger *slog.Logger
}

// Watch detects user input of any kind: the pointer as PointerWatch
// does (moved since acu's last action, or a button held) and, when the
// server offers MIT-SCREEN-SAVER, keyboard and every other device by the
// server's idle time. Every input event, XTest fake input from any client
// included, resets that idle time, so acu notes when its own input was last
// done (Mark, after each of its actions) and input reported more recently
// than that (by more than Margin) was someone else's. Without the extension
// it is pointer-only (logged once at construction). Applications that reset
// the screen saver (XResetScreenSaver, as video players do) also reset the
// idle time and so read as user input. It is safe for concurrent use.
type Watch struct {
	ptr    *PointerWatch
	idle   bool
	margin time.Duration

	mu     sync.Mutex
	marked bool
	last   time.Time // acu's last input: the end of the last Mark
}

// NewWatch watches all input on c's display; c stays the caller's.
func NewWatch(c *display.Conn, opts WatchOptions) *Watch {
	if opts.Margin <= 0 {
		opts.Margin = DefaultIdleMargin
	}
	if !c.Ext.ScreenSaver && opts.Logger != nil {
		opts.Logger.Info("X server lacks MIT-SCREEN-SAVER: user input is detected by the pointer only, keyboard input is not seen",
			"display", c.Name)
	}
	return &Watch{ptr: NewPointerWatch(c), idle: c.Ext.ScreenSaver, margin: opts.Margin}
}

// SetOwnButtons records the buttons acu holds down; see
// PointerWatch.SetOwnButtons.
func (w *Watch) SetOwnButtons(mask uint16) { w.ptr.SetOwnButtons(mask) }

// Keyboard reports whether keyboard (idle-time) detection is on.
func (w *Watch) Keyboard() bool { return w.idle }

// Mark records the pointer's position as acu's and now as the time of
// acu's last input. The pointer query is a round trip on the display's
// connection, so input acu sent on it before Mark has reached the server
// by the time the mark is taken.
func (w *Watch) Mark(ctx context.Context) error {
	if err := w.ptr.Mark(ctx); err != nil {
		return err
	}
	w.mu.Lock()
	w.marked, w.last = true, time.Now()
	w.mu.Unlock()
	return nil
}

// Foreign reports whether there was input acu did not make since the last
// Mark, and what it was. A display taken over in the live view (see Hold)
// reports input for as long as the hold lasts.
func (w *Watch) Foreign(ctx context.Context) (bool, string, error) {
	// A take-over in the live view (HoldAtom) is the user's, however still
	// the human's hands are.
	if h, held, err := ReadHold(ctx, w.ptr.c, time.Now()); err != nil || held {
		if held {
			return true, holdDetail(h), nil
		}
		return false, "", err
	}
	if ok, detail, err := w.ptr.Foreign(ctx); err != nil || ok {
		return ok, detail, err
	}
	if !w.idle {
		return false, "", nil
	}
	w.mu.Lock()
	marked, last := w.marked, w.last
	w.mu.Unlock()
	if !marked {
		return false, "", nil
	}
	// Measured before the request: the server reads its idle time later,
	// so a round trip can only make input look older, never newer.
	since := time.Since(last)
	c := w.ptr.c
	r, err := screensaver.QueryInfo(c.X, xproto.Drawable(c.Screen.Root)).Reply()
	if err != nil {
		return false, "", fmt.Errorf("query the idle time on %s: %w", c.Name, err)
	}
	idle := time.Duration(r.MsSinceUserInput) * time.Millisecond
	if idle+w.margin < since {
		return true, fmt.Sprintf("keyboard or other input %s ago (acu's last input %s ago)",
			idle.Round(time.Millisecond), since.Round(time.Millisecond)), nil
	}
	return false, "", nil
}
