package elements_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/ocr"
)

// benchDesktop runs a zenity list dialog with 60 rows of two columns: a
// real GTK window with a few hundred accessible objects.
func benchDesktop(b *testing.B) *desktop {
	b.Helper()
	d := newDesktop(b)
	args := []string{"--list", "--title=Acu Files", "--width=700", "--height=600", "--column=Name", "--column=Size"}
	for i := 0; i < 60; i++ {
		args = append(args, fmt.Sprintf("report-%02d.txt", i), fmt.Sprintf("%d KB", 10+i*7))
	}
	app := d.session.StartApp(b, "zenity", args...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := atspitest.WaitApp(ctx, d.tree, "zenity"); err != nil {
		b.Fatalf("%v; zenity stderr: %s", err, app.Stderr())
	}
	return d
}

func benchExtract(b *testing.B, d *desktop, o elements.Options) {
	x, err := elements.New(o)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := x.Extract(ctx); err != nil { // warm: connections, lazily built accessibles
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var nodes, els, text int
	for i := 0; i < b.N; i++ {
		m, err := x.Extract(ctx)
		if err != nil {
			b.Fatal(err)
		}
		nodes += m.Timings.TreeNodes
		els += len(m.Elements)
		text += len(m.Text())
	}
	b.StopTimer()
	b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
	b.ReportMetric(float64(els)/float64(b.N), "elements/op")
	b.ReportMetric(float64(text)/float64(b.N), "text_bytes/op")
}

func BenchmarkExtract(b *testing.B) {
	d := benchDesktop(b)
	b.Run("tree", func(b *testing.B) {
		benchExtract(b, d, elements.Options{Display: d.dpy, Capture: d.hub, Tree: d.tree, SettleMax: -1})
	})
	b.Run("tree+settle", func(b *testing.B) {
		benchExtract(b, d, elements.Options{Display: d.dpy, Capture: d.hub, Tree: d.tree})
	})
	eng, err := ocr.New(ocr.Options{CacheSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("tree+ocr", func(b *testing.B) {
		benchExtract(b, d, elements.Options{Display: d.dpy, Capture: d.hub, Tree: d.tree, OCR: eng, SettleMax: -1})
	})
	b.Run("tree+ocr_cached", func(b *testing.B) {
		benchExtract(b, d, elements.Options{Display: d.dpy, Capture: d.hub, Tree: d.tree, OCR: d.ocr, SettleMax: -1})
	})
}

// BenchmarkIteration is the per-iteration bookkeeping on a 200-element map
// beyond extraction: text form, diff, layout hash and tracker.
func BenchmarkIteration(b *testing.B) {
	d := benchDesktop(b)
	x, err := elements.New(elements.Options{Display: d.dpy, Capture: d.hub, Tree: d.tree, SettleMax: -1})
	if err != nil {
		b.Fatal(err)
	}
	m1, err := x.Extract(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	m2, err := x.Extract(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var tr elements.Tracker
	for i := 0; i < b.N; i++ {
		_ = m2.Text()
		tr.Observe(m1)
		tr.Observe(m2)
	}
	b.ReportMetric(float64(len(m2.Elements)), "elements")
}
