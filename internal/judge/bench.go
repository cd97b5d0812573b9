package judge

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unsafe"

	"github.com/acu-dev/acu/internal/frame"
)

// Case is one labelled benchmark question.
type Case struct {
	Name      string `json:"name"`
	Image     string `json:"image"` // PNG file name, relative to the set's directory
	Condition string `json:"condition"`
	Expect    bool   `json:"expect"` // true: the condition is met on this screenshot
	Scene     string `json:"scene,omitempty"`
	Note      string `json:"note,omitempty"`
	// Crop, x0 y0 x1 y1, is the target window: the question is asked of
	// that part of the screenshot only.
	Crop []int `json:"crop,omitempty"`
	// Facets the report is broken down by (the OCR set has them).
	SizePt int    `json:"size_pt,omitempty"` // text size in points
	SizePx int    `json:"size_px,omitempty"` // text size in pixels (96 dpi, times the scale)
	Theme  string `json:"theme,omitempty"`
	App    string `json:"app,omitempty"`
	Scale  int    `json:"scale,omitempty"`
	Kind   string `json:"kind,omitempty"` // visible, near, gone-present, gone-absent, partial, other-window...

	Frame *frame.Frame `json:"-"`              // loaded from Image
	Text  string       `json:"text,omitempty"` // a text question instead of an image
}

// builtinSet is the labelled set, built into the binary so `acu bench
// judge` runs from any directory.
//
//go:embed testdata/bench/labels.json testdata/bench/*.png
var builtinSet embed.FS

// BuiltinSet loads the labelled set that ships inside acu.
func BuiltinSet() ([]Case, error) {
	sub, err := fs.Sub(builtinSet, "testdata/bench")
	if err != nil {
		return nil, fmt.Errorf("load the built-in judge benchmark set: %w", err)
	}
	return loadSet(sub, "the built-in set")
}

// builtinOCRSet is the OCR judge's set of real applications
// (bench/judgeset), built in like builtinSet: 1.5 MB.
//
//go:embed testdata/ocrset/labels.json testdata/ocrset/*.png
var builtinOCRSet embed.FS

// BuiltinOCRSet loads the OCR judge's labelled set of real applications
// that ships inside acu.
func BuiltinOCRSet() ([]Case, error) {
	sub, err := fs.Sub(builtinOCRSet, "testdata/ocrset")
	if err != nil {
		return nil, fmt.Errorf("load the built-in OCR judge set: %w", err)
	}
	return loadSet(sub, "the built-in OCR set")
}

// LoadSet reads dir/labels.json and the screenshots it names.
func LoadSet(dir string) ([]Case, error) {
	return loadSet(os.DirFS(dir), dir)
}

func loadSet(fsys fs.FS, where string) ([]Case, error) {
	data, err := fs.ReadFile(fsys, "labels.json")
	if err != nil {
		return nil, fmt.Errorf("load judge benchmark set %s: %w", where, err)
	}
	var set []Case
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("load judge benchmark set %s: labels.json: %w", where, err)
	}
	frames := map[string]*frame.Frame{}
	for i := range set {
		c := &set[i]
		if c.Name == "" || c.Condition == "" || (c.Image == "" && c.Text == "") {
			return nil, fmt.Errorf("load judge benchmark set %s: case %d needs a name, a condition and an image or text", where, i)
		}
		if c.Image == "" {
			continue
		}
		f, ok := frames[c.Image]
		if !ok {
			var err error
			if f, err = loadFrame(fsys, c.Image); err != nil {
				return nil, fmt.Errorf("load judge benchmark set %s: case %s: %w", where, c.Name, err)
			}
			frames[c.Image] = f
		}
		c.Frame = f
		if c.Crop != nil {
			r := image.Rect(0, 0, 0, 0)
			if len(c.Crop) == 4 {
				r = image.Rect(c.Crop[0], c.Crop[1], c.Crop[2], c.Crop[3])
			}
			if r.Empty() || !r.In(f.Bounds()) {
				return nil, fmt.Errorf("load judge benchmark set %s: case %s: crop %v must be x0 y0 x1 y1 inside the %dx%d screenshot", where, c.Name, c.Crop, f.W, f.H)
			}
			key := fmt.Sprintf("%s %v", c.Image, r)
			if cf, ok := frames[key]; ok {
				c.Frame = cf
			} else {
				c.Frame = f.Sub(r, f.Target+" crop")
				frames[key] = c.Frame
			}
		}
	}
	return set, nil
}

