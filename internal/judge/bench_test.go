package judge_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/ocr"
)

var ocrSweep = flag.Bool("ocrsweep", false, "measure OCR preprocessing settings on the benchmark set")

func loadSet(t testing.TB) []judge.Case {
	t.Helper()
	set, err := judge.LoadSet(benchDir)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func ocrJudge(t testing.TB, o ocr.Options) *judge.OCRJudge {
	t.Helper()
	e, err := ocr.New(o)
	if err != nil {
		t.Fatal(err)
	}
	j, err := judge.NewOCR(judge.OCROptions{Engine: e})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestLoadSet(t *testing.T) {
	set := loadSet(t)
	if len(set) < 30 {
		t.Fatalf("LoadSet found %d cases, want at least 30", len(set))
	}
	yes := 0
	for _, c := range set {
		if c.Frame == nil || c.Frame.W == 0 || c.Frame.Hash == 0 {
			t.Errorf("case %s: frame not loaded", c.Name)
		}
		if c.Expect {
			yes++
		}
	}
	if yes == 0 || yes == len(set) {
		t.Errorf("set has %d YES of %d: want both labels", yes, len(set))
	}
}

// TestOCRBench runs the OCR judge over the labelled set and holds it to an
// accuracy floor and a false-YES ceiling (quality, not timing).
func TestOCRBench(t *testing.T) {
	set := loadSet(t)
	r := judge.RunBench(t.Context(), ocrJudge(t, ocr.Options{}), set)
	var buf bytes.Buffer
	if err := r.Print(&buf); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", buf.String())
	if r.N < 25 {
		t.Errorf("OCR judge ran %d cases, want the set's quoted-text conditions (at least 25)", r.N)
	}
	if r.Errors > 0 {
		t.Errorf("OCR judge errors: %d", r.Errors)
	}
	if r.N+r.Skipped != len(set) || r.Skipped == 0 {
		t.Errorf("OCR judge ran %d and skipped %d of %d cases; want the vision-only ones skipped", r.N, r.Skipped, len(set))
	}
	if r.Accuracy < 0.9 {
		t.Errorf("OCR judge accuracy = %.2f, want at least 0.90", r.Accuracy)
	}
	if r.FalseYes > 0 {
		t.Errorf("OCR judge false YES = %d, want 0", r.FalseYes)
	}
	if !strings.Contains(buf.String(), "accuracy") {
		t.Errorf("Print output lacks the accuracy line:\n%s", buf.String())
	}
}

// TestOCRSweep measures preprocessing settings on the set (go test
// ./internal/judge -run TestOCRSweep -ocrsweep -v); the results are in
// docs/perf/judge.md.
func TestOCRSweep(t *testing.T) {
	if !*ocrSweep {
		t.Skip("run with -ocrsweep")
	}
	set := loadSet(t)
	var out strings.Builder
	fmt.Fprintf(&out, "| scale | invert | threshold | psm | accuracy | false YES | tesseract CPU per screenshot | wall per screenshot |\n|---|---|---|---|---|---|---|---|\n")
	for _, o := range []ocr.Options{
		{Scale: 1, Invert: ocr.InvertNone, Threshold: ocr.ThresholdNone, PSM: 11},
		{Scale: 2, Invert: ocr.InvertNone, Threshold: ocr.ThresholdNone, PSM: 11},
		{Scale: 3, Invert: ocr.InvertNone, Threshold: ocr.ThresholdNone, PSM: 11},
		{Scale: 2, Invert: ocr.InvertGlobal, Threshold: ocr.ThresholdNone, PSM: 11},
		{Scale: 1, Invert: ocr.InvertRegions, Threshold: ocr.ThresholdNone, PSM: 11},
		{Scale: 2, Invert: ocr.InvertRegions, Threshold: ocr.ThresholdNone, PSM: 11},
		{Scale: 3, Invert: ocr.InvertRegions, Threshold: ocr.ThresholdNone, PSM: 11},
		{Scale: 2, Invert: ocr.InvertRegions, Threshold: ocr.ThresholdOtsu, PSM: 11},
		{Scale: 2, Invert: ocr.InvertRegions, Threshold: ocr.ThresholdNone, PSM: 3},
	} {
		e, err := ocr.New(o)
		if err != nil {
			t.Fatal(err)
		}
		j, err := judge.NewOCR(judge.OCROptions{Engine: e})
		if err != nil {
			t.Fatal(err)
		}
		r := judge.RunBench(t.Context(), j, set)
		fmt.Fprintf(&out, "| %d | %s | %s | %d | %.1f%% (%d/%d) | %d | %dms | %dms |\n", o.Scale, o.Invert, o.Threshold, o.PSM,
			100*r.Accuracy, r.Correct, r.N, r.FalseYes, e.CPUTime().Milliseconds()/e.Runs(), r.Elapsed.Milliseconds()/e.Runs())
		for _, c := range r.PerCase {
			if !c.Correct {
				fmt.Fprintf(&out, "|  | wrong: %s | %s |  |  |  |  |  |\n", c.Name, strings.ReplaceAll(c.Evidence, "|", "/"))
			}
		}
	}
	t.Logf("\n%s", out.String())
	if path := os.Getenv("OCR_SWEEP_OUT"); path != "" {
		os.WriteFile(path, []byte(out.String()), 0o644)
	}
}

// TestBuiltinSetMatchesTheTree: the set inside the binary is the one in
// testdata, frame for frame, so `acu bench judge` needs no source tree.
func TestBuiltinSetMatchesTheTree(t *testing.T) {
	tree := loadSet(t)
	built, err := judge.BuiltinSet()
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != len(tree) {
		t.Fatalf("built-in set has %d cases, testdata %d", len(built), len(tree))
	}
	for i := range tree {
		if built[i].Name != tree[i].Name || built[i].Condition != tree[i].Condition ||
			(tree[i].Frame != nil && (built[i].Frame == nil || built[i].Frame.Hash != tree[i].Frame.Hash)) {
			t.Errorf("case %d: built-in %s differs from testdata %s", i, built[i].Name, tree[i].Name)
		}
	}
}
