package judge_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/ocr"
)

// TestOCRMatchNearMisses: noise inside a word is forgiven, a different
// word or number never is, and a phrase does not run across lines.
func TestOCRMatchNearMisses(t *testing.T) {
	j := ocrJudge(t, ocr.Options{})
	for _, tc := range []struct {
		cond, text string
		want       bool
	}{
		{`"Status: Connected" is visible`, "Status: Connected", true},
		{`"Status: Connected" is visible`, "Status: Disconnected", false},
		{`"Step 3 of 5" is visible`, "Step 2 of 5", false},
		{`"Step 3 of 5" is visible`, "Step 3 of 5", true},
		{`"api-02 Healthy" is visible`, "api-01 Healthy", false},
		{`"Order ships Thursday" is visible`, "Order ships Tuesday", false},
		{`"Login successful" is visible`, "Login unsuccessful", false},
		{`"Upload complete" is visible`, "Upload incomplete", false},
		{`"Saved 12 files" is visible`, "Saved 13 files", false},
		{`"Frames: 240 of 240" is visible`, "Frames: 239 of 240", false},
		{`"Build succeeded" is visible`, "Bui1d succeded", true},   // 1 for l; one letter lost in a long word
		{`"Build succeeded" is visible`, "Buildsucceeded", true},   // joined by OCR
		{`"Export finished" is visible`, "Export fini shed", true}, // split by OCR
		{`"Tracking 7Q4X9" is visible`, "Tracking 7Q4X8", false},   // digits exact
		{`"Tracking 7Q4X8" is visible`, "Tracking 704X8", true},    // the Q read as a 0
		{`"Tracking 7Q4X8" is visible`, "Tracking 704X9", false},
		{`"Battery 85%" is visible`, "Battery 8S%", true},           // S read for 5
		{`"Step 3 of 5" is visible`, "Step 3\nof 5", false},         // not across lines
		{`"Door locked" is gone`, "Door unlocked", true},            // the pair is not the phrase
		{`"Server is running" is gone`, "Server is runnlng", false}, // still there, misread
		{`"Welcome back, Alice" is visible`, "Welcome back, Alicia", false},
		{`"Frames: 239 of 240" is visible`, "Framest 239 of 240", true}, // the colon read as a letter
		{`"Frames 239 of 240" is visible`, "Framest 239 of 240", false}, // no colon to misread
		{`"Frames: 239 of 240" is visible`, "Framesx 239 of 240", false},
	} {
		v, err := j.Judge(t.Context(), judge.Question{Condition: tc.cond, Text: tc.text})
		if err != nil {
			t.Fatal(err)
		}
		if v.Met != tc.want {
			t.Errorf("Judge(%s, text %q) met = %v (%s), want %v", tc.cond, tc.text, v.Met, v.Evidence, tc.want)
		}
	}
}

