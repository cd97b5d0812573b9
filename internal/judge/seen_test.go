package judge_test

import (
	"math/rand/v2"
	"testing"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/ocr"
)

// TestOCRGoneWhereItWasSeen: the judge remembers where a phrase was read
// on a target; when that place later holds text it cannot read, the
// phrase is not confirmed gone. A judge that never read the phrase there
// does not hold the same screen back (the unreadable text is no taller
// than the text it reads).
func TestOCRGoneWhereItWasSeen(t *testing.T) {
	set, err := judge.LoadSet(ocrSetDir)
	if err != nil {
		t.Fatal(err)
	}
	var before *frame.Frame
	for _, c := range set {
		if c.Image == "chromium-aa-light-1x-10pt.png" {
			before = c.Frame
			break
		}
	}
	if before == nil {
		t.Fatal("no chromium-aa-light-1x-10pt.png in the set")
	}
	const cond = `"Payment declined" is gone`
	j := ocrJudge(t, ocr.Options{})
	v, err := j.Judge(t.Context(), judge.Question{Condition: cond, Frame: before})
	if err != nil || v.Met || len(v.Boxes) == 0 {
		t.Fatalf("before: %+v, %v; want not gone, with its box", v, err)
	}
	at := v.Boxes[0]
	for _, b := range v.Boxes {
		at = at.Union(b)
	}
	// The same screen with glyph-sized specks where the phrase was.
	pix := append([]byte(nil), before.Pix...)
	rng := rand.New(rand.NewPCG(1, 2))
	r := at.Inset(-1)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			v := byte(250)
			if (x/3+y/4)%2 == 0 && rng.IntN(3) > 0 {
				v = 30
			}
			o := y*before.Stride + x*4
			pix[o], pix[o+1], pix[o+2] = v, v, v
		}
	}
	after := frame.New(pix, before.W, before.H, before.Stride, before.Display, before.Target, before.At)
	v, err = j.Judge(t.Context(), judge.Question{Condition: cond, Frame: after})
	if err != nil || v.Met {
		t.Errorf("after, where it was seen: %+v, %v; want not confirmed gone", v, err)
	}
	fresh := ocrJudge(t, ocr.Options{})
	v, err = fresh.Judge(t.Context(), judge.Question{Condition: cond, Frame: after})
	if err != nil || !v.Met {
		t.Errorf("after, never seen there: %+v, %v; want gone", v, err)
	}
}
