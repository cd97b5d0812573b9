package a11yjudge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseClaims(t *testing.T) {
	for _, tc := range []struct {
		cond string
		want Predicate
	}{
		{"the Save dialog is open", Predicate{Noun: "dialog", Window: true, Name: "save", Check: Open}},
		{"The Save As dialog is shown.", Predicate{Noun: "dialog", Window: true, Name: "save as", Check: Open}},
		{"the dialog 'Export' is open", Predicate{Noun: "dialog", Window: true, Name: "export", Quoted: true, Check: Open}},
		{`a dialog titled "Export" appears`, Predicate{Noun: "dialog", Window: true, Name: "export", Quoted: true, Check: Open}},
		{"a dialog is open", Predicate{Noun: "dialog", Window: true, Check: Open}},
		{"the window 'Downloads' is gone", Predicate{Noun: "window", Window: true, Name: "downloads", Quoted: true, Check: Gone}},
		{"the Downloads window closes", Predicate{Noun: "window", Window: true, Name: "downloads", Check: Gone}},
		{"the Downloads window is no longer visible", Predicate{Noun: "window", Window: true, Name: "downloads", Check: Gone}},
		{"there is no Export dialog", Predicate{Noun: "dialog", Window: true, Name: "export", Check: Gone}},
		{"the Editor window is focused", Predicate{Noun: "window", Window: true, Name: "editor", Check: Focused}},
		{"the window “Editor” has focus", Predicate{Noun: "window", Window: true, Name: "editor", Quoted: true, Check: Focused}},
		{"the Install button is enabled", Predicate{Noun: "button", Name: "install", Check: Enabled}},
		{"wait until the Install button becomes enabled", Predicate{Noun: "button", Name: "install", Check: Enabled}},
		{`the "Install" button is disabled`, Predicate{Noun: "button", Name: "install", Quoted: true, Check: Disabled}},
		{"the Install button is greyed out", Predicate{Noun: "button", Name: "install", Check: Disabled}},
		{"the Install button isn't enabled", Predicate{Noun: "button", Name: "install", Check: Disabled}},
		{"the button named 'OK' is visible", Predicate{Noun: "button", Name: "ok", Quoted: true, Check: Open}},
		{"the OK button in the Export dialog is enabled", Predicate{Noun: "button", Name: "ok", In: "export", Check: Enabled}},
		{`the OK button in the dialog "Export" exists`, Predicate{Noun: "button", Name: "ok", In: "export", Check: Open}},
		{"there is a Retry button", Predicate{Noun: "button", Name: "retry", Check: Open}},
		{"the Retry button disappears", Predicate{Noun: "button", Name: "retry", Check: Gone}},
		{"the checkbox 'Remember me' is checked", Predicate{Noun: "checkbox", Name: "remember me", Quoted: true, Check: Checked}},
		{"the Remember me check box is unchecked", Predicate{Noun: "check box", Name: "remember me", Check: Unchecked}},
		{"the Wi-Fi switch is on", Predicate{Noun: "switch", Name: "wi-fi", Check: Checked}},
		{"the General tab is selected", Predicate{Noun: "tab", Name: "general", Check: Selected}},
		{"the search field has focus", Predicate{Noun: "field", Name: "search", Check: Focused}},
		{"the download progress reaches 100%", Predicate{Noun: "progress", Name: "download", Check: Value, Cmp: AtLeast, Number: 100, Percent: true}},
		{"the progress bar is at 50 percent", Predicate{Noun: "progress bar", Check: Value, Cmp: Exactly, Number: 50, Percent: true}},
		{"the progress bar is complete", Predicate{Noun: "progress bar", Check: Value, Cmp: AtLeast, Number: 100, Percent: true}},
		{"the Volume slider is above 70", Predicate{Noun: "slider", Name: "volume", Check: Value, Cmp: Above, Number: 70}},
		{"the progress bar's value is at least 0.5", Predicate{Noun: "progress bar", Check: Value, Cmp: AtLeast, Number: 0.5}},
		{`the Name field contains "acu"`, Predicate{Noun: "field", Name: "name", Check: TextContains, Text: "acu"}},
		{`the field "Name" is "Ada Lovelace"`, Predicate{Noun: "field", Name: "name", Quoted: true, Check: TextEquals, Text: "Ada Lovelace"}},
		{`the search box's value is 'acu'`, Predicate{Noun: "search box", Check: TextEquals, Text: "acu"}},
		{"the Name field is empty", Predicate{Noun: "field", Name: "name", Check: TextEquals}},
		{"the list has at least 3 rows", Predicate{Noun: "list", Check: Rows, Cmp: AtLeast, Number: 3}},
		{"the Files list has 3 items", Predicate{Noun: "list", Name: "files", Check: Rows, Cmp: Exactly, Number: 3}},
		{"the table has more than 10 rows", Predicate{Noun: "table", Check: Rows, Cmp: Above, Number: 10}},
		{"the Files list is empty", Predicate{Noun: "list", Name: "files", Check: Rows, Cmp: Exactly, Number: 0}},
	} {
		t.Run(tc.cond, func(t *testing.T) {
			plan := Parse(tc.cond)
			if len(plan.Parts) != 1 || plan.Parts[0].Pred == nil {
				t.Fatalf("Parse(%q) = %+v, want one structural part", tc.cond, plan)
			}
			if diff := cmp.Diff(tc.want, *plan.Parts[0].Pred); diff != "" {
				t.Errorf("Parse(%q) predicate (-want +got):\n%s", tc.cond, diff)
			}
			if plan.Rest() != "" {
				t.Errorf("Parse(%q).Rest() = %q, want empty", tc.cond, plan.Rest())
			}
		})
	}
}

