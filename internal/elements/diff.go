package elements

import (
	"fmt"
	"strconv"
	"strings"
)

// MoveTolerance is how far (pixels, either axis) an element's box may
// shift before a diff reports it as moved.
const MoveTolerance = 4

// Change is one element that differs between two maps.
type Change struct {
	ID     string
	Before Element
	After  Element
	What   []string // "text", "value", "focused", "checked", "enabled", "showing", "active", "moved", "resized"
}

// Diff is what changed between two element maps, matched by id.
type Diff struct {
	Added   []Element
	Removed []Element
	Changed []Change
}

// Empty reports whether the maps are the same.
func (d Diff) Empty() bool { return len(d.Added) == 0 && len(d.Removed) == 0 && len(d.Changed) == 0 }

// Compare returns the diff from prev to cur (elements matched by id).
// A nil prev makes every element of cur added.
func Compare(prev, cur *Map) Diff {
	var d Diff
	if cur == nil {
		cur = &Map{}
	}
	if prev == nil {
		d.Added = append(d.Added, cur.Elements...)
		return d
	}
	for i := range cur.Elements {
		e := &cur.Elements[i]
		p, ok := prev.Get(e.ID)
		if !ok {
			d.Added = append(d.Added, *e)
			continue
		}
		if what := changes(p, e); len(what) > 0 {
			d.Changed = append(d.Changed, Change{ID: e.ID, Before: *p, After: *e, What: what})
		}
	}
	for i := range prev.Elements {
		p := &prev.Elements[i]
		if _, ok := cur.Get(p.ID); !ok {
			d.Removed = append(d.Removed, *p)
		}
	}
	return d
}

func changes(a, b *Element) []string {
	var w []string
	if a.Text != b.Text {
		w = append(w, "text")
	}
	if a.Value != b.Value {
		w = append(w, "value")
	}
	if a.Focused != b.Focused {
		w = append(w, "focused")
	}
	if a.Checked != b.Checked {
		w = append(w, "checked")
	}
	if a.Enabled != b.Enabled {
		w = append(w, "enabled")
	}
	if a.Showing != b.Showing {
		w = append(w, "showing")
	}
	if a.Active != b.Active {
		w = append(w, "active")
	}
	if abs(a.Box.Min.X-b.Box.Min.X) > MoveTolerance || abs(a.Box.Min.Y-b.Box.Min.Y) > MoveTolerance {
		w = append(w, "moved")
	} else if abs(a.Box.Dx()-b.Box.Dx()) > MoveTolerance || abs(a.Box.Dy()-b.Box.Dy()) > MoveTolerance {
		w = append(w, "resized")
	}
	return w
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// String renders the diff for a prompt, one line per element: "+" added,
// "-" removed, "~" changed with what changed.
func (d Diff) String() string {
	if d.Empty() {
		return "no changes\n"
	}
	var b strings.Builder
	for i := range d.Added {
		b.WriteString("+ ")
		writeElement(&b, &d.Added[i])
		b.WriteByte('\n')
	}
	for i := range d.Removed {
		b.WriteString("- ")
		writeElement(&b, &d.Removed[i])
		b.WriteByte('\n')
	}
	for _, c := range d.Changed {
		fmt.Fprintf(&b, "~ [%s] %s", c.ID, c.After.Type)
		for _, w := range c.What {
			b.WriteByte(' ')
			switch w {
			case "text":
				b.WriteString("text " + strconv.Quote(clip(c.Before.Text, 40)) + "->" + strconv.Quote(clip(c.After.Text, 40)))
			case "value":
				b.WriteString("value " + strconv.Quote(clip(c.Before.Value, 40)) + "->" + strconv.Quote(clip(c.After.Value, 40)))
			case "focused", "checked", "enabled", "showing", "active":
				on := map[string]bool{"focused": c.After.Focused, "checked": c.After.Checked, "enabled": c.After.Enabled,
					"showing": c.After.Showing, "active": c.After.Active}[w]
				if on {
					b.WriteString(w)
				} else {
					b.WriteString("not_" + w)
				}
			default:
				b.WriteString(w)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