// LoadFrame reads a PNG screenshot into a BGRX frame.
func LoadFrame(path string) (*frame.Frame, error) {
	return loadFrame(os.DirFS(filepath.Dir(path)), filepath.Base(path))
}

func loadFrame(fsys fs.FS, name string) (*frame.Frame, error) {
	fh, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", name, err)
	}
	return FrameFromImage(img, "file:"+path.Base(name)), nil
}

// FrameFromImage copies img into a new BGRX frame.
func FrameFromImage(img image.Image, target string) *frame.Frame {
	b := img.Bounds()
	if p, ok := img.(*image.Paletted); ok {
		// The OCR set's screens: through the palette, without drawing
		// (draw.Draw takes seconds on 60 large screens under -race).
		var lut [256]uint32 // BGRX as a word, on the little-endian machines acu runs on
		for i, c := range p.Palette {
			r, g, bl, _ := c.RGBA()
			lut[i] = bl>>8 | (g>>8)<<8 | (r>>8)<<16
		}
		w, h := b.Dx(), b.Dy()
		words := make([]uint32, w*h)
		for y := 0; y < h; y++ {
			src := p.Pix[y*p.Stride : y*p.Stride+w]
			dst := words[y*w : (y+1)*w]
			for x, v := range src {
				dst[x] = lut[v]
			}
		}
		pix := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*4)
		return frame.New(pix, w, h, w*4, "", target, time.Time{})
	}
	rgba, ok := img.(*image.RGBA)
	if !ok || rgba.Rect.Min != (image.Point{}) {
		rgba = image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(rgba, rgba.Rect, img, b.Min, draw.Src)
	}
	w, h := b.Dx(), b.Dy()
	pix := make([]byte, w*h*4)
	for y := 0; y < h; y++ {
		src := rgba.Pix[y*rgba.Stride : y*rgba.Stride+w*4]
		dst := pix[y*w*4 : (y+1)*w*4]
		for x := 0; x < w*4; x += 4 {
			dst[x], dst[x+1], dst[x+2], dst[x+3] = src[x+2], src[x+1], src[x], 0
		}
	}
	return frame.New(pix, w, h, w*4, "", target, time.Time{})
}

// CaseResult is one case's outcome.
type CaseResult struct {
	Name      string
	Condition string
	Expect    bool
	Met       bool
	Correct   bool
	Unparsed  bool
	Err       string
	Evidence  string
	Latency   time.Duration
	CostUSD   float64
	// CostUnknown: the call's cost is unknown (no provider figure, no price).
	CostUnknown bool
	// First: the first question about this frame (not answered from a
	// cache of the frame's reading).
	First bool
	Case  Case // the case's facets (size, theme, app, scale, kind)
}

// Report summarizes a benchmark run.
type Report struct {
	Backend      string
	Model        string
	N            int // cases run
	Skipped      int // cases the backend cannot decide (Check failed), not run
	Correct      int
	Accuracy     float64 // Correct / N
	FalseYes     int     // YES on a case labelled NO: the costly error (an agent woken early)
	FalseYesRate float64 // FalseYes / cases labelled NO
	FalseNo      int
	Positives    int     // cases labelled YES
	Recall       float64 // YES verdicts on them / Positives
	Errors       int     // no verdict (counted as incorrect)
	Unparsed     int
	P50, P90     time.Duration
	P99          time.Duration
	// FirstP50 and FirstP90: latency of the first question about each
	// frame, which reads it (the OCR judge answers the others from the
	// frame's reading): the cost of a decision on a changed screen.
	FirstP50, FirstP90 time.Duration
	Frames             int // distinct frames asked about
	CostUSD            float64
	Unpriced           int // calls whose cost is unknown, left out of CostUSD
	Elapsed            time.Duration
	PerCase            []CaseResult
}

