package main

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/acu-dev/acu/internal/api"
)

// listenError is an optional listener (the relay's, the agent panel's)
// that could not bind. `acu serve` runs on without that part, degraded
// (see daemon.optionalOff); `acu relay` and `acu agent`, which have
// nothing else to serve, stop with it.
type listenError struct {
	Component string // relay, agent
	Addr      string
	Setting   string // the setting that moves the port
	Off       string // the setting that turns the part off
	Err       error
}

func (e *listenError) Error() string {
	return fmt.Sprintf("%s: listen on %s: %v (another process holds the port? set %s to a free port, or %s)",
		e.Component, e.Addr, e.Err, e.Setting, e.Off)
}

func (e *listenError) Unwrap() error { return e.Err }

// optionalOff records err as a degraded part and reports true when it is
// an optional listener that could not bind; any other error is the
// caller's to return.
func (d *daemon) optionalOff(err error, log *slog.Logger) bool {
	le, ok := errors.AsType[*listenError](err)
	if !ok {
		return false
	}
	log.Warn(fmt.Sprintf("the %s is off: its port is taken; acu serves waits and actions without it (set %s to a free port, or %s, and restart)",
		le.Component, le.Setting, le.Off), "component", le.Component, "addr", le.Addr, "setting", le.Setting, "err", le.Err)
	d.degraded = append(d.degraded, api.Degraded{Component: le.Component, Addr: le.Addr, Error: le.Err.Error(), Setting: le.Setting})
	return true
}

// degradedHealth adds the parts that are off to h.
func (d *daemon) degradedHealth(h *api.Health) {
	for _, p := range d.degraded {
		h.Status = "degraded"
		h.Degraded = append(h.Degraded, p)
		h.Problems = append(h.Problems, fmt.Sprintf("%s: off: listen on %s: %s; waits and actions work without it (set %s to a free port and restart acu serve)",
			p.Component, p.Addr, p.Error, p.Setting))
	}
}
