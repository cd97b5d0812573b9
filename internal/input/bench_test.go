package input

import (
	"context"
	"testing"
)

// Benchmarks measure acu's cost per action against a local Xvfb with the
// delays turned off: the XTEST requests and one round trip per batch.

func BenchmarkClick(b *testing.B) {
	d := newBenchDevice(b, Options{ClickDelay: -1})
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := d.Click(ctx, i%1001, 500); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDrag20Steps(b *testing.B) {
	d := newBenchDevice(b, Options{DragSteps: 20, DragStepDelay: -1})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Drag(ctx, 100, 100, 900, 900); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkType32 types 32 characters, shifted and unshifted, per op.
func BenchmarkType32(b *testing.B) {
	d := newBenchDevice(b, Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Type(ctx, "Hello, World! @# the quick fox.."); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTypeRemapped types one character the keymap lacks: remap, tap,
// restore (RemapHold off).
func BenchmarkTypeRemapped(b *testing.B) {
	d := newBenchDevice(b, Options{RemapHold: -1})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Type(ctx, "€"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKeyCombo(b *testing.B) {
	d := newBenchDevice(b, Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Key(ctx, "ctrl+shift+F5"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseKeys(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseKeys("ctrl+shift+t"); err != nil {
			b.Fatal(err)
		}
	}
}

func newBenchDevice(b *testing.B, opts Options) *Device {
	b.Helper()
	d := newTestDevice(b, fullArea, opts)
	fullWindow(b) // a focused window receives the input, as on a desktop
	return d
}