// Phrases the grammar must not claim: they fall through, whole, to the
// OCR or vision judge.
func TestParseFallsThrough(t *testing.T) {
	for _, cond := range []string{
		`"Done" is visible`,
		`"Build succeeded" is visible`,
		`"Loading..." is gone`,
		`"Tests passed" and "Coverage" are shown`,
		`the terminal shows "Done"`,
		`the page has finished loading`,
		`the build succeeded`,
		`the Install button is blue`,
		`the Install button turns green`,
		`the progress bar looks half full`,
		`the window is open`,
		`the Save dialog or the Export dialog is open`,
		`the dialog shows the export finished`,
		`the window with the error is open`,
		`a spinner is visible`,
		`the screen is dark`,
		`the progress bar reaches 150%`,
		`the button is enabled`,
		`the cat video is playing`,
		`the chart shows a rising line`,
		`the download is complete`,
		`the email from Alice is open`,
	} {
		t.Run(cond, func(t *testing.T) {
			plan := Parse(cond)
			if plan.Structural() {
				t.Errorf("Parse(%q) claimed %v, want it left to the other judges", cond, plan.Predicates())
			}
			if plan.Rest() != cond {
				t.Errorf("Parse(%q).Rest() = %q, want the condition as written", cond, plan.Rest())
			}
		})
	}
}

func TestParseCombined(t *testing.T) {
	for _, tc := range []struct {
		cond  string
		preds []string
		rest  string
	}{
		{`the dialog 'Export' is open and "Done" is visible`, []string{`dialog "export" open`}, `"Done" is visible`},
		{`the download progress reaches 100% and the Install button is enabled`,
			[]string{`progress "download" value >= 100%`, `button "install" enabled`}, ""},
		{`the Export dialog is open and "A" and "B" are shown`, []string{`dialog "export" open`}, `"A" and "B" are shown`},
		{`the Save dialog is open, and the file list looks sorted`, []string{`dialog "save" open`}, `the file list looks sorted`},
		{`"Done" is visible and the window 'Downloads' is gone`, []string{`window "downloads" gone`}, `"Done" is visible`},
	} {
		t.Run(tc.cond, func(t *testing.T) {
			plan := Parse(tc.cond)
			var got []string
			for _, p := range plan.Predicates() {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tc.preds, got); diff != "" {
				t.Errorf("Parse(%q) predicates (-want +got):\n%s", tc.cond, diff)
			}
			if plan.Rest() != tc.rest {
				t.Errorf("Parse(%q).Rest() = %q, want %q", tc.cond, plan.Rest(), tc.rest)
			}
		})
	}
}

