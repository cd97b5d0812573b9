package capture

import (
	"fmt"
	"image/color"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func TestRuns(t *testing.T) {
	set := func(n int, bands ...int) []uint64 {
		s := make([]uint64, (n+63)/64)
		for _, b := range bands {
			s[b/64] |= 1 << (b % 64)
		}
		return s
	}
	for _, c := range []struct {
		n     int
		bands []int
		want  []bandRun
	}{
		{45, nil, nil},
		{45, []int{0}, []bandRun{{0, 1}}},
		{45, []int{44}, []bandRun{{44, 45}}},
		{45, []int{3, 4, 5}, []bandRun{{3, 6}}},
		{45, []int{3, 5}, []bandRun{{3, 6}}},         // a one-band gap is read through
		{45, []int{3, 6}, []bandRun{{3, 4}, {6, 7}}}, // a two-band gap is not
		{130, []int{62, 63, 64, 65, 129}, []bandRun{{62, 66}, {129, 130}}},
		{68, []int{0, 3, 6, 9, 12, 15, 18, 21, 24, 27}, []bandRun{{0, 1}, {3, 4}, {6, 7}, {9, 10}, {12, 13}, {15, 16}, {18, 19}, {21, 28}}},
	} {
		var buf [maxRuns]bandRun
		got := runs(set(c.n, c.bands...), c.n, &buf)
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("runs(%d bands of %d) = %v, want %v", len(c.bands), c.n, got, c.want)
		}
	}
	d := newDirtyBands(100) // 7 bands, the last 4 rows high
	d.mark(-5, 3)
	d.mark(97, 500)
	d.mark(40, 40) // empty
	got := make([]uint64, 1)
	d.take(got)
	if got[0] != 1|1<<6 {
		t.Errorf("marked rows -5..2 and 97..499 of 100: bands %b, want 1000001", got[0])
	}
	d.take(got)
	if got[0] != 0 {
		t.Errorf("a second take = %b, want nothing", got[0])
	}
}

// TestDamageReadsMatchWholeReads: on a screen that changes a little between
// captures (windows filled, moved, raised, unmapped, a pixel set, text
// drawn by xterm), each frame from a read of the damaged rows equals, pixel
// for pixel and in hash, an independent whole read of the screen; and most
// captures were such reads.
//
// whole: the same steps with every read whole (NoCache), where a band whose
// bytes equal the cached frame's keeps its hash and the others are hashed
// again: the frames are right, and most bands were kept.
func TestDamageReadsMatchWholeReads(t *testing.T) {
	t.Run("damage", func(t *testing.T) { testReadsMatchOnce(t, Options{}) })
	t.Run("whole", func(t *testing.T) { testReadsMatchOnce(t, Options{NoCache: true}) })
	if frame.FastHash() {
		// The Go hash's path: bands compared by their bytes.
		t.Run("whole-go-hash", func(t *testing.T) {
			defer frame.UseFastHash(frame.UseFastHash(false))
			testReadsMatchOnce(t, Options{NoCache: true})
		})
		t.Run("damage-go-hash", func(t *testing.T) {
			defer frame.UseFastHash(frame.UseFastHash(false))
			testReadsMatchOnce(t, Options{})
		})
	}
}

