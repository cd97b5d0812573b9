package a11yjudge

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/acu-dev/acu/internal/atspi"
)

// Outcome is one predicate decided on one reading of the tree.
type Outcome struct {
	Pred     Predicate
	Met      bool
	Evidence string
}

// itemRoles are the rows a list's count is made of.
var itemRoles = []string{"list item", "table row", "tree item"}

// checkable roles: "selected" of a check box means checked.
var checkableRoles = []string{"check box", "check menu item", "toggle button", "switch", "radio button", "radio menu item"}

// app is one application's nodes as one walk read them: Parent indices
// point into the same slice.
type app []atspi.Node

// found is a node a predicate is about.
type found struct {
	a app
	i int
}

func (f found) n() *atspi.Node { return &f.a[f.i] }

// norm folds a name for matching: lower case, spaces collapsed, trailing
// ellipsis and colon dropped.
func norm(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	s = strings.TrimRight(s, ":…. ")
	return strings.TrimSpace(s)
}

// hasWords reports whether name holds words as whole words, in order.
func hasWords(name, words string) bool {
	if words == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(name[i:], words)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(words)
		if (j == 0 || !isWordByte(name[j-1])) && (end == len(name) || !isWordByte(name[end])) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 0x80
}

func (p Predicate) roles() []string {
	n, _ := nounOf(p.Noun)
	if p.Window && p.Name != "" {
		return windowRoles // "the Export dialog" may be any window titled so
	}
	return n.roles
}

func (p Predicate) kind() string {
	n, _ := nounOf(p.Noun)
	return n.kind
}