// TestOCRSetScreens: cases of the labelled set that each guard one part
// of the reading. A near match that kept a "gone" from being confirmed is
// read a second time at other sizes: two readings with confidence of
// another word confirm the phrase gone ("Tuesday" while "Thursday" is
// shown), a digit misread with low confidence the same way twice does not
// ("api-02" shown, read "api-62"); one reading at confidence 80 and the
// other at 50 is enough ("Alice" while waiting for "Alicia" to go). A
// digit read with low confidence is read again as a line on its own, with
// the characters the recognizer weighed: a digit where the phrase's was not
// weighed is another number ("api-02" for "api-01"). Text on a box of its own colour (a
// gradient, a button) is read against the box; a dialog's icon is parted
// from the lines of its label; the edge of a window is not a box. A glyph
// read twice ("7Q4Xx8", "4/7" for "47") is read as drawn, and a word read
// alike twice after a phrase's first words, far from every word of the
// phrase, is another word, not the rest of the phrase unread.
func TestOCRSetScreens(t *testing.T) {
	set, err := judge.LoadSet(ocrSetDir)
	if err != nil {
		t.Fatal(err)
	}
	frames := map[string]*judge.Case{}
	for i := range set {
		frames[set[i].Image] = &set[i]
	}
	j := ocrJudge(t, ocr.Options{})
	for _, tc := range []struct {
		image, cond string
		want        bool
	}{
		{"xterm-aa-light-1x-8pt.png", `"Order ships Tuesday" is gone`, true},            // "Order ships Thursday" shown
		{"xterm-aa-light-2x-10pt.png", `"api-02 Healthy" is gone`, true},                // "api-01 Healthy" shown
		{"xterm-aa-light-1x-8pt.png", `"Order ships Thursday" is gone`, false},          // shown
		{"mousepad-aa-light-1x-10pt.png", `"api-02 Healthy" is gone`, false},            // shown, read "api-62" twice, a 0 weighed for the 6
		{"xterm-bitmap-light-1x-8pt.png", `"Frames: 239 of 240" is gone`, false},        // shown, read "Framest"
		{"chromium-aa-light-1x-10pt.png", `"Backup unverified" is visible`, true},       // on a gradient box
		{"chromium-aa-light-2x-12pt.png", `"Order ships Tuesday" is visible`, true},     // on a gradient box, cut to its rows
		{"zenity-aa-dark-2x-10pt.png", `"Frames: 240 of 240" is visible`, true},         // beside the dialog's icon
		{"zenity-aa-dark-2x-10pt.png", `"Sync paused" is gone`, true},                   // the icon is no unread text
		{"lxterminal-aa-dark-2x-10pt.png", `"Backup unverified" is visible`, true},      // at the window's right edge
		{"chromium-aa-dark-1x-72pt.png", `"Tracking 7Q4X9" is gone`, true},              // "7Q4X8" after it, read twice
		{"urxvt-aa-dark-1x-10pt.png", `"Welcome back, Alicia" is gone`, true},           // "Alice" at 96, then at 66
		{"featherpad-aa-dark-2x-36pt.png", `"Tracking 7Q4X8" is gone`, true},            // "7Q4X9" read again in a block of text (psm 6)
		{"featherpad-aa-dark-2x-36pt.png", `"Tracking 7Q4X9" is gone`, false},           // shown
		{"featherpad-aa-light-1x-10pt.png", `"Invoice 4521 paid" is gone`, true},        // the tab's border no longer makes its label a 31-pixel line left unread
		{"zenity-aa-light-1x-12pt.png", `"api-01 Healthy" is gone`, true},               // "api-02" at 88: read as one line, nothing but a 2 weighed for the 2
		{"mousepad-aa-light-1x-10pt.png", `"api-01 Healthy" is gone`, true},             // "api-02" read "api-62" at 47: the 2 is no 1
		{"xterm-aa-light-1x-8pt.png", `"Frames: 240 of 240" is gone`, true},             // "Frames: 239 of 240", the last 240 at 59
		{"chromium-aa-light-1x-36pt.png", `"Version 2.4.7 installed" is visible`, true}, // 36 pt alone on a gradient box: read across the box, against it
		{"mousepad-aa-dark-1x-10pt.png", `"api-01 Healthy" is gone`, false},             // shown, read "api-681" (a 0 weighed for its 6)
		{"galculator-aa-light-1x-12pt.png", `"4511.75" is gone`, true},                  // the buttons' edges no longer hold "C", "AC", "<-" in a 34-pixel block left unread
		{"galculator-aa-dark-1x-26pt.png", `"399792" is gone`, true},                    // nor "(" and ")", 13 pixels in 24
		{"galculator-aa-light-1x-12pt.png", `"4521.75" is gone`, false},                 // shown
		{"near-mousepad-aa-light-1x-10pt.png", `"Frames: 239 of 240" is gone`, false},   // shown, read "246" at 93-97 every time: a 0 weighed for the 6
		{"near-mousepad-aa-light-1x-10pt.png", `"Payment accepted" is gone`, true},      // "Payment declined", "declined" read at 40 and again at 77: another word, not the rest unread
		{"near-mousepad-aa-light-1x-10pt.png", `"Payment declined" is gone`, false},     // shown
		{"near-mousepad-aa-dark-2x-12pt.png", `"Tracking 7Q4X8" is visible`, true},      // read "7Q4Xx8": the X and the x over the same columns, one glyph read twice
		{"near-mousepad-aa-dark-2x-12pt.png", `"Tracking 7Q4X9" is gone`, true},         // the same, undoubled, then read "7Q4X8" again at 87
		{"near-mousepad-aa-dark-2x-12pt.png", `"Tracking 7Q4X9" is visible`, false},     // not shown
		{"xterm-bitmap-dark-1x-12pt.png", `"Disk usage 42 GB" is gone`, true},           // "47" read "4/7", the / read off the 7's stroke: "47", its 7 with no 2 weighed
		{"xterm-bitmap-dark-1x-12pt.png", `"Disk usage 47 GB" is gone`, false},          // shown
	} {
		c := frames[tc.image]
		if c == nil {
			t.Fatalf("no screen %s in the set", tc.image)
		}
		v, err := j.Judge(t.Context(), judge.Question{Condition: tc.cond, Frame: c.Frame})
		if err != nil {
			t.Fatal(err)
		}
		if v.Met != tc.want {
			t.Errorf("Judge(%s on %s) met = %v (%s), want %v", tc.cond, tc.image, v.Met, v.Evidence, tc.want)
		}
	}
}