// RunBench asks b every case in turn (sequentially, so latencies are not
// skewed by queueing) and reports how it did. Cases b cannot decide (Check
// fails) are skipped. It stops early when ctx ends.
func RunBench(ctx context.Context, b Backend, set []Case) Report {
	r := Report{Backend: b.Name()}
	start := time.Now()
	var lat, first []time.Duration
	seen := map[any]bool{}
	negatives := 0
	for _, c := range set {
		if ctx.Err() != nil {
			break
		}
		if b.Check(c.Condition) != nil {
			r.Skipped++
			continue
		}
		cr := CaseResult{Name: c.Name, Condition: c.Condition, Expect: c.Expect, Case: c}
		cr.Case.Frame = nil
		if c.Frame != nil && !seen[c.Frame] {
			seen[c.Frame], cr.First = true, true
		}
		t0 := time.Now()
		v, err := b.Judge(ctx, Question{Condition: c.Condition, Frame: c.Frame, Text: c.Text, RunID: "bench"})
		cr.Latency = time.Since(t0)
		if err != nil {
			cr.Err = err.Error()
			r.Errors++
		} else {
			cr.Met, cr.Unparsed, cr.Evidence, cr.CostUSD, cr.CostUnknown = v.Met, v.Unparsed, v.Evidence, v.CostUSD, v.CostUnknown
			if v.CostUnknown {
				r.Unpriced++
			}
			cr.Correct = v.Met == c.Expect
			if r.Model == "" {
				r.Model = v.Model
			}
			if v.Unparsed {
				r.Unparsed++
			}
			if v.Met && !c.Expect {
				r.FalseYes++
			}
			if !v.Met && c.Expect {
				r.FalseNo++
			}
		}
		if !c.Expect {
			negatives++
		} else {
			r.Positives++
		}
		if cr.Correct {
			r.Correct++
		}
		r.CostUSD += cr.CostUSD
		lat = append(lat, cr.Latency)
		if cr.First {
			first = append(first, cr.Latency)
		}
		r.PerCase = append(r.PerCase, cr)
	}
	r.Frames = len(first)
	if r.Positives > 0 {
		r.Recall = float64(r.Positives-r.FalseNo-countErr(r.PerCase, true)) / float64(r.Positives)
	}
	slices.Sort(first)
	r.FirstP50, r.FirstP90 = percentile(first, 50), percentile(first, 90)
	r.N = len(r.PerCase)
	r.Elapsed = time.Since(start)
	if r.N > 0 {
		r.Accuracy = float64(r.Correct) / float64(r.N)
	}
	if negatives > 0 {
		r.FalseYesRate = float64(r.FalseYes) / float64(negatives)
	}
	slices.Sort(lat)
	r.P50, r.P90, r.P99 = percentile(lat, 50), percentile(lat, 90), percentile(lat, 99)
	return r
}

// countErr counts the cases labelled expect that got no verdict.
func countErr(cs []CaseResult, expect bool) int {
	n := 0
	for _, c := range cs {
		if c.Err != "" && c.Expect == expect {
			n++
		}
	}
	return n
}

// percentile uses the nearest-rank method on sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := (p*len(sorted) + 99) / 100
	return sorted[max(0, min(k-1, len(sorted)-1))]
}

