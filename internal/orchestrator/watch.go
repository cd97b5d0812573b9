package orchestrator

import (
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
