// Command pipeline times acu's frame pipeline (capture -> resize to the max
// dimension -> JPEG) on one display, every frame read anew, and writes the
// same per-stage figures as ../shared/bench/reference_pipeline.py so that
// run.sh can compare the two side by side. It also times a capture of a
// static screen (cached) and one after a small change (damaged: only the
// rows XDamage reported are read).
//
//	go run ./bench/pipeline -display :199 -frames 100 -json acu.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
)

type stat struct {
	Median float64 `json:"median"`
	P10    float64 `json:"p10"`
	P90    float64 `json:"p90"`
	Min    float64 `json:"min"`
}

func stats(v []float64) stat {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return stat{Median: med, P10: s[(n-1)/10], P90: s[(n-1)*9/10], Min: s[0]}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}

func run() error {
	dpy := flag.String("display", "", "X display, e.g. :199 (required)")
	frames := flag.Int("frames", 100, "frames to time")
	warmup := flag.Int("warmup", 5, "frames before timing")
	damageWarmup := flag.Int("damage-warmup", 50, "small changes captured before timing the damaged captures (a running daemon's heap has grown to hold a busy display's recycled buffers; a new process's first frames pay page faults for it)")
	maxDim := flag.Int("max-dim", 960, "long side of the JPEG")
	quality := flag.Int("quality", 72, "JPEG quality")
	mode := flag.String("resample", "exact", "exact (Pillow-identical) or fast")
	noSHM := flag.Bool("no-shm", false, "capture with GetImage")
	out := flag.String("json", "", "write results here")
	save := flag.String("save", "", "write the last JPEG here")
	keep := flag.Bool("keep", false, "drop each frame without releasing it (its buffer comes back only through the collector), as before frames were released")
	flag.Parse()
	if *dpy == "" || *frames < 1 {
		return fmt.Errorf("want -display :N and -frames >= 1")
	}
	opts := capture.Options{NoCache: true, NoSHM: *noSHM}
	switch *mode {
	case "exact":
		opts.Resample = frame.Exact
	case "fast":
		opts.Resample = frame.Fast
	default:
		return fmt.Errorf("-resample %q: want exact or fast", *mode)
	}
	h, err := capture.NewHub(opts)
	if err != nil {
		return err
	}
	defer h.Close()
	ctx := context.Background()
	t := map[string][]float64{}
	var sizes []float64
	var f *frame.Frame
	var jpg []byte
	for i := range *warmup + *frames {
		t0 := time.Now()
		f, err = h.Capture(ctx, *dpy, capture.Target{})
		if err != nil {
			return err
		}
		t1 := time.Now()
		jpg, err = f.JPEG(*maxDim, *quality)
		if err != nil {
			return err
		}
		if !*keep {
			f.Release() // done with its pixels, as a live view is once it has the JPEG
		}
		t2 := time.Now()
		if i >= *warmup {
			ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
			t["capture"] = append(t["capture"], ms(t1.Sub(t0)))
			t["encode"] = append(t["encode"], ms(t2.Sub(t1)))
			t["total"] = append(t["total"], ms(t2.Sub(t0)))
			sizes = append(sizes, float64(len(jpg)))
		}
	}
	// A static screen through the normal (cached) path: what a frame whose
	// content did not change costs a job.
	cached, err := capture.NewHub(capture.Options{Resample: opts.Resample})
	if err != nil {
		return err
	}
	defer cached.Close()
	for i := range *warmup + *frames {
		t0 := time.Now()
		cf, err := cached.Capture(ctx, *dpy, capture.Target{})
		if err != nil {
			return err
		}
		if !*keep {
			cf.Release()
		}
		if i >= *warmup {
			t["cached_capture"] = append(t["cached_capture"], float64(time.Since(t0).Nanoseconds())/1e6)
		}
	}
	// A screen where a small region changes before every frame (a progress
	// bar, a clock, a line of text) through the normal path: XDamage
	// reports the rows, only they are read (what a live view, a recording
	// or a wait pays per changed frame), timed after -damage-warmup such
	// captures, as in a daemon that has been running.
	if t["damaged_capture"], err = damagedCaptures(ctx, *dpy, opts.Resample, *damageWarmup, *frames, *keep); err != nil {
		return err
	}
	if *save != "" {
		if err := os.WriteFile(*save, jpg, 0o644); err != nil {
			return err
		}
	}
	res := map[string]any{"display": *dpy, "w": f.W, "h": f.H, "frames": *frames, "quality": *quality,
		"resample": *mode, "shm": !*noSHM, "released": !*keep, "jpeg_bytes_median": stats(sizes).Median, "samples": t,
		"encoder": frame.JPEGEncoder}
	fmt.Printf("%s %dx%d acu resample=%s frames=%d jpeg=%.0f B encoder=%s\n", *dpy, f.W, f.H, *mode, *frames, stats(sizes).Median, frame.JPEGEncoder)
	for _, k := range []string{"capture", "encode", "total", "cached_capture", "damaged_capture"} {
		s := stats(t[k])
		res[k] = s
		fmt.Printf("  %-14s median %7.2f ms   p10 %7.2f  p90 %7.2f  min %7.2f\n", k, s.Median, s.P10, s.P90, s.Min)
	}
	if *out != "" {
		b, err := json.Marshal([]any{res})
		if err != nil {
			return err
		}
		return os.WriteFile(*out, b, 0o644)
	}
	return nil
}

// damagedCaptures times captures, each after a 200x40 window of its own
// at the bottom left of the screen took a new colour (not timed; the fill
// is drawn before the capture starts).
func damagedCaptures(ctx context.Context, dpy string, mode frame.Mode, warmup, frames int, keep bool) ([]float64, error) {
	c, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", dpy, err)
	}
	defer c.Close()
	scr := xproto.Setup(c).DefaultScreen(c)
	win, err := xproto.NewWindowId(c)
	if err != nil {
		return nil, err
	}
	if err := xproto.CreateWindowChecked(c, scr.RootDepth, win, scr.Root, 0, int16(scr.HeightInPixels)-40, 200, 40, 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwOverrideRedirect, []uint32{0, 1}).Check(); err != nil {
		return nil, fmt.Errorf("create the changing window: %w", err)
	}
	defer xproto.DestroyWindow(c, win)
	xproto.MapWindow(c, win)
	h, err := capture.NewHub(capture.Options{Resample: mode})
	if err != nil {
		return nil, err
	}
	defer h.Close()
	var out []float64
	for i := range warmup + frames {
		xproto.ChangeWindowAttributes(c, win, xproto.CwBackPixel, []uint32{uint32(i*0x010305) & 0xffffff})
		xproto.ClearArea(c, false, win, 0, 0, 0, 0)
		if _, err := xproto.GetInputFocus(c).Reply(); err != nil { // drawn
			return nil, err
		}
		t0 := time.Now()
		f, err := h.Capture(ctx, dpy, capture.Target{})
		if err != nil {
			return nil, err
		}
		if !keep {
			f.Release()
		}
		if i >= warmup {
			out = append(out, float64(time.Since(t0).Nanoseconds())/1e6)
		}
	}
	if st := h.StatsFor(dpy); st.DamageReads == 0 {
		return nil, fmt.Errorf("no capture read only the damaged rows: %+v", st)
	}
	return out, nil
}
