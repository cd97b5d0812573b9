package elements_test

import (
	"context"
	"errors"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/input"
)

func TestMapZenityEntry(t *testing.T) {
	d := newDesktop(t)
	d.zenity(t, "--entry", "--title=Acu Entry", "--text=Your name:")
	x := d.extractor(t, true)
	m, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("map:\n%s", m.Text())
	win := mustEl(t, m, elements.TypeWindow, "Acu Entry")
	if !win.Active {
		t.Errorf("window %s is not active", win.ID)
	}
	ok := mustEl(t, m, elements.TypeButton, "OK")
	cancel := mustEl(t, m, elements.TypeButton, "Cancel")
	label := mustEl(t, m, elements.TypeLabel, "Your name:")
	var entry *elements.Element
	for i := range m.Elements {
		if m.Elements[i].Type == elements.TypeInput {
			entry = &m.Elements[i]
		}
	}
	if entry == nil {
		t.Fatalf("no input in the map:\n%s", m.Text())
	}
	if ok.ID != "btn_ok" || cancel.ID != "btn_cancel" || label.ID != "lbl_your_name" || entry.ID != "txt_1" {
		t.Errorf("ids = %s %s %s %s, want btn_ok btn_cancel lbl_your_name txt_1", ok.ID, cancel.ID, label.ID, entry.ID)
	}
	if !ok.Clickable || !entry.Editable || !entry.Focused || !entry.HasEditableText() {
		t.Errorf("flags: ok clickable %v, entry editable %v focused %v editable-text %v", ok.Clickable, entry.Editable, entry.Focused, entry.HasEditableText())
	}
	for _, e := range []*elements.Element{ok, cancel, label, entry} {
		if !e.Box.In(win.Box) || e.Box.Dx() < 10 || e.Box.Dy() < 10 {
			t.Errorf("%s box %v, want a real box inside the window %v", e.ID, e.Box, win.Box)
		}
	}
	// Bounds agree with the pixels: the buttons' labels are read by OCR
	// inside their boxes and merged into them.
	if ok.Source != elements.FromBoth || cancel.Source != elements.FromBoth || label.Source != elements.FromBoth {
		t.Errorf("sources ok=%s cancel=%s label=%s, want tree+ocr (OCR text inside the boxes)\n%s", ok.Source, cancel.Source, label.Source, describe(m))
	}
	checkBoxByPixels(t, m, win.Box)
	for _, e := range m.Elements {
		if e.Source == elements.FromOCR && (e.Text == "OK" || e.Text == "Cancel") {
			t.Errorf("OCR duplicate of a tree element: %s", e.String())
		}
	}
}

// checkBoxByPixels compares the dialog's box with the capture: the pixels
// just inside it differ from the black root window around it.
func checkBoxByPixels(t *testing.T, m *elements.Map, box image.Rectangle) {
	t.Helper()
	f := m.Frame
	if f == nil {
		t.Fatal("map has no frame")
	}
	px := func(x, y int) uint32 {
		i := y*f.Stride + x*4
		return uint32(f.Pix[i])<<16 | uint32(f.Pix[i+1])<<8 | uint32(f.Pix[i+2])
	}
	c := image.Pt((box.Min.X+box.Max.X)/2, (box.Min.Y+box.Max.Y)/2)
	if px(c.X, box.Min.Y+2) == 0 || px(box.Min.X+2, c.Y) == 0 {
		t.Errorf("window box %v: pixels just inside are black (box off the window)", box)
	}
	if px(c.X, box.Min.Y-3) != 0 || px(box.Max.X+3, c.Y) != 0 || px(c.X, box.Max.Y+3) != 0 {
		t.Errorf("window box %v: pixels just outside are not the black root (box inside the window)", box)
	}
}

func TestMapZenityQuestion(t *testing.T) {
	d := newDesktop(t)
	d.zenity(t, "--question", "--title=Acu Question", "--text=Delete the file?")
	x := d.extractor(t, false)
	m, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	yes := mustEl(t, m, elements.TypeButton, "Yes")
	no := mustEl(t, m, elements.TypeButton, "No")
	mustEl(t, m, elements.TypeLabel, "Delete the file?")
	if yes.ID != "btn_yes" || no.ID != "btn_no" {
		t.Errorf("ids %s %s, want btn_yes btn_no", yes.ID, no.ID)
	}
	if yes.Box.Min.Y != no.Box.Min.Y || yes.Box.Overlaps(no.Box) {
		t.Errorf("buttons Yes %v and No %v: want side by side", yes.Box, no.Box)
	}
}