// Names holding "and" or "of": the grammar claims them when a noun it
// knows ends the name and the split on "and" does not give conditions that
// each stand alone; near misses stay with the other judges or split.
func TestParseJoinedNames(t *testing.T) {
	for _, tc := range []struct {
		cond  string
		preds []string
		rest  string
	}{
		{`the Terms of Service dialog is open`, []string{`dialog "terms of service" open`}, ""},
		{`the Save and Close button is enabled`, []string{`button "save and close" enabled`}, ""},
		{`the save and close button is enabled`, []string{`button "save and close" enabled`}, ""},
		{`wait until the Bed and Breakfast window closes`, []string{`window "bed and breakfast" gone`}, ""},
		{`the Print and Export Settings dialog appears`, []string{`dialog "print and export settings" open`}, ""},
		{`the Import Bookmarks and Settings dialog is open`, []string{`dialog "import bookmarks and settings" open`}, ""},
		{`the Speed of Light slider is above 70`, []string{`slider "speed of light" value > 70`}, ""},
		// The split puts the name back together and keeps the rest apart.
		{`the Export dialog is open and the Save and Close button is enabled`,
			[]string{`dialog "export" open`, `button "save and close" enabled`}, ""},
		{`the Terms of Service dialog is open and "Accept" is visible`, []string{`dialog "terms of service" open`}, `"Accept" is visible`},
		{`the dialog 'Export' is open and "Done" is visible`, []string{`dialog "export" open`}, `"Done" is visible`},
		// Two conditions that stand alone stay two.
		{`the Save dialog is open and the Close button is enabled`, []string{`dialog "save" open`, `button "close" enabled`}, ""},
		{`the Save dialog is open and Close button is enabled`, []string{`dialog "save" open`, `button "close" enabled`}, ""},
	} {
		t.Run(tc.cond, func(t *testing.T) {
			plan := Parse(tc.cond)
			var got []string
			for _, p := range plan.Predicates() {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tc.preds, got); diff != "" {
				t.Errorf("Parse(%q) predicates (-want +got):\n%s", tc.cond, diff)
			}
			if plan.Rest() != tc.rest {
				t.Errorf("Parse(%q).Rest() = %q, want %q", tc.cond, plan.Rest(), tc.rest)
			}
		})
	}
	// Near misses: text, a property, two subjects, a name cut by "and".
	for _, cond := range []string{
		`Step 3 of 5 is shown`,              // no noun: text, for the OCR or vision judge
		`the Terms of Service are accepted`, // no noun
		`the value of Volume slider is above 70`,
		`the list of files is empty`,
		`the Save and the Close buttons are enabled`,
		`the Save and Close button is blue`,
		`the Save or Close button is enabled`,
		`the Save and button is enabled`,
		`the Terms and and Service dialog is open`,
	} {
		t.Run(cond, func(t *testing.T) {
			plan := Parse(cond)
			if plan.Structural() {
				t.Errorf("Parse(%q) claimed %v, want it left to the other judges", cond, plan.Predicates())
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"the Save dialog is open", `the dialog 'Export' is open and "Done" is visible`, "the list has at least 3 rows", `'`, "\x01", "and and"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		plan := Parse(s)
		if len(plan.Parts) == 0 && s != "" {
			t.Fatalf("Parse(%q) has no parts", s)
		}
		for _, p := range plan.Predicates() {
			_ = p.String()
		}
	})
}

func TestTextOnly(t *testing.T) {
	for cond, want := range map[string]bool{
		`"Done" is visible`:                     true,
		`the terminal shows "OK" and "Saved"`:   true,
		`"Loading..." is no longer visible`:     true,
		`'Export complete' appears`:             true,
		`"Done" is visible in green`:            false,
		`the icon next to "Wi-Fi" is connected`: false,
		`the page is loaded`:                    false,
		`"A" and the chart shows a rising line`: false,
	} {
		if got := TextOnly(cond); got != want {
			t.Errorf("TextOnly(%q) = %v, want %v", cond, got, want)
		}
	}
}