// Print writes the report as a summary and a per-case table.
func (r Report) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	model := r.Model
	if model == "" {
		model = "-"
	}
	fmt.Fprintf(tw, "backend %s, model %s: %d cases in %s\n", r.Backend, model, r.N, r.Elapsed.Round(time.Millisecond))
	if r.Skipped > 0 {
		fmt.Fprintf(tw, "skipped\t%d (conditions this backend cannot decide)\n", r.Skipped)
	}
	fmt.Fprintf(tw, "accuracy\t%.1f%% (%d/%d)\n", 100*r.Accuracy, r.Correct, r.N)
	fmt.Fprintf(tw, "false YES\t%d (%.1f%% of NO cases)\n", r.FalseYes, 100*r.FalseYesRate)
	fmt.Fprintf(tw, "false NO\t%d\n", r.FalseNo)
	if r.Positives > 0 {
		fmt.Fprintf(tw, "recall\t%.1f%% (%d of %d YES cases)\n", 100*r.Recall, r.Positives-r.FalseNo-countErr(r.PerCase, true), r.Positives)
	}
	fmt.Fprintf(tw, "errors\t%d\n", r.Errors)
	fmt.Fprintf(tw, "unparsed replies\t%d\n", r.Unparsed)
	fmt.Fprintf(tw, "latency p50/p90/p99\t%s / %s / %s\n", ms(r.P50), ms(r.P90), ms(r.P99))
	if r.Frames > 0 {
		fmt.Fprintf(tw, "first decision per frame p50/p90\t%s / %s (%d frames)\n", ms(r.FirstP50), ms(r.FirstP90), r.Frames)
	}
	if r.Unpriced > 0 {
		fmt.Fprintf(tw, "cost\tunknown: %d of %d calls have no price (set ACU_MODEL_PRICES); $%.6f known\n", r.Unpriced, r.N, r.CostUSD)
	} else {
		fmt.Fprintf(tw, "cost\t$%.6f total, $%.6f per call\n", r.CostUSD, r.CostUSD/float64(max(1, r.N)))
	}
	r.printBreakdown(tw)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "case\texpect\tgot\tok\tlatency\tevidence")
	for _, c := range r.PerCase {
		got := yn(c.Met)
		if c.Err != "" {
			got = "ERR"
		} else if c.Unparsed {
			got += "?"
		}
		ev := c.Evidence
		if c.Err != "" {
			ev = c.Err
		}
		ev = strings.Join(strings.Fields(ev), " ")
		if len(ev) > 90 {
			ev = ev[:87] + "..."
		}
		ok := "ok"
		if !c.Correct {
			ok = "WRONG"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, yn(c.Expect), got, ok, ms(c.Latency), ev)
	}
	return tw.Flush()
}

func yn(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond))
}

// Facets of the OCR set the report breaks down by.
var facets = []struct {
	name string
	of   func(Case) string
}{
	{"size", func(c Case) string { return sizeBucket(c.SizePx) }},
	{"theme", func(c Case) string { return c.Theme }},
	{"app", func(c Case) string { return c.App }},
	{"scale", func(c Case) string {
		if c.Scale == 0 {
			return ""
		}
		return fmt.Sprintf("%dx", c.Scale)
	}},
	{"kind", func(c Case) string { return c.Kind }},
}

// sizeBucket names a text height range in pixels.
func sizeBucket(px int) string {
	switch {
	case px <= 0:
		return ""
	case px < 16:
		return "<16px"
	case px < 26:
		return "16-25px"
	case px < 36:
		return "26-35px"
	case px < 56:
		return "36-55px"
	case px < 100:
		return "56-99px"
	}
	return "100px+"
}

// Breakdown is recall and false YES for the cases of one facet value.
type Breakdown struct {
	Facet, Value        string
	Positives, Hits     int // YES cases, and those judged YES
	Negatives, FalseYes int
	FirstP50            time.Duration // first decision per frame
}

