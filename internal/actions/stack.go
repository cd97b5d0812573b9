package actions

import (
	"context"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/gate"
)

// Stack is a display's desktop stack as the action service holds it: the
// gate's connection and hands, and the accessibility client.
type Stack struct {
	Conn  *display.Conn
	Hands *gate.Hands
	// Tree is the display's accessibility client; nil when it has no
	// bus, and TreeErr says why.
	Tree    *atspi.Client
	TreeErr error
}

// Stack returns dpy's desktop stack ("" the default display), opening it
// on first use, so that the daemon's other services on a display (tasks)
// build on the one stack rather than opening their own. The service keeps
// it: it is closed when the service is (or reopened when the gate
// reconnects). When the policy lets nothing act on dpy, the error says why.
func (s *Service) Stack(ctx context.Context, dpy string) (Stack, error) {
	d, err := s.desktop(ctx, s.display(dpy))
	if err != nil {
		return Stack{}, err
	}
	st := Stack{Conn: d.conn, Hands: d.hands, Tree: d.tree}
	if d.tree == nil {
		st.TreeErr = d.exE
	}
	if d.hands == nil {
		return st, d.hErr
	}
	return st, nil
}
