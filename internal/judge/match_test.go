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
		{`"Build succeeded" is visible`, "Bui1d succeded", true},    // 1 for l; one letter lost in a long word
		{`"Build succeeded" is visible`, "Buildsucceeded", true},    // joined by OCR
		{`"Export finished" is visible`, "Export fini shed", true},  // split by OCR
		{`"Tracking 7Q4X9" is visible`, "Tracking 7Q4X8", false},    // digits exact
		{`"Battery 85%" is visible`, "Battery 8S%", true},           // S read for 5
		{`"Step 3 of 5" is visible`, "Step 3\nof 5", false},         // not across lines
		{`"Door locked" is gone`, "Door unlocked", true},            // the pair is not the phrase
		{`"Server is running" is gone`, "Server is runnlng", false}, // still there, misread
		{`"Welcome back, Alice" is visible`, "Welcome back, Alicia", false},
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