func TestStableIDsAcrossIterations(t *testing.T) {
	d := newDesktop(t)
	d.zenity(t, "--entry", "--title=Acu Entry", "--text=Your name:")
	x := d.extractor(t, false)
	var maps []*elements.Map
	for i := 0; i < 3; i++ {
		m, err := x.Extract(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		maps = append(maps, m)
	}
	if maps[2].Iteration != 3 {
		t.Errorf("iteration = %d, want 3", maps[2].Iteration)
	}
	for i := 1; i < len(maps); i++ {
		if d := elements.Compare(maps[i-1], maps[i]); !d.Empty() {
			t.Errorf("map %d differs from map %d on an unchanged screen:\n%s", i+1, i, d)
		}
	}
	// Typing changes the entry's value, and its id stays.
	entry := mustEl(t, maps[2], elements.TypeInput, "")
	if err := d.tree.SetText(t.Context(), entry.Ref, "abc"); err != nil {
		t.Fatal(err)
	}
	m, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	diff := elements.Compare(maps[2], m)
	if len(diff.Changed) != 1 || diff.Changed[0].ID != entry.ID || diff.Changed[0].After.Value != "abc" {
		t.Errorf("diff after typing = %s, want %s value changed to abc", diff, entry.ID)
	}
	var tr elements.Tracker
	for _, mm := range append(maps, m) {
		tr.Observe(mm)
	}
	if h := tr.Hashes(); len(h) != 4 || h[0] != h[3] {
		t.Errorf("layout hashes %x: want 4 equal ones (a value change is not a layout change)", h)
	}
}

func TestExecuteTypeAndOK(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pointer bool
		via     []string
	}{
		{"atspi", false, []string{elements.ViaEditableText, elements.ViaAction + ":Click"}},
		{"xtest", true, []string{elements.ViaPointer, elements.ViaPointer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDesktop(t)
			app := d.zenity(t, "--entry", "--title=Acu Entry", "--text=Your name:")
			x := d.extractor(t, false)
			m, err := x.Extract(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			r, err := x.Execute(t.Context(), m, elements.Step{Kind: elements.StepType, Target: "txt_1", Text: "Ada Lovelace", Pointer: tc.pointer})
			if err != nil {
				t.Fatalf("type: %v\n%s", err, r.After.Text())
			}
			if r.Via != tc.via[0] || r.Attempts != 1 {
				t.Errorf("type: via %s in %d attempts, want %s in 1", r.Via, r.Attempts, tc.via[0])
			}
			if e, _ := r.After.Get("txt_1"); e == nil || e.Value != "Ada Lovelace" {
				t.Errorf("entry after typing: %v", e)
			}
			r, err = x.Execute(t.Context(), r.After, elements.Step{Kind: elements.StepClick, Target: "btn_ok", Pointer: tc.pointer})
			if err != nil {
				t.Fatalf("click OK: %v", err)
			}
			if r.Via != tc.via[1] || len(r.Diff.Removed) == 0 {
				t.Errorf("click: via %s, diff %s; want %s and the dialog gone", r.Via, r.Diff, tc.via[1])
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			out, err := app.Wait(ctx)
			if err != nil || out != "Ada Lovelace\n" {
				t.Errorf("zenity printed %q, %v; want %q", out, err, "Ada Lovelace\n")
			}
		})
	}
}

func TestExecuteFailsAfterRetry(t *testing.T) {
	d := newDesktop(t)
	d.zenity(t, "--entry", "--title=Acu Entry", "--text=Your name:")
	x := d.extractor(t, false)
	m, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Clicking a label changes nothing: two attempts, then ErrNoEffect.
	r, err := x.Execute(t.Context(), m, elements.Step{Kind: elements.StepClick, Target: "lbl_your_name"})
	if !errors.Is(err, elements.ErrNoEffect) || r.Attempts != 2 {
		t.Errorf("click label = attempts %d, %v; want 2, ErrNoEffect", r.Attempts, err)
	}
	r, err = x.Execute(t.Context(), m, elements.Step{Kind: elements.StepClick, Target: "btn_missing"})
	if !errors.Is(err, elements.ErrNoElement) || r.Attempts != 2 {
		t.Errorf("click missing = attempts %d, %v; want 2, ErrNoElement", r.Attempts, err)
	}
}

func TestExecuteKeyReturn(t *testing.T) {
	d := newDesktop(t)
	app := d.zenity(t, "--entry", "--title=Acu Entry", "--text=Your name:")
	x := d.extractor(t, false)
	m, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	r, err := x.Execute(t.Context(), m, elements.Step{Kind: elements.StepType, Target: "txt_1", Text: "Grace"})
	if err != nil {
		t.Fatal(err)
	}
	// Return in the entry activates the dialog's default button.
	r, err = x.Execute(t.Context(), r.After, elements.Step{Kind: elements.StepKey, Target: "txt_1", Text: "Return"})
	if err != nil {
		t.Fatalf("press Return: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if out, err := app.Wait(ctx); err != nil || out != "Grace\n" {
		t.Errorf("zenity printed %q, %v; want %q", out, err, "Grace\n")
	}
}

func TestExecutePointerOutsideArea(t *testing.T) {
	d := newDesktop(t)
	d.zenity(t, "--question", "--title=Acu Question", "--text=Proceed?")
	// The working area is the top-left corner; the dialog is centred.
	if err := d.dev.SetArea(input.Area{W: 200, H: 200}); err != nil {
		t.Fatal(err)
	}
	x := d.extractor(t, false)
	m, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = x.Execute(t.Context(), m, elements.Step{Kind: elements.StepClick, Target: "btn_yes", Pointer: true})
	if err == nil || !strings.Contains(err.Error(), "outside the working area") || !errors.Is(err, elements.ErrNoEffect) {
		t.Errorf("click outside the area = %v, want an outside-the-working-area error with ErrNoEffect", err)
	}
}

func TestMapWithoutTree(t *testing.T) {
	d := newDesktop(t)
	d.zenity(t, "--question", "--title=Acu Question", "--text=Proceed?")
	tree, err := atspi.Connect(t.Context(), atspi.Options{Address: d.session.A11yBus})
	if err != nil {
		t.Fatal(err)
	}
	tree.Close() // a bus connection that is gone
	x, err := elements.New(elements.Options{Display: d.dpy, Capture: d.hub, Tree: tree, OCR: d.ocr})
	if err != nil {
		t.Fatal(err)
	}
	m, err := x.Extract(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if m.TreeErr == nil {
		t.Error("TreeErr is nil with a closed bus connection")
	}
	found := false
	for _, e := range m.Elements {
		if e.Source == elements.FromOCR && e.Type == elements.TypeText && strings.Contains(e.Text, "Proceed?") {
			found = true
		}
	}
	if !found {
		t.Errorf("no OCR text \"Proceed?\" in the map:\n%s", m.Text())
	}
}