func testReadsMatchOnce(t *testing.T, opts Options) {
	const w, h = 640, 400
	dpy := testx.StartXvfb(t, xvfb.Options{Width: w, Height: h})
	a := testx.NewWindow(t, dpy, testx.Spec{Title: "a", X: 10, Y: 10, W: 120, H: 60, Fill: color.RGBA{R: 200, A: 255}})
	b := testx.NewWindow(t, dpy, testx.Spec{Title: "b", X: 300, Y: 200, W: 200, H: 150, Pattern: pattern})
	testx.StartXterm(t, dpy, testx.XtermSpec{Geometry: "40x5+0+300", Command: []string{"sh", "-c", "i=0; while :; do i=$((i+1)); echo line $i; sleep 0.05; done"}})
	hub := newHub(t, opts)
	check := func(step string) {
		t.Helper()
		// Frames dropped by earlier steps go back to the pool, so this
		// capture may build on a recycled buffer (frameBuf).
		runtime.GC()
		time.Sleep(time.Millisecond)
		got, err := hub.Capture(t.Context(), dpy, Target{})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if sum := frame.Hash(got.Pix, got.W, got.H, got.Stride); sum != got.Hash {
			t.Fatalf("%s: the frame's hash %016x is not the hash of its pixels %016x", step, got.Hash, sum)
		}
		// The xterm keeps printing: retry until a whole read sees the
		// same screen as the capture (or the capture is plainly wrong).
		for try := 0; ; try++ {
			want, err := Once(t.Context(), dpy, Target{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if want.Hash == got.Hash {
				if err := samePixels(got.Pix, got.Stride, want.Pix, want.Stride, w, h); err != nil {
					t.Fatalf("%s: equal hashes, %v", step, err)
				}
				return
			}
			if try == 20 {
				t.Fatalf("%s: the capture differs from 20 whole reads taken after it", step)
			}
			if got, err = hub.Capture(t.Context(), dpy, Target{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	check("first")
	src, _ := hub.source(dpy)
	for i := 0; i < 40; i++ {
		if i%5 == 4 {
			// A whole read (as every verifyEvery-th is) between damaged
			// ones: later frames built on buffers older than it are
			// right too.
			src.mu.Lock()
			src.sinceVerify = verifyEvery
			src.mu.Unlock()
		}
		switch i % 6 {
		case 0:
			a.Fill(color.RGBA{R: uint8(i * 5), G: 100, A: 255})
		case 1:
			a.Move(10+i*7, 10+i*3)
		case 2:
			b.SetPixel(i, i, color.RGBA{B: 255, A: 255})
		case 3:
			a.Raise()
		case 4:
			b.Move(300-i*3, 200-i*2)
		case 5:
			b.Raise()
		}
		check(fmt.Sprintf("step %d", i))
	}
	a.Unmap()
	check("unmapped")
	st := hub.StatsFor(dpy)
	if opts.NoCache {
		// Each step changes a few rows (the xterm, a window): most bands
		// of each whole read are the cached frame's.
		if st.DamageReads != 0 || st.KeptBands < st.WholeBands/2 || st.Recycled < 10 {
			t.Errorf("%d of %d bands read whole kept their hash (want most), %d damage reads (want 0), %d recycled a buffer: %+v",
				st.KeptBands, st.WholeBands, st.DamageReads, st.Recycled, st)
		}
		return
	}
	if st.DamageReads < 20 || st.Recycled < 10 {
		t.Errorf("%d of %d reads were of damaged rows only and %d recycled a buffer, want most: %+v", st.DamageReads, st.Captures, st.Recycled, st)
	}
}

// TestDamageCheckedByWholeReads: a change damage did not report (the
// record cleared behind the capture's back) is found by the whole read
// that follows verifyEvery damaged reads; that read's frame is right, and
// the display reads whole screens from then on.
func TestDamageCheckedByWholeReads(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 240})
	win := testx.NewWindow(t, dpy, testx.Spec{Title: "w", X: 0, Y: 0, W: 100, H: 100, Fill: color.RGBA{R: 10, A: 255}})
	other := testx.NewWindow(t, dpy, testx.Spec{Title: "o", X: 150, Y: 150, W: 50, H: 50, Fill: color.RGBA{G: 10, A: 255}})
	hub := newHub(t, Options{})
	capture := func() *frame.Frame {
		t.Helper()
		f, err := hub.Capture(t.Context(), dpy, Target{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	capture()
	s, _ := hub.source(dpy)
	// A change whose damage is lost: the window's rows are not read.
	win.Fill(color.RGBA{R: 250, A: 255})
	if err := s.syncEvents(t.Context(), s.conn); err != nil {
		t.Fatal(err)
	}
	s.dirty.Load().take(make([]uint64, 1))
	other.Fill(color.RGBA{G: 20, A: 255}) // a reported change: a damaged read
	f := capture()
	if px := f.Pix[50*f.Stride+50*4+2]; px != 10 || s.damageOff {
		t.Fatalf("the unreported change was read (red %d) before the check, or damage is off already (%v): the test does not test the check", px, s.damageOff)
	}
	var last *frame.Frame
	for i := 0; i <= verifyEvery && !s.damageOff; i++ {
		other.Fill(color.RGBA{G: uint8(30 + i), A: 255})
		last = capture()
	}
	if !s.damageOff {
		t.Fatalf("%d reads after a change damage missed, damage is still trusted", verifyEvery+1)
	}
	if px := last.Pix[50*last.Stride+50*4+2]; px != 250 {
		t.Errorf("the checking read's frame shows red %d at the missed change, want 250", px)
	}
	n := hub.StatsFor(dpy).DamageReads
	other.Fill(color.RGBA{G: 200, A: 255})
	capture()
	if got := hub.StatsFor(dpy).DamageReads; got != n {
		t.Errorf("after damage missed a change, a capture still read damaged rows only (%d -> %d)", n, got)
	}
}
