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
		if f, ok := frames[c.Image]; ok {
			c.Frame = f
			continue
		}
		f, err := loadFrame(fsys, c.Image)
		if err != nil {
			return nil, fmt.Errorf("load judge benchmark set %s: case %s: %w", where, c.Name, err)
		}
		frames[c.Image], c.Frame = f, f
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
	Errors       int // no verdict (counted as incorrect)
	Unparsed     int
	P50, P90     time.Duration
	P99          time.Duration
	CostUSD      float64
	Unpriced     int // calls whose cost is unknown, left out of CostUSD
	Elapsed      time.Duration
	PerCase      []CaseResult
}

// RunBench asks b every case in turn (sequentially, so latencies are not
// skewed by queueing) and reports how it did. Cases b cannot decide (Check
// fails) are skipped. It stops early when ctx ends.
func RunBench(ctx context.Context, b Backend, set []Case) Report {
	r := Report{Backend: b.Name()}
	start := time.Now()
	var lat []time.Duration
	negatives := 0
	for _, c := range set {
		if ctx.Err() != nil {
			break
		}
		if b.Check(c.Condition) != nil {
			r.Skipped++
			continue
		}
		cr := CaseResult{Name: c.Name, Condition: c.Condition, Expect: c.Expect}
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
		}
		if cr.Correct {
			r.Correct++
		}
		r.CostUSD += cr.CostUSD
		lat = append(lat, cr.Latency)
		r.PerCase = append(r.PerCase, cr)
	}
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
	fmt.Fprintf(tw, "errors\t%d\n", r.Errors)
	fmt.Fprintf(tw, "unparsed replies\t%d\n", r.Unparsed)
	fmt.Fprintf(tw, "latency p50/p90/p99\t%s / %s / %s\n", ms(r.P50), ms(r.P90), ms(r.P99))
	if r.Unpriced > 0 {
		fmt.Fprintf(tw, "cost\tunknown: %d of %d calls have no price (set ACU_MODEL_PRICES); $%.6f known\n", r.Unpriced, r.N, r.CostUSD)
	} else {
		fmt.Fprintf(tw, "cost\t$%.6f total, $%.6f per call\n", r.CostUSD, r.CostUSD/float64(max(1, r.N)))
	}
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
