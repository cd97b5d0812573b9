package elements

import (
	"image"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/acu-dev/acu/internal/atspi"
)

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Save", "save"},
		{"Save As…", "save_as"},
		{"  Search the web  ", "search_the_web"},
		{"Open a new window now", "open_a_new"},
		{"Supercalifragilisticexpialidocious", "supercalifragilistic"},
		{"Quarterly report ready", "quarterly_report"},
		{"über Größe", "ber_gr_e"},
		{"日本語", ""},
		{"", ""},
		{"OK!", "ok"},
		{"File 2", "file_2"},
	} {
		if got := slug(tc.in); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzSlug(f *testing.F) {
	for _, s := range []string{"Save", "Save As…", "", "a b c d e", "日本語", "x__y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := slug(s)
		if len(got) > 20 {
			t.Errorf("slug(%q) = %q: longer than 20", s, got)
		}
		for i, r := range got {
			ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' && i > 0 && i < len(got)-1
			if !ok {
				t.Fatalf("slug(%q) = %q: bad character %q at %d", s, got, r, i)
			}
		}
	})
}

func el(typ, text string, x, y int, ref string) Element {
	e := Element{Type: typ, Text: text, Box: image.Rect(x, y, x+40, y+20), Showing: true, Source: FromOCR}
	if ref != "" {
		e.Source = FromTree
		e.Ref = atspi.Ref{Bus: ":1.1", Path: dbus.ObjectPath("/a/" + ref)}
	}
	return e
}

func ids(els []Element) []string {
	out := make([]string, len(els))
	for i := range els {
		out[i] = els[i].ID
	}
	return out
}

func TestRegistryStableIDs(t *testing.T) {
	r := newRegistry()
	it1 := []Element{
		el(TypeButton, "Save", 10, 10, "1"),
		el(TypeButton, "Save", 10, 300, "2"),
		el(TypeInput, "", 100, 10, "3"),
		el(TypeInput, "", 100, 300, "4"),
		el(TypeInput, "Search", 500, 10, "5"),
		el(TypeText, "Welcome back", 500, 500, ""),
	}
	r.assign(it1, 1)
	want := []string{"btn_save", "btn_save_2", "txt_1", "txt_2", "txt_search", "ocr_welcome_back"}
	if got := ids(it1); !equal(got, want) {
		t.Fatalf("iteration 1 ids = %v, want %v", got, want)
	}

	// Iteration 2: order changed, the first Save button gone, the second
	// moved far (same accessible object), OCR text shifted a little, a new
	// search field appeared.
	it2 := []Element{
		el(TypeText, "Welcome back", 505, 498, ""),
		el(TypeInput, "Search", 500, 10, "5"),
		el(TypeInput, "Search", 500, 60, "6"),
		el(TypeButton, "Save", 700, 700, "2"),
		el(TypeInput, "", 100, 300, "4"),
		el(TypeInput, "", 100, 10, "3"),
	}
	r.assign(it2, 2)
	want = []string{"ocr_welcome_back", "txt_search", "txt_search_2", "btn_save_2", "txt_2", "txt_1"}
	if got := ids(it2); !equal(got, want) {
		t.Errorf("iteration 2 ids = %v, want %v", got, want)
	}

	// Iteration 3: the first Save button returns as a new object near its
	// old place and gets its old id back; nothing is reused for another
	// element.
	it3 := []Element{
		el(TypeButton, "Save", 12, 10, "7"),
		el(TypeButton, "Save", 700, 700, "2"),
	}
	r.assign(it3, 3)
	want = []string{"btn_save", "btn_save_2"}
	if got := ids(it3); !equal(got, want) {
		t.Errorf("iteration 3 ids = %v, want %v", got, want)
	}

	// Ids unseen for longer than forgetAfter iterations are forgotten.
	r.assign([]Element{el(TypeButton, "Save", 700, 700, "2")}, 3+forgetAfter+1)
	if r.ids["txt_search_2"] != nil || r.ids["btn_save_2"] == nil {
		t.Errorf("after %d idle iterations: registry %v", forgetAfter, r.ids)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
