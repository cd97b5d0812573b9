package judge_test

import (
	"context"
	"image"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/ocr/ocrtest"
	"github.com/google/go-cmp/cmp"
)

func TestParseTextCondition(t *testing.T) {
	for _, tc := range []struct {
		cond string
		want judge.TextCondition
	}{
		{`"Build succeeded" is visible`, judge.TextCondition{Phrases: []string{"Build succeeded"}}},
		{`the terminal shows "Done"`, judge.TextCondition{Phrases: []string{"Done"}}},
		{`"Loading..." is gone`, judge.TextCondition{Phrases: []string{"Loading..."}, Gone: true}},
		{`"Loading..." disappears`, judge.TextCondition{Phrases: []string{"Loading..."}, Gone: true}},
		{`"Saving" is no longer visible`, judge.TextCondition{Phrases: []string{"Saving"}, Gone: true}},
		{`"Saving" is not visible`, judge.TextCondition{Phrases: []string{"Saving"}, Gone: true}},
		{`the spinner “Please wait” vanished`, judge.TextCondition{Phrases: []string{"Please wait"}, Gone: true}},
		{"the prompt shows `$ ` and 'ready'", judge.TextCondition{Phrases: []string{"ready"}}},
		{`both "Tests passed" and "Coverage" are shown`, judge.TextCondition{Phrases: []string{"Tests passed", "Coverage"}}},
		{`the label "Not visible yet" is visible`, judge.TextCondition{Phrases: []string{"Not visible yet"}}},
		{`don't stop until "it's done"`, judge.TextCondition{Phrases: []string{"it's done"}}},
	} {
		got, err := judge.ParseTextCondition(tc.cond)
		if err != nil {
			t.Errorf("ParseTextCondition(%q) error %v", tc.cond, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseTextCondition(%q) mismatch (-want +got):\n%s", tc.cond, diff)
		}
	}
}

func TestOCRCheckRejectsUnquoted(t *testing.T) {
	j := ocrJudge(t, ocr.Options{})
	for _, cond := range []string{"the build has finished", "a dialog with a checkmark appears", `"..." is visible`, ""} {
		err := j.Check(cond)
		if err == nil {
			t.Errorf("Check(%q) = nil, want an error", cond)
			continue
		}
		for _, b := range judge.VisionBackends {
			if !strings.Contains(err.Error(), b) {
				t.Errorf("Check(%q) error %q does not name backend %s", cond, err, b)
			}
		}
	}
	if err := j.Check(`"Done" is visible`); err != nil {
		t.Errorf("Check(quoted) = %v, want nil", err)
	}
}

// TestOCRJudgeText judges terminal text directly (pty targets): no OCR, but
// the same matching.
func TestOCRJudgeText(t *testing.T) {
	j := ocrJudge(t, ocr.Options{})
	text := "$ make\n[ 40%] Building acu\n[100%] Built target acu\nBui1d  succeded in 4s\n$ "
	for _, tc := range []struct {
		cond string
		met  bool
	}{
		{`"Build succeeded" is visible`, true}, // 1/l confusion, a missing e, two spaces
		{`"built target ACU" is visible`, true},
		{`"Error" is visible`, false},
		{`"Building" is gone`, false},
		{`"Loading" is gone`, true},
		{`"target" is visible`, true},
		{`"arg" is visible`, false}, // no partial words
		{`"100%" is visible`, true},
		{`"10%" is visible`, false},
		{`"Build" and "Built" are visible`, true},
		{`"Build" and "Broken" are visible`, false},
	} {
		v, err := j.Judge(t.Context(), judge.Question{Condition: tc.cond, Text: text})
		if err != nil {
			t.Fatal(err)
		}
		if v.Met != tc.met {
			t.Errorf("Judge(%q) met = %v (%s), want %v", tc.cond, v.Met, v.Evidence, tc.met)
		}
	}
}

// TestOCRJudgeScreen: text really drawn by xterm under Xvfb, captured
// through internal/capture: a phrase that appears, one that is gone, and
// noisy matches.
func TestOCRJudgeScreen(t *testing.T) {
	d := ocrtest.StartXvfb(t, 900, 400)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	j := ocrJudge(t, ocr.Options{})

	// A terminal that is still working: a dark theme with a TrueType font.
	m := d.Xterm(t, "70x8+10+10", "#e0e0e0", "#202020", []string{"-fa", "DejaVu Sans Mono", "-fs", "11"},
		`printf 'Downloading model weights...\nLoading...\n'; touch "$ACU_MARK"; while [ ! -e "$ACU_MARK.go" ]; do sleep 0.05; done; clear; printf 'Download complete: 4.2 GB in 31s\n'; touch "$ACU_MARK.done"`)
	d.WaitSettled(ctx, t, m)
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	grab := func() *frame.Frame {
		t.Helper()
		f, err := hub.Capture(ctx, d.Name, capture.Target{Kind: capture.Screen})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	before := grab()
	check := func(name string, v judge.Verdict, err error, want bool) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.Met != want {
			t.Errorf("%s: met = %v (%s), want %v", name, v.Met, v.Evidence, want)
		}
	}
	v, err := j.Judge(ctx, judge.Question{Condition: `"Download complete" is visible`, Frame: before})
	check("before: complete visible", v, err, false)
	v, err = j.Judge(ctx, judge.Question{Condition: `"Loading..." is gone`, Frame: before})
	check("before: loading gone", v, err, false)
	if len(v.Boxes) == 0 || !v.Boxes[0].In(image.Rect(10, 10, 900, 400)) {
		t.Errorf("before: loading still there: boxes %v, want a box inside the terminal", v.Boxes)
	}

	// Let the terminal finish.
	touch(t, m+".go")
	d.WaitSettled(ctx, t, m+".done")
	after := grab()
	if after.Hash == before.Hash {
		t.Fatal("the capture hub returned the same frame after the terminal changed")
	}
	v, err = j.Judge(ctx, judge.Question{Condition: `the terminal shows "Download complete"`, Frame: after})
	check("after: complete visible", v, err, true)
	if len(v.Boxes) == 0 {
		t.Errorf("after: no evidence boxes")
	}
	v, err = j.Judge(ctx, judge.Question{Condition: `"Loading..." is gone`, Frame: after})
	check("after: loading gone", v, err, true)
	// Noisy: different case, extra punctuation and spacing, O for 0.
	v, err = j.Judge(ctx, judge.Question{Condition: `"download  COMPLETE:" is visible`, Frame: after})
	check("after: noisy phrase", v, err, true)
	v, err = j.Judge(ctx, judge.Question{Condition: `"4.2 GB in 3ls" is visible`, Frame: after})
	check("after: confusable phrase", v, err, true)
	v, err = j.Judge(ctx, judge.Question{Condition: `"Upload complete" is visible`, Frame: after})
	check("after: near miss", v, err, false)
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzOCRJudgeText: conditions and texts come from agents and terminals.
func FuzzOCRJudgeText(f *testing.F) {
	f.Add(`"Build succeeded" is visible`, "Build succeeded\n$ ")
	f.Add(`"Loading..." is gone`, "Loading...")
	f.Add(`'x' “y” ‘z’ `+"`w`", "x y z w")
	f.Add(`"rnrn" is not visible`, "mm")
	e, err := ocr.New(ocr.Options{})
	if err != nil {
		f.Fatal(err)
	}
	j, err := judge.NewOCR(judge.OCROptions{Engine: e})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cond, text string) {
		if text == "" {
			return
		}
		tc, err := judge.ParseTextCondition(cond)
		if err != nil {
			if j.Check(cond) == nil {
				t.Fatalf("Check(%q) accepts what ParseTextCondition rejects", cond)
			}
			return
		}
		v, err := j.Judge(context.Background(), judge.Question{Condition: cond, Text: text})
		if err != nil {
			t.Fatalf("Judge(%q, %q): %v", cond, text, err)
		}
		// A phrase is always found in a text made of exactly that phrase.
		if !tc.Gone && len(tc.Phrases) == 1 {
			v, err = j.Judge(context.Background(), judge.Question{Condition: cond, Text: tc.Phrases[0]})
			if err != nil || !v.Met {
				t.Fatalf("Judge(%q, its own phrase) = %v, %v; want met", cond, v.Met, err)
			}
		}
	})
}

// TestOCRJudgeBlankFrame: a frame with no text at all does not prove that a
// phrase is gone.
func TestOCRJudgeBlankFrame(t *testing.T) {
	j := ocrJudge(t, ocr.Options{})
	w, h := 320, 200
	f := frame.New(make([]byte, w*h*4), w, h, w*4, ":0", "screen", time.Now())
	v, err := j.Judge(t.Context(), judge.Question{Condition: `"Loading..." is gone`, Frame: f})
	if err != nil {
		t.Fatal(err)
	}
	if v.Met {
		t.Errorf("Judge(gone, blank frame) met = true (%s), want false", v.Evidence)
	}
	v, err = j.Judge(t.Context(), judge.Question{Condition: `"Loading..." is gone`, Text: "\n"})
	if err != nil || !v.Met {
		t.Errorf("Judge(gone, empty pane) = %v, %v; want met", v.Met, err)
	}
}
