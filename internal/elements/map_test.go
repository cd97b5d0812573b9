package elements

import (
	"encoding/json"
	"fmt"
	"image"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acu-dev/acu/internal/ocr"
)

func TestIoU(t *testing.T) {
	r := image.Rect
	for _, tc := range []struct {
		name string
		a, b image.Rectangle
		want float64
	}{
		{"same", r(0, 0, 10, 10), r(0, 0, 10, 10), 1},
		{"disjoint", r(0, 0, 10, 10), r(20, 20, 30, 30), 0},
		{"touching", r(0, 0, 10, 10), r(10, 0, 20, 10), 0},
		{"half", r(0, 0, 10, 10), r(5, 0, 15, 10), 50.0 / 150},
		{"inside", r(0, 0, 10, 10), r(0, 0, 10, 5), 0.5},
		{"empty", r(0, 0, 0, 0), r(0, 0, 10, 10), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IoU(tc.a, tc.b); got != tc.want {
				t.Errorf("IoU(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	tree := []Element{
		{Type: TypeButton, Text: "Save", Box: image.Rect(100, 100, 200, 130), Source: FromTree, Showing: true},
		{Type: TypeLabel, Text: "Name:", Box: image.Rect(100, 50, 160, 70), Source: FromTree, Showing: true},
		{Type: TypeButton, Text: "", Box: image.Rect(300, 100, 340, 130), Source: FromTree, Showing: true},
		{Type: TypeWindow, Text: "Editor", Box: image.Rect(0, 0, 800, 600), Source: FromTree, Showing: true},
	}
	res := ocr.Result{Lines: []ocr.Line{
		{Text: "Save", Box: image.Rect(135, 108, 165, 122), Conf: 90},         // small, inside Save with its text
		{Text: "Name", Box: image.Rect(101, 51, 158, 69), Conf: 88},           // IoU > 0.5 with the label
		{Text: "Go", Box: image.Rect(303, 103, 338, 128), Conf: 80},           // IoU > 0.5 with the unnamed button
		{Text: "Canvas title", Box: image.Rect(400, 300, 520, 320), Conf: 85}, // the tree lacks it
		{Text: "Cancel", Box: image.Rect(140, 108, 170, 122), Conf: 92},       // inside Save, other text, low IoU
		{Text: "blurry", Box: image.Rect(400, 400, 450, 420), Conf: 10},       // under MinOCRConf
		{Text: "|—", Box: image.Rect(400, 450, 410, 470), Conf: 70},           // no letter
	}}
	got := Merge(append([]Element(nil), tree...), res, 40)
	type row struct {
		Type, Text string
		Source     Source
	}
	var rows []row
	for _, e := range got {
		rows = append(rows, row{e.Type, e.Text, e.Source})
	}
	want := []row{
		{TypeButton, "Save", FromBoth},
		{TypeLabel, "Name:", FromBoth},
		{TypeButton, "Go", FromBoth},
		{TypeWindow, "Editor", FromTree},
		{TypeText, "Canvas title", FromOCR},
		{TypeText, "Cancel", FromOCR},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("Merge (-want +got):\n%s", d)
	}
}

func TestRankCap(t *testing.T) {
	screen := image.Rect(0, 0, 1000, 1000)
	var els []Element
	for i := 0; i < 250; i++ {
		e := Element{Type: TypeButton, Text: fmt.Sprint(i), Source: FromTree, Showing: i%2 == 0,
			Box: image.Rect(10, 996-i*4, 50, 996-i*4+20)}
		els = append(els, e)
	}
	// One showing element lies off screen.
	els[10].Box = image.Rect(2000, 10, 2040, 30)
	got, dropped := rank(els, screen, 200)
	if len(got) != 200 || dropped != 50 {
		t.Fatalf("rank kept %d, dropped %d; want 200, 50", len(got), dropped)
	}
	for i := 0; i < 124; i++ {
		if !got[i].Showing || !got[i].Box.Overlaps(screen) {
			t.Fatalf("element %d (%s %v) is not showing on screen; want the 124 showing on-screen ones first", i, got[i].Text, got[i].Box)
		}
		if i > 0 && got[i].Box.Min.Y < got[i-1].Box.Min.Y {
			t.Fatalf("element %d above element %d: want reading order", i, i-1)
		}
	}
	if got[124].Text != "10" {
		t.Errorf("element 124 = %q, want the showing off-screen one (10)", got[124].Text)
	}
	if got[125].Showing {
		t.Errorf("element 125 is showing; want hidden ones last")
	}
}

func mapOf(els ...Element) *Map {
	m := &Map{Elements: els}
	m.reindex()
	return m
}

func TestCompare(t *testing.T) {
	a := mapOf(
		Element{ID: "btn_ok", Type: TypeButton, Text: "OK", Box: image.Rect(10, 10, 50, 30), Enabled: true, Showing: true},
		Element{ID: "txt_1", Type: TypeInput, Editable: true, Box: image.Rect(10, 40, 200, 60), Showing: true},
		Element{ID: "lbl_old", Type: TypeLabel, Text: "Old", Box: image.Rect(10, 70, 50, 80), Showing: true},
		Element{ID: "chk_bold", Type: TypeCheckbox, Text: "Bold", Box: image.Rect(10, 90, 50, 100), Showing: true},
	)
	b := mapOf(
		Element{ID: "btn_ok", Type: TypeButton, Text: "OK", Box: image.Rect(12, 11, 52, 31), Enabled: true, Showing: true}, // within tolerance
		Element{ID: "txt_1", Type: TypeInput, Editable: true, Value: "hi", Focused: true, Box: image.Rect(10, 40, 200, 60), Showing: true},
		Element{ID: "chk_bold", Type: TypeCheckbox, Text: "Bold", Checked: true, Box: image.Rect(10, 190, 50, 200), Showing: true},
		Element{ID: "lbl_new", Type: TypeLabel, Text: "New", Box: image.Rect(10, 70, 50, 80), Showing: true},
	)
	d := Compare(a, b)
	want := "+ [lbl_new] label \"New\" (30,75 40x10)\n" +
		"- [lbl_old] label \"Old\" (30,75 40x10)\n" +
		"~ [txt_1] input value \"\"->\"hi\" focused\n" +
		"~ [chk_bold] checkbox checked moved\n"
	if got := d.String(); got != want {
		t.Errorf("Compare().String() =\n%s\nwant\n%s", got, want)
	}
	if !Compare(a, a).Empty() || Compare(a, a).String() != "no changes\n" {
		t.Errorf("Compare(a, a) is not empty")
	}
	if got := Compare(nil, a); len(got.Added) != 4 {
		t.Errorf("Compare(nil, a) added %d, want 4", len(got.Added))
	}
}

func TestMapText(t *testing.T) {
	m := mapOf(
		Element{ID: "win_editor", Type: TypeWindow, Text: "Editor", App: "gedit", Window: "Editor", Box: image.Rect(0, 0, 800, 600), Source: FromTree, Enabled: true, Showing: true},
		Element{ID: "btn_save", Type: TypeButton, Text: "Save", App: "gedit", Window: "Editor", Box: image.Rect(10, 10, 50, 30), Clickable: true, Source: FromBoth, Enabled: true, Showing: true},
		Element{ID: "txt_1", Type: TypeInput, App: "gedit", Window: "Editor", Value: "draft", Editable: true, Focused: true, Box: image.Rect(10, 40, 210, 60), Source: FromTree, Enabled: true, Showing: true, Desc: "Document name"},
		Element{ID: "chk_wrap", Type: TypeCheckbox, Text: "Wrap", App: "gedit", Window: "Editor", Box: image.Rect(10, 70, 50, 80), Clickable: true, Checked: true, Source: FromTree, Showing: true},
		Element{ID: "ocr_hello", Type: TypeText, Text: "Hello world", Box: image.Rect(300, 300, 400, 320), Source: FromOCR, Showing: true},
	)
	m.Dropped = 3
	want := `# gedit: Editor
[win_editor] window "Editor" (400,300 800x600)
[btn_save] button "Save" (30,20 40x20) click
[txt_1] input value="draft" (110,50 200x20) editable focused desc="Document name"
[chk_wrap] checkbox "Wrap" (30,75 40x10) click checked disabled
# screen text (OCR)
[ocr_hello] text "Hello world" (350,310 100x20)
(3 more elements not shown)
`
	if got := m.Text(); got != want {
		t.Errorf("Text() =\n%s\nwant\n%s", got, want)
	}
	if got := (*Map)(nil).Text(); got != "(no elements)\n" {
		t.Errorf("nil Text() = %q", got)
	}
}

func TestLayoutHash(t *testing.T) {
	base := func() *Map {
		return mapOf(
			Element{ID: "btn_ok", Type: TypeButton, Text: "OK", Box: image.Rect(100, 100, 140, 120), Clickable: true},
			Element{ID: "txt_1", Type: TypeInput, Text: "A rather long field label here", Box: image.Rect(100, 200, 300, 220)},
		)
	}
	h0 := LayoutHash(base())
	for _, tc := range []struct {
		name string
		edit func(m *Map)
		same bool
	}{
		{"unchanged", func(m *Map) {}, true},
		{"value typed", func(m *Map) { m.Elements[1].Value = "typed" }, true},
		{"focus moved", func(m *Map) { m.Elements[1].Focused = true }, true},
		{"moved within the grid cell", func(m *Map) { m.Elements[0].Box = m.Elements[0].Box.Add(image.Pt(20, -20)) }, true},
		{"text past 20 characters", func(m *Map) { m.Elements[1].Text = "A rather long field XXXXXXX" }, true},
		{"id renamed", func(m *Map) { m.Elements[0].ID = "btn_other" }, true},
		{"moved to another cell", func(m *Map) { m.Elements[0].Box = m.Elements[0].Box.Add(image.Pt(60, 0)) }, false},
		{"text changed", func(m *Map) { m.Elements[0].Text = "Ok" }, false},
		{"text within 20 characters", func(m *Map) { m.Elements[1].Text = "A rather long fielX" }, false},
		{"clickable flag", func(m *Map) { m.Elements[0].Clickable = false }, false},
		{"type", func(m *Map) { m.Elements[0].Type = TypeLink }, false},
		{"element added", func(m *Map) { m.Elements = append(m.Elements, Element{Type: TypeText, Text: "x"}) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := base()
			tc.edit(m)
			if got := LayoutHash(m) == h0; got != tc.same {
				t.Errorf("LayoutHash equal = %v, want %v", got, tc.same)
			}
		})
	}
}

// layouts makes one map per letter: equal letters give equal maps.
func layouts(seq string) []*Map {
	var out []*Map
	for _, c := range seq {
		out = append(out, mapOf(Element{ID: "lbl", Type: TypeLabel, Text: string(c), Box: image.Rect(0, 0, 10, 10)}))
	}
	return out
}

func TestTracker(t *testing.T) {
	for _, tc := range []struct {
		name     string
		seq      string
		stagnant string // per observation: S stagnant, . not
		recover  string // per observation: R recover, . not
	}{
		{"all different", "abcdefghij", "..........", ".........."},
		{"third repeat in window", "abacad", "....S.", "......"},
		{"repeats spread wider than ten", "abcdefghijkalmnopqrsatu", strings.Repeat(".", 23), strings.Repeat(".", 23)},
		{"repeat leaves the window", "axbcdefghijkxlmnx", strings.Repeat(".", 17), strings.Repeat(".", 17)},
		{"repeat within ten", "axbcdefgxhxij", "..........S..", "............."},
		{"unchanged four times in a row", "aaaaa", "..SSS", "....R"},
		{"unchanged count restarts", "aaaaaaaaa", "..SSSSSSS", "....R...R"},
		{"change breaks the run", "aaaabaaaa", "..SS.SSSS", "........."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr Tracker
			var st, rc strings.Builder
			for _, m := range layouts(tc.seq) {
				o := tr.Observe(m)
				st.WriteByte(map[bool]byte{true: 'S', false: '.'}[o.Stagnant])
				rc.WriteByte(map[bool]byte{true: 'R', false: '.'}[o.Recover])
			}
			if st.String() != tc.stagnant || rc.String() != tc.recover {
				t.Errorf("Observe(%s): stagnant %s recover %s, want %s %s", tc.seq, st.String(), rc.String(), tc.stagnant, tc.recover)
			}
			if n := len(tr.Hashes()); n > HashHistory {
				t.Errorf("kept %d hashes, want at most %d", n, HashHistory)
			}
		})
	}
}

func TestElementJSON(t *testing.T) {
	e := Element{ID: "btn_ok", Type: TypeButton, Text: "OK", Box: image.Rect(1, 2, 3, 4), Clickable: true, Source: FromBoth}
	e.Ref.Bus = ":1.5"
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"btn_ok","type":"button","text":"OK","box":{"Min":{"X":1,"Y":2},"Max":{"X":3,"Y":4}},"clickable":true,"source":"tree+ocr"}`
	if string(b) != want {
		t.Errorf("json.Marshal = %s, want %s", b, want)
	}
}
