package atspi

import (
	"context"
	"fmt"
	"strings"

	"github.com/godbus/dbus/v5"
)

// D-Bus names of AT-SPI events.
const (
	registryPath     = "/org/a11y/atspi/registry"
	ifaceRegistry    = "org.a11y.atspi.Registry"
	ifaceEventObject = "org.a11y.atspi.Event.Object"
	ifaceEventWindow = "org.a11y.atspi.Event.Window"
	ifaceEventFocus  = "org.a11y.atspi.Event.Focus"
)

// ListenedEvents are the AT-SPI events Listen registers for: what changes
// windows (create, destroy, activate), states (enabled, checked,
// focused, showing), names, values (a progress bar's accessible-value),
// text and children. Applications emit only the events some client
// registered for (the registry tells them), so a reader that polls sees
// nothing of this traffic.
var ListenedEvents = []string{
	"window:create", "window:destroy", "window:activate", "window:deactivate",
	"object:state-changed", "object:property-change", "object:children-changed",
	"object:text-changed", "object:value-changed", "focus:",
}

// Event is one AT-SPI event.
type Event struct {
	// Kind is the event's name as AT-SPI clients write it, with its
	// detail: "window:create", "object:state-changed:focused",
	// "object:property-change:accessible-value", "object:children-changed:add".
	Kind string
	// Source is the object the event is about; Source.Bus is the sending
	// application's unique bus name.
	Source Ref
	// Detail1 is the event's first number: 1 or 0 for a state set or
	// cleared, the index of a child added or removed.
	Detail1 int32
	// Registry is set on the registry's own events: an application
	// registered or went away.
	Registry bool
	// Overflow is set on an event that stands for events lost because
	// the reader fell behind: everything may have changed.
	Overflow bool
}

// Listen registers for ListenedEvents on the accessibility bus and
// delivers them until ctx ends, when the channel is closed and the
// registrations are withdrawn. Events the reader does not take in time
// are dropped and reported by one Event with Overflow set.
func (c *Client) Listen(ctx context.Context) (<-chan Event, error) {
	matches := [][]dbus.MatchOption{
		{dbus.WithMatchInterface(ifaceEventObject)},
		{dbus.WithMatchInterface(ifaceEventWindow)},
		{dbus.WithMatchInterface(ifaceEventFocus)},
	}
	for _, m := range matches {
		if err := c.conn.AddMatchSignalContext(ctx, m...); err != nil {
			return nil, fmt.Errorf("listen to accessibility events on %s: %w", c.address, err)
		}
	}
	reg := Ref{Bus: registryName, Path: registryPath}
	for _, ev := range ListenedEvents {
		if err := c.call(ctx, reg, ifaceRegistry+".RegisterEvent", ev, []string{}, "").Err; err != nil {
			return nil, fmt.Errorf("register for accessibility event %s on %s: %w", ev, c.address, err)
		}
	}
	var registry string
	if err := c.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, registryName).Store(&registry); err != nil {
		return nil, fmt.Errorf("find the accessibility registry on %s: %w", c.address, err)
	}
	sigs := make(chan *dbus.Signal, 1024)
	c.conn.Signal(sigs)
	out := make(chan Event, 256)
	go func() {
		defer close(out)
		defer func() {
			c.conn.RemoveSignal(sigs)
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.CallTimeout)
			defer cancel()
			for _, m := range matches {
				_ = c.conn.RemoveMatchSignalContext(dctx, m...)
			}
			for _, ev := range ListenedEvents {
				_ = c.conn.Object(registryName, registryPath).CallWithContext(dctx, ifaceRegistry+".DeregisterEvent", 0, ev).Err
			}
		}()
		lost := false
		for {
			select {
			case <-ctx.Done():
				return
			case s, ok := <-sigs:
				if !ok {
					return
				}
				ev, ok := eventOf(s)
				if !ok {
					continue
				}
				ev.Registry = ev.Source.Bus == registry
				if lost {
					ev = Event{Overflow: true, Kind: "overflow"}
				}
				select {
				case out <- ev:
					lost = false
				default:
					lost = true
				}
			}
		}
	}()
	return out, nil
}

// eventOf reads an AT-SPI event signal: member StateChanged on
// org.a11y.atspi.Event.Object is "object:state-changed", its first
// argument the detail ("focused").
func eventOf(s *dbus.Signal) (Event, bool) {
	iface, member, ok := cutLast(s.Name, ".")
	if !ok {
		return Event{}, false
	}
	var class string
	switch iface {
	case ifaceEventObject:
		class = "object"
	case ifaceEventWindow:
		class = "window"
	case ifaceEventFocus:
		class = "focus"
	default:
		return Event{}, false
	}
	ev := Event{Source: Ref{Bus: s.Sender, Path: s.Path}}
	kind := class + ":" + kebab(member)
	if len(s.Body) > 0 {
		if d, ok := s.Body[0].(string); ok && d != "" {
			kind += ":" + d
		}
	}
	if len(s.Body) > 1 {
		if d, ok := s.Body[1].(int32); ok {
			ev.Detail1 = d
		}
	}
	ev.Kind = kind
	return ev, true
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+len(sep):], true
}

// kebab turns a D-Bus member name into AT-SPI's event spelling:
// "StateChanged" -> "state-changed".
func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
