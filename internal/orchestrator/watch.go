package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/gate"
)

// The user-input detection lives in internal/input, behind the gate
// (gate.Watch), where the gate's user-first pause uses it too; these names
// keep the orchestrator's callers and tests as they were.

// PointerWatch detects user input by the pointer; see gate.PointerWatch.
type PointerWatch = gate.PointerWatch

// InputWatch detects user input of any kind; see gate.Watch.
type InputWatch = gate.Watch

// InputWatchOptions configures NewInputWatch; see gate.WatchOptions.
type InputWatchOptions = gate.WatchOptions

// DefaultIdleMargin is InputWatchOptions.Margin's default.
const DefaultIdleMargin = gate.DefaultIdleMargin

// NewPointerWatch watches the pointer of c's display; c stays the caller's.
func NewPointerWatch(c *display.Conn) *PointerWatch { return gate.NewPointerWatch(c) }

// NewInputWatch watches all input on c's display; c stays the caller's.
func NewInputWatch(c *display.Conn, opts InputWatchOptions) *InputWatch {
	return gate.NewWatch(c, opts)
}

// UserInput is when the user last made input acu did not make
// (*gate.Hands on a Wayland display).
type UserInput interface {
	LastUserInput(ctx context.Context) (time.Time, bool, error)
}

// UserWatch is the Watcher of a Wayland display: the gate's user-first
// record (the compositor's idle watch, acu's own input excluded), read
// against the time of the last Mark. It cannot say what the input was,
// only that there was some.
type UserWatch struct {
	u   UserInput
	now func() time.Time

	mu   sync.Mutex
	mark time.Time
}

// NewUserWatch watches u from now on. It fails when u keeps no record of
// the user's input (gate.Hands.LastUserInput's ok).
func NewUserWatch(ctx context.Context, u UserInput) (*UserWatch, error) {
	if _, ok, err := u.LastUserInput(ctx); err != nil {
		return nil, err
	} else if !ok {
		return nil, errors.New("the gate keeps no record of the user's input on this display: " +
			"it needs ACU_ACT_PAUSE_ON_INPUT=true and a compositor with an idle protocol (ext-idle-notify-v1 or KDE's idle)")
	}
	return &UserWatch{u: u, now: time.Now, mark: time.Now()}, nil
}

// Mark forgets the input before now.
func (w *UserWatch) Mark(context.Context) error {
	w.mu.Lock()
	w.mark = w.now()
	w.mu.Unlock()
	return nil
}

// Foreign reports whether the user made input since the last Mark.
func (w *UserWatch) Foreign(ctx context.Context) (bool, string, error) {
	last, ok, err := w.u.LastUserInput(ctx)
	if err != nil || !ok {
		return false, "", err
	}
	w.mu.Lock()
	mark := w.mark
	w.mu.Unlock()
	if !last.After(mark) {
		return false, "", nil
	}
	return true, fmt.Sprintf("(the compositor saw the user's input %s ago)", w.now().Sub(last).Round(time.Millisecond)), nil
}
