package elements_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/testx"
)

// listRows starts a zenity list of n rows "row 1".."row n" in a short
// window and returns it with its map.
func listRows(t *testing.T, d *desktop, x *elements.Extractor, n int) (*elements.Map, func(context.Context) (string, error)) {
	t.Helper()
	args := []string{"--list", "--title=Acu Rows", "--column=Item", "--height=260", "--width=300"}
	for i := 1; i <= n; i++ {
		args = append(args, fmt.Sprintf("row %d", i))
	}
	app := d.zenity(t, args...)
	var m *elements.Map
	for range 50 {
		var err error
		if m, err = x.Extract(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, ok := findRow(m, "row 1"); ok {
			return m, app.Wait
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no rows in the map:\n%s", m.Text())
	return nil, nil
}

// onScreen reports whether a list row is in view: GTK reports every row as
// showing, and places the rows scrolled out of view at huge negative
// coordinates.
func onScreen(e *elements.Element) bool {
	return e.Showing && !e.Box.Empty() && e.Box.Min.X >= 0 && e.Box.Min.Y >= 0
}

func findRow(m *elements.Map, text string) (*elements.Element, bool) {
	for i := range m.Elements {
		if e := &m.Elements[i]; e.Text == text && e.Source&elements.FromTree != 0 {
			return e, true
		}
	}
	return nil, false
}

// TestStepScroll: the wheel over a long list brings a row that was not
// showing into view.
func TestStepScroll(t *testing.T) {
	d := newDesktop(t)
	x := d.extractor(t, false)
	m, _ := listRows(t, d, x, 80)
	if r, ok := findRow(m, "row 40"); ok && onScreen(r) {
		t.Fatalf("row 40 shows before any scroll:\n%s", m.Text())
	}
	list, ok := findRow(m, "row 1")
	if !ok {
		t.Fatal("no row 1")
	}
	cur := m
	for range 6 {
		res, err := x.Execute(t.Context(), cur, elements.Step{Kind: elements.StepScroll, Target: list.ID, Text: "down", Amount: 10})
		if err != nil {
			t.Fatalf("scroll: %v", err)
		}
		if res.Via != elements.ViaPointer {
			t.Errorf("scroll via %s, want the pointer", res.Via)
		}
		cur = res.After
		if r, ok := findRow(cur, "row 40"); ok && onScreen(r) {
			return
		}
		if list, ok = findRow(cur, "row 1"); !ok || !onScreen(list) { // row 1 scrolled off: scroll over a row in view
			for i := range cur.Elements {
				if e := &cur.Elements[i]; strings.HasPrefix(e.Text, "row ") && onScreen(e) {
					list = e
					break
				}
			}
		}
	}
	t.Errorf("row 40 never showed after scrolling down:\n%s", cur.Text())
}

// TestStepDoubleClick: a double click on a list row activates it, which
// zenity answers by printing the row and exiting.
func TestStepDoubleClick(t *testing.T) {
	d := newDesktop(t)
	x := d.extractor(t, false)
	m, wait := listRows(t, d, x, 5)
	row, _ := findRow(m, "row 3")
	if _, err := x.Do(t.Context(), m, elements.Step{Kind: elements.StepDoubleClick, Target: row.ID}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if out, err := wait(ctx); err != nil || out != "row 3\n" {
		t.Errorf("zenity printed %q (%v), want the double-clicked row", out, err)
	}
}

// TestStepRightClick: a right click on an entry opens its context menu,
// whose items appear in the next map.
func TestStepRightClick(t *testing.T) {
	d := newDesktop(t)
	d.zenity(t, "--entry", "--title=Acu Entry", "--text=Your name:")
	x := d.extractor(t, false)
	m, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var entry string
	for _, e := range m.Elements {
		if e.Type == elements.TypeInput {
			entry = e.ID
		}
	}
	res, err := x.Execute(t.Context(), m, elements.Step{Kind: elements.StepRightClick, Target: entry})
	if err != nil {
		t.Fatalf("right click: %v", err)
	}
	found := false
	for _, e := range res.After.Elements {
		if e.Showing && (e.Text == "Select All" || e.Text == "Paste") {
			found = true
		}
	}
	if !found {
		t.Errorf("no context menu (Select All, Paste) after the right click:\n%s", res.After.Text())
	}
}

// TestStepDrag: a drag in an xterm, which has no accessibility tree, from
// a line OCR found to another two lines down selects the text between
// them, and xterm puts it in the PRIMARY selection.
func TestStepDrag(t *testing.T) {
	if _, err := exec.LookPath("xclip"); err != nil {
		t.Fatal("xclip is needed: apt-get install xclip (scripts/install-deps.sh)")
	}
	d := newDesktop(t)
	testx.StartXterm(t, d.dpy, testx.XtermSpec{Geometry: "60x6+0+0", Args: []string{"-fa", "Monospace", "-fs", "16", "-bg", "white", "-fg", "black"},
		Command: []string{"sh", "-c", "echo ALPHA; echo BRAVO; echo CHARLIE; exec sleep 600"}})
	x := d.extractor(t, true)
	var m *elements.Map
	var from, to *elements.Element
	for range 50 {
		var err error
		if m, err = x.Extract(t.Context()); err != nil {
			t.Fatal(err)
		}
		from, to = nil, nil
		for i := range m.Elements {
			switch e := &m.Elements[i]; {
			case strings.Contains(e.Text, "ALPHA"):
				from = e
			case strings.Contains(e.Text, "CHARLIE"):
				to = e
			}
		}
		if from != nil && to != nil && from.ID != to.ID {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if from == nil || to == nil || from.ID == to.ID {
		t.Fatalf("OCR did not find ALPHA and CHARLIE as separate elements:\n%s", m.Text())
	}
	if _, err := x.Do(t.Context(), m, elements.Step{Kind: elements.StepDrag, Target: from.ID, To: to.ID}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("xclip", "-display", d.dpy, "-o", "-selection", "primary").Output()
	if err != nil || !strings.Contains(string(out), "BRAVO") {
		t.Errorf("PRIMARY after the drag = %q (%v), want the words between ALPHA and CHARLIE", out, err)
	}
}

// TestStepChecks: steps missing what their kind needs are refused before
// any input, naming what to give.
func TestStepChecks(t *testing.T) {
	x := newDesktop(t).extractor(t, false)
	m := &elements.Map{}
	for _, tc := range []struct {
		s    elements.Step
		want string
	}{
		{elements.Step{Kind: elements.StepDrag, Target: "a"}, "drop it on"},
		{elements.Step{Kind: elements.StepScroll, Text: "sideways"}, "up, down, left or right"},
		{elements.Step{Kind: elements.StepScroll, Amount: 99}, "wheel clicks"},
		{elements.Step{Kind: elements.StepDoubleClick}, "no target"},
		{elements.Step{Kind: "hover"}, "double_click"},
	} {
		if _, err := x.Do(t.Context(), m, tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error saying %q", tc.s, err, tc.want)
		}
	}
}
