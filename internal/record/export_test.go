package record

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"path/filepath"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
)

// TestRunStills: an exported animation shows each judged frame until the
// next one, clamped to 0.5..5 s, the last for 3 s; keeps the newest
// MaxExportFrames; and a run with none is ErrNoFrames. AnimateGIF gives
// one image a still, with its time.
func TestRunStills(t *testing.T) {
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var buf bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 8, 6))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	reg := runs.New(db, runs.Options{})
	ids := map[string]string{}
	for _, name := range []string{"run_a", "run_b", "run_none"} {
		run, err := reg.Start(t.Context(), runs.StartOptions{Kind: "wait"})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = run.ID
	}
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	put := func(run string, i int, at time.Time) {
		t.Helper()
		f := store.Frame{Hash: fmt.Sprintf("%s-%04d", run, i), JPEG: buf.Bytes(), Width: 8, Height: 6}
		if err := db.PutRunFrame(t.Context(), ids[run], f, at); err != nil {
			t.Fatal(err)
		}
	}
	// Gaps of 100 ms (shown 0.5 s), 2 s (2 s), 60 s (5 s); the last 3 s.
	for i, d := range []time.Duration{0, 100 * time.Millisecond, 2100 * time.Millisecond, 62100 * time.Millisecond} {
		put("run_a", i, t0.Add(d))
	}
	stills, err := RunStills(t.Context(), db, ids["run_a"])
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{500 * time.Millisecond, 2 * time.Second, 5 * time.Second, 3 * time.Second}
	if len(stills) != len(want) {
		t.Fatalf("RunStills = %d stills, want %d", len(stills), len(want))
	}
	for i, s := range stills {
		if s.Show != want[i] || s.Hash != fmt.Sprintf("run_a-%04d", i) {
			t.Errorf("still %d = %s shown %s, want run_a-%04d shown %s", i, s.Hash, s.Show, i, want[i])
		}
	}
	b, err := AnimateGIF(stills)
	if err != nil {
		t.Fatal(err)
	}
	anim, err := gif.DecodeAll(bytes.NewReader(b))
	if err != nil || len(anim.Image) != 4 || anim.Delay[0] != 50 || anim.Delay[3] != 300 {
		t.Errorf("AnimateGIF: %v, %d images, delays %v; want 4, 50 and 300 hundredths first and last", err, len(anim.Image), anim.Delay)
	}

	for i := range MaxExportFrames + 5 {
		put("run_b", i, t0.Add(time.Duration(i)*time.Second))
	}
	if stills, err = RunStills(t.Context(), db, ids["run_b"]); err != nil || len(stills) != MaxExportFrames || stills[0].Hash != "run_b-0005" {
		t.Errorf("RunStills of %d frames = %d stills from %q, %v; want the newest %d", MaxExportFrames+5, len(stills), stills[0].Hash, err, MaxExportFrames)
	}

	if _, err := RunStills(t.Context(), db, ids["run_none"]); !errors.Is(err, ErrNoFrames) {
		t.Errorf("RunStills of a run without frames = %v, want ErrNoFrames", err)
	}
}
