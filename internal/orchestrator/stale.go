package orchestrator

import (
	"fmt"

	"github.com/acu-dev/acu/internal/elements"
)

// setStale records d, the change of the screen while p was made, and the
// warning about it.
func (p *Plan) setStale(d elements.Diff) {
	p.change = &d
	p.Stale = fmt.Sprintf("the screen changed while this plan was being made (%d elements added, %d removed, %d changed): "+
		"its steps were written for the screen before; check the current element map before following them", len(d.Added), len(d.Removed), len(d.Changed))
	for _, directive := range staleDirectives(d, p) {
		p.Stale += "\n- " + directive
	}
}

// refreshStale keeps in p's warning only the changes map m still shows:
// an element that appeared and is still there, one that went and is
// still gone, one that changed and still reads as the change left it. When m shows none of them (the window that opened was closed,
// the text typed meanwhile was replaced), the warning leaves the prompt.
func (p *Plan) refreshStale(m *elements.Map) {
	if p == nil || p.change == nil || m == nil {
		return
	}
	var d elements.Diff
	for _, e := range p.change.Added {
		if _, ok := m.Get(e.ID); ok {
			d.Added = append(d.Added, e)
		}
	}
	for _, e := range p.change.Removed {
		if _, ok := m.Get(e.ID); !ok {
			d.Removed = append(d.Removed, e)
		}
	}
	for _, c := range p.change.Changed {
		if cur, ok := m.Get(c.ID); ok && stillChanged(cur, c) {
			d.Changed = append(d.Changed, c)
		}
	}
	if d.Empty() {
		p.change, p.Stale = nil, ""
		return
	}
	p.setStale(d)
}

// stillChanged reports whether cur still reads as c left it: every part
// that changed (c.What) is as it was after the change.
func stillChanged(cur *elements.Element, c elements.Change) bool {
	a := &c.After
	for _, w := range c.What {
		var same bool
		switch w {
		case "text":
			same = cur.Text == a.Text
		case "value":
			same = cur.Value == a.Value
		case "focused":
			same = cur.Focused == a.Focused
		case "checked":
			same = cur.Checked == a.Checked
		case "enabled":
			same = cur.Enabled == a.Enabled
		case "showing":
			same = cur.Showing == a.Showing
		case "active":
			same = cur.Active == a.Active
		default: // moved, resized
			same = cur.Box == a.Box
		}
		if !same {
			return false
		}
	}
	return true
}
