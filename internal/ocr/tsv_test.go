package ocr

import (
	"image"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sampleTSV = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n" +
	"1\t1\t0\t0\t0\t0\t0\t0\t900\t300\t-1\t\n" +
	"4\t1\t1\t1\t1\t0\t30\t30\t300\t30\t-1\t\n" +
	"5\t1\t1\t1\t1\t1\t30\t30\t150\t30\t96.5\tBuild\n" +
	"5\t1\t1\t1\t1\t2\t190\t31\t140\t29\t91\tsucceeded\n" +
	"5\t1\t1\t1\t1\t3\t340\t31\t10\t29\t10\t \n" +
	"5\t1\t2\t1\t1\t1\t31\t100\t60\t31\t88\tDone\n"

func TestParseTSV(t *testing.T) {
	got, err := ParseTSV([]byte(sampleTSV), 3, image.Pt(100, 10))
	if err != nil {
		t.Fatal(err)
	}
	want := Result{
		Words: []Word{
			{Text: "Build", Box: image.Rect(110, 20, 160, 30), Conf: 96.5, Line: 0},
			{Text: "succeeded", Box: image.Rect(163, 20, 210, 30), Conf: 91, Line: 0},
			{Text: "Done", Box: image.Rect(110, 43, 131, 54), Conf: 88, Line: 1},
		},
		Lines: []Line{
			{Text: "Build succeeded", Box: image.Rect(110, 20, 210, 30), Conf: 93.75, Words: []int{0, 1}},
			{Text: "Done", Box: image.Rect(110, 43, 131, 54), Conf: 88, Words: []int{2}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseTSV mismatch (-want +got):\n%s", diff)
	}
	if got.Text() != "Build succeeded\nDone" {
		t.Errorf("Text() = %q, want %q", got.Text(), "Build succeeded\nDone")
	}
}

func TestParseTSVErrors(t *testing.T) {
	for name, in := range map[string]string{
		"missing column": "level\tpage_num\n5\t1\n",
		"bad number":     "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n5\t1\t1\t1\t1\t1\tx\t0\t1\t1\t90\tword\n",
		"short row":      "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n5\t1\t1\n",
		"negative size":  "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n5\t1\t1\t1\t1\t1\t0\t0\t-4\t1\t90\tword\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseTSV([]byte(in), 1, image.Point{}); err == nil {
				t.Errorf("ParseTSV(%q) = nil error, want one", in)
			}
		})
	}
	if r, err := ParseTSV(nil, 1, image.Point{}); err != nil || len(r.Words) != 0 {
		t.Errorf("ParseTSV(nil) = %v, %v; want empty, nil", r, err)
	}
}

func FuzzParseTSV(f *testing.F) {
	f.Add([]byte(sampleTSV), 3)
	f.Add([]byte("level\ttext\n"), 1)
	f.Add([]byte(""), 2)
	f.Fuzz(func(t *testing.T, data []byte, scale int) {
		if scale > 16 || scale < -16 {
			scale %= 16
		}
		r, err := ParseTSV(data, scale, image.Point{})
		if err != nil {
			return
		}
		for i, w := range r.Words {
			if w.Line < 0 || w.Line >= len(r.Lines) {
				t.Fatalf("word %d line %d out of range", i, w.Line)
			}
			if w.Text == "" {
				t.Fatalf("word %d is empty", i)
			}
		}
		for _, l := range r.Lines {
			if len(l.Words) == 0 {
				t.Fatalf("line %q has no words", l.Text)
			}
		}
	})
}
