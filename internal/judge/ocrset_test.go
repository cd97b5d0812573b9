package judge_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/ocr"
)

// ocrSetDir is the labelled set drawn by real applications
// (bench/judgeset/gen.sh).
const ocrSetDir = "testdata/ocrset"

// Floors of the OCR judge on the set: counts, not timings. They are what
// the judge achieves (docs/judges.md); a change that reads less, or says
// YES where it should not, fails here.
const (
	ocrSetMinHits     = 787 // YES cases judged YES, at least (of 794)
	ocrSetMaxFalseYes = 0   // NO cases judged YES, at most (of 1,154)
)

// runSplit runs the set in two halves at once (the machine has two cores),
// each half's screens whole, with a judge of its own, and joins the
// reports.
func runSplit(ctx context.Context, t testing.TB, set []judge.Case, parts int) judge.Report {
	t.Helper()
	halves := make([][]judge.Case, parts)
	screen := map[string]int{}
	for _, c := range set {
		i, ok := screen[c.Image]
		if !ok {
			i = len(screen) % parts
			screen[c.Image] = i
		}
		halves[i] = append(halves[i], c)
	}
	reports := make([]judge.Report, parts)
	var wg sync.WaitGroup
	var engines []*ocr.Engine
	for i := range halves {
		e, err := ocr.New(ocr.Options{})
		if err != nil {
			t.Fatal(err)
		}
		engines = append(engines, e)
		j, err := judge.NewOCR(judge.OCROptions{Engine: e})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			reports[i] = judge.RunBench(ctx, j, halves[i])
		}()
	}
	wg.Wait()
	var cpu time.Duration
	var runs int64
	for _, e := range engines {
		cpu += e.CPUTime()
		runs += e.Runs()
	}
	if runs > 0 {
		t.Logf("Tesseract: %d runs, %s CPU per run", runs, (cpu / time.Duration(runs)).Round(time.Millisecond))
	}
	return judge.JoinReports(reports...)
}

// TestOCRSet runs the OCR judge over the set of real applications and
// holds it to the recall and false-YES floors above.
func TestOCRSet(t *testing.T) {
	set, err := judge.LoadSet(ocrSetDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(set) < 300 {
		t.Fatalf("the OCR set has %d cases, want at least 300", len(set))
	}
	r := runSplit(t.Context(), t, set, 2)
	var buf bytes.Buffer
	if err := r.Print(&buf); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", buf.String())
	if r.Errors > 0 {
		t.Errorf("OCR judge errors: %d", r.Errors)
	}
	hits := r.Positives - r.FalseNo
	if hits < ocrSetMinHits {
		t.Errorf("OCR judge recall = %d of %d YES cases, want at least %d", hits, r.Positives, ocrSetMinHits)
	}
	if r.FalseYes > ocrSetMaxFalseYes {
		t.Errorf("OCR judge false YES = %d, want at most %d", r.FalseYes, ocrSetMaxFalseYes)
	}
}

// TestBuiltinOCRSetMatchesTheTree: the OCR set inside the binary (`acu
// bench judge --set ocr`) is the one in testdata, frame for frame.
func TestBuiltinOCRSetMatchesTheTree(t *testing.T) {
	tree, err := judge.LoadSet(ocrSetDir)
	if err != nil {
		t.Fatal(err)
	}
	built, err := judge.BuiltinOCRSet()
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != len(tree) {
		t.Fatalf("built-in OCR set has %d cases, testdata %d", len(built), len(tree))
	}
	for i := range tree {
		if built[i].Name != tree[i].Name || built[i].Frame.Hash != tree[i].Frame.Hash {
			t.Errorf("case %d: built-in %s differs from testdata %s", i, built[i].Name, tree[i].Name)
		}
	}
}

// TestLoadSetCrop: a case's crop is the target window; a crop outside the
// screenshot is refused with what to do.
func TestLoadSetCrop(t *testing.T) {
	set, err := judge.LoadSet(ocrSetDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range set {
		if c.Crop != nil && (c.Frame.W != c.Crop[2]-c.Crop[0] || c.Frame.H != c.Crop[3]-c.Crop[1]) {
			t.Fatalf("case %s: frame %dx%d, want the crop %v", c.Name, c.Frame.W, c.Frame.H, c.Crop)
		}
	}
	dir := t.TempDir()
	png, err := os.ReadFile(filepath.Join(ocrSetDir, set[0].Image))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a.png"), png, 0o644)
	os.WriteFile(filepath.Join(dir, "labels.json"), []byte(`[{"name":"x","image":"a.png","condition":"\"a\" is visible","crop":[0,0,99999,10]}]`), 0o644)
	if _, err := judge.LoadSet(dir); err == nil || !strings.Contains(err.Error(), "crop") {
		t.Errorf("LoadSet(crop outside) = %v, want an error about the crop", err)
	}
}