// candidates are the nodes p names, best tier first: the name itself;
// for unquoted names, a name holding those words, then a node of the
// role in a window whose title holds them; for a value, text or list
// predicate whose name matched nothing (or that has none), the one node
// of its role.
func candidates(p Predicate, apps []app) []found {
	roles := p.roles()
	var all []found
	for _, a := range apps {
		for i := range a {
			n := &a[i]
			// An application's children are its windows, whatever their
			// role (a Qt top-level widget is a "filler").
			if !slices.Contains(roles, n.Role) && !(p.Window && p.Name != "" && n.Depth == 1) {
				continue
			}
			if p.In != "" && !strings.Contains(norm(n.Window), p.In) {
				continue
			}
			all = append(all, found{a, i})
		}
	}
	if p.Name == "" {
		return all
	}
	tiers := []func(n *atspi.Node) bool{
		func(n *atspi.Node) bool {
			name := norm(n.Name)
			if p.Window {
				return strings.Contains(name, p.Name)
			}
			return name == p.Name
		},
	}
	if !p.Quoted {
		tiers = append(tiers,
			func(n *atspi.Node) bool { return hasWords(norm(n.Name), p.Name) },
		)
		if !p.Window {
			tiers = append(tiers, func(n *atspi.Node) bool {
				return hasWords(norm(n.Window), p.Name) || hasWords(norm(n.Description), p.Name)
			})
		}
	}
	for _, match := range tiers {
		var out []found
		for _, f := range all {
			if match(f.n()) {
				out = append(out, f)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	switch p.kind() {
	case "value", "text", "list":
		if !p.Quoted && len(all) == 1 {
			return all
		}
	}
	return nil
}

func showing(n *atspi.Node) bool { return n.States.Has(atspi.StateShowing) }

func enabled(n *atspi.Node) bool {
	return n.States.Has(atspi.StateEnabled) || n.States.Has(atspi.StateSensitive)
}

func checked(n *atspi.Node) bool {
	return n.States.Has(atspi.StateChecked) || n.States.Has(atspi.StatePressed)
}

func describe(n *atspi.Node) string {
	s := n.Role
	if n.Name != "" {
		s += " " + strconv.Quote(n.Name)
	}
	if n.App != "" && n.Window != "" && n.Window != n.Name {
		s += fmt.Sprintf(" in %q (%s)", n.Window, n.App)
	} else if n.App != "" {
		s += " (" + n.App + ")"
	}
	return s
}

func (p Predicate) what() string {
	s := p.Noun
	if p.Name != "" {
		s += " " + strconv.Quote(p.Name)
	}
	if p.In != "" {
		s += " in " + strconv.Quote(p.In)
	}
	return s
}

// percent is n's value as a percentage of its range, and whether it has one.
func percent(n *atspi.Node) (float64, bool) {
	if n.Max <= n.Min {
		return 0, false
	}
	return (n.Value - n.Min) / (n.Max - n.Min) * 100, true
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// rows counts the items of list node f: its Table's row count, else its
// children (or grandchildren, through a section) of item roles.
func rows(f found) int {
	n := f.n()
	count := 0
	for i := range f.a {
		c := &f.a[i]
		if !slices.Contains(itemRoles, c.Role) || c.Parent < 0 {
			continue
		}
		if c.Parent == f.i || (f.a[c.Parent].Parent == f.i && !slices.Contains(itemRoles, f.a[c.Parent].Role)) {
			count++
		}
	}
	if count == 0 && n.Ifaces.Has(atspi.IfTable) {
		return n.Rows
	}
	return count
}

// evaluate decides p on apps.
func evaluate(p Predicate, apps []app) Outcome {
	o := Outcome{Pred: p}
	cs := candidates(p, apps)
	// Showing ones first: what a person would look at.
	slices.SortStableFunc(cs, func(a, b found) int {
		sa, sb := showing(a.n()), showing(b.n())
		switch {
		case sa && !sb:
			return -1
		case sb && !sa:
			return 1
		}
		return 0
	})
	if p.Check == Gone {
		for _, f := range cs {
			if showing(f.n()) {
				o.Evidence = describe(f.n()) + " is still showing"
				return o
			}
		}
		o.Met = true
		if len(cs) > 0 {
			o.Evidence = describe(cs[0].n()) + " is no longer showing"
		} else {
			o.Evidence = "no " + p.what() + " in the accessibility tree"
		}
		return o
	}
	if len(cs) == 0 {
		o.Evidence = "no " + p.what() + " in the accessibility tree"
		return o
	}
	test := func(f found) (bool, string) {
		n := f.n()
		switch p.Check {
		case Open:
			if showing(n) {
				return true, "is showing"
			}
			return false, "is not showing"
		case Focused:
			if n.States.Has(atspi.StateFocused) || (p.Window && n.States.Has(atspi.StateActive)) {
				return true, "has the focus"
			}
			if p.Window {
				// A window has the focus when a widget in it has.
				for i := range f.a {
					c := &f.a[i]
					if i != f.i && c.Window == n.Name && c.States.Has(atspi.StateFocused) {
						return true, "has the focus (on " + describe(c) + ")"
					}
				}
			}
			return false, "does not have the focus (states: " + n.States.String() + ")"
		case Enabled:
			if enabled(n) {
				return true, "is enabled"
			}
			return false, "is disabled"
		case Disabled:
			if !enabled(n) {
				return true, "is disabled"
			}
			return false, "is enabled"
		case Checked:
			if checked(n) {
				return true, "is checked"
			}
			return false, "is not checked"
		case Unchecked:
			if !checked(n) {
				return true, "is not checked"
			}
			return false, "is checked"
		case Selected:
			if n.States.Has(atspi.StateSelected) || slices.Contains(checkableRoles, n.Role) && checked(n) {
				return true, "is selected"
			}
			return false, "is not selected"
		case Unselected:
			if !n.States.Has(atspi.StateSelected) && !(slices.Contains(checkableRoles, n.Role) && checked(n)) {
				return true, "is not selected"
			}
			return false, "is selected"
		case Value:
			if !n.Ifaces.Has(atspi.IfValue) {
				return false, "has no value"
			}
			x, unit := n.Value, ""
			if p.Percent {
				pc, ok := percent(n)
				if !ok {
					return false, fmt.Sprintf("has value %s without a range", fmtNum(n.Value))
				}
				x, unit = pc, "%"
			}
			at := fmt.Sprintf("is at %s%s (value %s of %s..%s)", fmtNum(round(x)), unit, fmtNum(n.Value), fmtNum(n.Min), fmtNum(n.Max))
			return p.Cmp.holds(x, p.Number), at
		case TextEquals, TextContains:
			if !n.Ifaces.Has(atspi.IfText) {
				return false, "has no text"
			}
			v := strings.TrimSpace(n.Text)
			got := strings.ToLower(v)
			want := strings.ToLower(strings.TrimSpace(p.Text))
			ok := got == want
			if p.Check == TextContains {
				ok = strings.Contains(got, want)
			}
			return ok, "holds " + strconv.Quote(v)
		}
		return false, ""
	}
	var first string
	for _, f := range cs {
		n := f.n()
		var ok bool
		var why string
		if p.Check == Rows {
			c := rows(f)
			ok, why = p.Cmp.holds(float64(c), p.Number), fmt.Sprintf("has %d rows", c)
		} else {
			ok, why = test(f)
		}
		if ok {
			o.Met, o.Evidence = true, describe(n)+" "+why
			return o
		}
		if first == "" {
			first = describe(n) + " " + why
		}
	}
	o.Evidence = first
	return o
}

func round(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 2, 64), 64)
	return v
}