// Breakdowns groups the results by size, theme, app, scale and kind (only
// facets the set has).
func (r Report) Breakdowns() []Breakdown {
	var out []Breakdown
	for _, f := range facets {
		idx := map[string]int{}
		var first = map[string][]time.Duration{}
		var rows []Breakdown
		for _, c := range r.PerCase {
			v := f.of(c.Case)
			if v == "" {
				continue
			}
			i, ok := idx[v]
			if !ok {
				i = len(rows)
				idx[v] = i
				rows = append(rows, Breakdown{Facet: f.name, Value: v})
			}
			b := &rows[i]
			if c.Expect {
				b.Positives++
				if c.Met && c.Err == "" {
					b.Hits++
				}
			} else {
				b.Negatives++
				if c.Met && c.Err == "" {
					b.FalseYes++
				}
			}
			if c.First {
				first[v] = append(first[v], c.Latency)
			}
		}
		for i := range rows {
			l := first[rows[i].Value]
			slices.Sort(l)
			rows[i].FirstP50 = percentile(l, 50)
		}
		slices.SortStableFunc(rows, func(a, b Breakdown) int { return strings.Compare(a.Value, b.Value) })
		if f.name == "size" {
			order := []string{"<16px", "16-25px", "26-35px", "36-55px", "56-99px", "100px+"}
			slices.SortStableFunc(rows, func(a, b Breakdown) int { return slices.Index(order, a.Value) - slices.Index(order, b.Value) })
		}
		out = append(out, rows...)
	}
	return out
}

func (r Report) printBreakdown(w io.Writer) {
	bs := r.Breakdowns()
	if len(bs) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "by\tvalue\trecall\tfalse YES\tfirst decision p50")
	for _, b := range bs {
		rec := "-"
		if b.Positives > 0 {
			rec = fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(b.Hits)/float64(b.Positives), b.Hits, b.Positives)
		}
		fy := "-"
		if b.Negatives > 0 {
			fy = fmt.Sprintf("%d of %d", b.FalseYes, b.Negatives)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", b.Facet, b.Value, rec, fy, ms(b.FirstP50))
	}
}

// JoinReports joins reports of parts of one set run side by side: counts
// add up, latencies are pooled, Elapsed is the longest part's.
func JoinReports(rs ...Report) Report {
	var out Report
	negatives := 0
	var lat, first []time.Duration
	for _, r := range rs {
		if out.Backend == "" {
			out.Backend = r.Backend
		}
		if out.Model == "" {
			out.Model = r.Model
		}
		out.Skipped += r.Skipped
		out.Correct += r.Correct
		out.FalseYes += r.FalseYes
		out.FalseNo += r.FalseNo
		out.Positives += r.Positives
		out.Errors += r.Errors
		out.Unparsed += r.Unparsed
		out.CostUSD += r.CostUSD
		out.Unpriced += r.Unpriced
		out.Elapsed = max(out.Elapsed, r.Elapsed)
		out.PerCase = append(out.PerCase, r.PerCase...)
		for _, c := range r.PerCase {
			if !c.Expect {
				negatives++
			}
			lat = append(lat, c.Latency)
			if c.First {
				first = append(first, c.Latency)
			}
		}
	}
	out.N = len(out.PerCase)
	out.Frames = len(first)
	if out.N > 0 {
		out.Accuracy = float64(out.Correct) / float64(out.N)
	}
	if negatives > 0 {
		out.FalseYesRate = float64(out.FalseYes) / float64(negatives)
	}
	if out.Positives > 0 {
		out.Recall = float64(out.Positives-out.FalseNo-countErr(out.PerCase, true)) / float64(out.Positives)
	}
	slices.Sort(lat)
	slices.Sort(first)
	out.P50, out.P90, out.P99 = percentile(lat, 50), percentile(lat, 90), percentile(lat, 99)
	out.FirstP50, out.FirstP90 = percentile(first, 50), percentile(first, 90)
	return out
}
