package ocr_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/ocr/ocrtest"
)

// BenchmarkOCRWholeScreen: an xterm filling a 1280x720 screen with 28 lines
// of text, then one more line. Each iteration reads the second page whole
// (RecognizeFrame) and by its changed rows against the first
// (RecognizeChanged), the cache off, and reports both p50s: the OCR
// judge's latency on the whole screen before and after reading only what
// changed.
func BenchmarkOCRWholeScreen(b *testing.B) {
	d := ocrtest.StartXvfb(b, 1280, 720)
	var lines strings.Builder
	for i := 1; i <= 28; i++ {
		fmt.Fprintf(&lines, "line %02d compiling module number %d of the build\\n", i, i)
	}
	m := d.Xterm(b, "130x32+0+0", "black", "white", []string{"-fa", "DejaVu Sans Mono", "-fs", "11"},
		`printf '`+lines.String()+`'; touch "$ACU_MARK"; sleep 2; printf 'Export finished\n'; touch "$ACU_MARK.2"; exec sleep 600`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	f1 := d.WaitSettled(ctx, b, m)
	f2 := d.WaitSettled(ctx, b, m+".2")
	e, err := ocr.New(ocr.Options{CacheSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	_, snap, _, err := e.RecognizeChanged(ctx, f1, nil)
	if err != nil {
		b.Fatal(err)
	}
	var whole, changed []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		r, err := e.RecognizeFrame(ctx, f2)
		whole = append(whole, time.Since(t0))
		if err != nil || !strings.Contains(r.Text(), "finished") {
			b.Fatalf("whole read: %v %q", err, r.Text())
		}
		t0 = time.Now()
		r, _, st, err := e.RecognizeChanged(ctx, f2, snap)
		changed = append(changed, time.Since(t0))
		if err != nil || st.Full || !strings.Contains(r.Text(), "finished") || !strings.Contains(r.Text(), "compiling") {
			b.Fatalf("changed read: %+v %v %q", st, err, r.Text())
		}
	}
	p50 := func(ds []time.Duration) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds()) / 1000
	}
	b.ReportMetric(p50(whole), "whole_p50_ms")
	b.ReportMetric(p50(changed), "changed_p50_ms")
}
