package orchestrator

import (
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
)

// The user-input detection moved to internal/input (input.Watch), where
// the action service (internal/actions) uses it too; these names keep the
// orchestrator's callers and tests as they were.

// PointerWatch detects user input by the pointer; see input.PointerWatch.
type PointerWatch = input.PointerWatch

// InputWatch detects user input of any kind; see input.Watch.
type InputWatch = input.Watch

// InputWatchOptions configures NewInputWatch; see input.WatchOptions.
type InputWatchOptions = input.WatchOptions

// DefaultIdleMargin is InputWatchOptions.Margin's default.
const DefaultIdleMargin = input.DefaultIdleMargin

// NewPointerWatch watches the pointer of c's display; c stays the caller's.
func NewPointerWatch(c *display.Conn) *PointerWatch { return input.NewPointerWatch(c) }

// NewInputWatch watches all input on c's display; c stays the caller's.
func NewInputWatch(c *display.Conn, opts InputWatchOptions) *InputWatch {
	return input.NewWatch(c, opts)
}
