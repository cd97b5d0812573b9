package capture

import (
	"fmt"
	"image/color"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"golang.org/x/sys/unix"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// benchDisplay starts an Xvfb of the given size with realistic content:
// text-filled xterms and a photo-like noisy window.
func benchDisplay(b *testing.B, w, h int) string {
	b.Helper()
	dpy := testx.StartXvfb(b, xvfb.Options{Width: w, Height: h})
	noise := uint32(7)
	testx.NewWindow(b, dpy, testx.Spec{Title: "photo", X: w - 730, Y: 10, W: 720, H: 480, Pattern: func(x, y int) color.RGBA {
		noise = noise*1664525 + 1013904223
		n := uint8(noise >> 27)
		return color.RGBA{uint8(x/3) + n, uint8(y/2) + n, uint8((x+y)/4) ^ n, 0xff}
	}})
	testx.StartXterm(b, dpy, testx.XtermSpec{Geometry: "110x40+5+5", Command: []string{"sh", "-c", "ls -lR /usr/share | head -400; exec sleep 100000"}})
	testx.StartXterm(b, dpy, testx.XtermSpec{Geometry: fmt.Sprintf("90x28+%d+%d", w/3, h/3), Args: []string{"-fa", "DejaVu Sans Mono", "-fs", "10"},
		Command: []string{"sh", "-c", "ls -l /usr/bin | head -300; exec sleep 100000"}})
	return dpy
}

// benchHub returns a hub with opts, closed when b ends, that has captured
// dpy once (connection, segment and damage set up).
func benchHub(b *testing.B, dpy string, opts Options) *Hub {
	b.Helper()
	h, err := NewHub(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	mustCapture(b, h, dpy)
	return h
}

// mustCapture captures dpy's screen or fails b.
func mustCapture(b *testing.B, h *Hub, dpy string) *frame.Frame {
	b.Helper()
	f, err := h.Capture(b.Context(), dpy, Target{})
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkCapture reads the whole screen each iteration (no cache), with
// MIT-SHM and with GetImage; the figure is capture + privacy-free hash.
// Each frame is released once taken, as a live view does ("shm",
// "getimage"), or only dropped ("shm-kept": its buffer comes back when the
// collector finds it unreferenced, or not at all).
func BenchmarkCapture(b *testing.B) {
	for _, size := range [][2]int{{1280, 720}, {1920, 1080}} {
		dpy := benchDisplay(b, size[0], size[1])
		for _, method := range []string{"shm", "shm-kept", "getimage"} {
			b.Run(fmt.Sprintf("%s/%dx%d", method, size[0], size[1]), func(b *testing.B) {
				h := benchHub(b, dpy, Options{NoCache: true, NoSHM: method == "getimage"})
				b.ReportAllocs()
				b.SetBytes(int64(size[0] * size[1] * 4))
				b.ResetTimer()
				cpu := startCPU(b)
				for b.Loop() {
					f := mustCapture(b, h, dpy)
					if method != "shm-kept" {
						f.Release()
					}
				}
				cpu.report(b)
				st := h.StatsFor(dpy)
				b.ReportMetric(float64(st.Recycled)/float64(st.Captures), "recycled/read")
			})
		}
	}
}

// BenchmarkCaptureCached is a Capture of a static screen: the cached frame
// after one marker round trip proves no damage arrived.
func BenchmarkCaptureCached(b *testing.B) {
	// No xterm here: a blinking cursor is a real change.
	dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
	testx.NewWindow(b, dpy, testx.Spec{Title: "static", X: 10, Y: 10, W: 600, H: 400, Pattern: pattern})
	h := benchHub(b, dpy, Options{})
	b.ReportAllocs()
	for b.Loop() {
		mustCapture(b, h, dpy)
	}
}

// BenchmarkPipeline is capture -> resize to 960 -> JPEG q72, every frame
// read anew (what bench/pipeline compares with the reference).
func BenchmarkPipeline(b *testing.B) {
	for _, size := range [][2]int{{1280, 720}, {1920, 1080}} {
		dpy := benchDisplay(b, size[0], size[1])
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			h := benchHub(b, dpy, Options{NoCache: true})
			b.ReportAllocs()
			for b.Loop() {
				f := mustCapture(b, h, dpy)
				if _, err := f.JPEG(960, 72); err != nil {
					b.Fatal(err)
				}
				f.Release()
			}
		})
	}
}

// BenchmarkCaptureUnchanged is a Capture after damage over the whole screen
// whose pixels turn out unchanged (a window redrawn as it was): screen read
// + hash, no copy, no allocation of a frame.
func BenchmarkCaptureUnchanged(b *testing.B) {
	for _, size := range [][2]int{{1280, 720}, {1920, 1080}} {
		dpy := testx.StartXvfb(b, xvfb.Options{Width: size[0], Height: size[1]})
		testx.NewWindow(b, dpy, testx.Spec{Title: "static", X: 10, Y: 10, W: 600, H: 400, Pattern: pattern})
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			h := benchHub(b, dpy, Options{})
			s, _ := h.source(dpy)
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				// As if damage had arrived for every row.
				s.dirty.Load().mark(0, size[1])
				s.seq.Add(1)
				mustCapture(b, h, dpy)
			}
			cpu.report(b)
			if st := h.StatsFor(dpy); st.Unchanged == 0 {
				b.Fatalf("no unchanged reads: %+v", st)
			}
		})
	}
}

// BenchmarkCaptureDamaged is a Capture after a change to part of the
// screen, as a live view, a recording or a wait sees it: XDamage reports
// the rows, only they are read and hashed, and the frame is copied out of
// the segment. "small" changes a 200x40 window (a progress bar, a clock,
// a line of text), "full" a window over the whole screen (every row).
// The change (a window's background colour, cleared, from another X
// connection; no allocation in this process) is not timed. The frames are
// released once taken, or only dropped ("-kept"), as in BenchmarkCapture.
func BenchmarkCaptureDamaged(b *testing.B) {
	for _, size := range [][2]int{{1280, 720}, {1920, 1080}} {
		dpy := benchDisplay(b, size[0], size[1])
		for _, c := range []struct {
			name string
			w, h int
		}{{"small", 200, 40}, {"full", size[0], size[1]}, {"small-kept", 200, 40}, {"full-kept", size[0], size[1]}} {
			b.Run(fmt.Sprintf("%s/%dx%d", c.name, size[0], size[1]), func(b *testing.B) {
				recolour := changingWindow(b, dpy, 0, size[1]-c.h, c.w, c.h)
				h := benchHub(b, dpy, Options{})
				b.ReportAllocs()
				i := uint32(0)
				for b.Loop() {
					b.StopTimer()
					i++
					recolour(i * 0x010305)
					b.StartTimer()
					f := mustCapture(b, h, dpy)
					if !strings.HasSuffix(c.name, "-kept") {
						f.Release()
					}
				}
				st := h.StatsFor(dpy)
				b.ReportMetric(float64(st.DamageReads)/float64(st.Captures), "damage-reads/read")
				b.ReportMetric(float64(st.Recycled)/float64(st.Captures), "recycled/read")
			})
		}
	}
}

// changingWindow maps a w x h window at x,y on dpy and returns a function
// that gives it a new background colour and returns once it is drawn.
func changingWindow(b *testing.B, dpy string, x, y, w, h int) func(rgb uint32) {
	b.Helper()
	c, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	scr := xproto.Setup(c).DefaultScreen(c)
	win, err := xproto.NewWindowId(c)
	if err != nil {
		b.Fatal(err)
	}
	if err := xproto.CreateWindowChecked(c, scr.RootDepth, win, scr.Root, int16(x), int16(y), uint16(w), uint16(h), 0,
		xproto.WindowClassInputOutput, scr.RootVisual, xproto.CwBackPixel|xproto.CwOverrideRedirect, []uint32{0, 1}).Check(); err != nil {
		b.Fatal(err)
	}
	xproto.MapWindow(c, win)
	b.Cleanup(func() { xproto.DestroyWindow(c, win) })
	return func(rgb uint32) {
		xproto.ChangeWindowAttributes(c, win, xproto.CwBackPixel, []uint32{rgb & 0xffffff})
		xproto.ClearArea(c, false, win, 0, 0, 0, 0)
		if _, err := xproto.GetInputFocus(c).Reply(); err != nil { // drawn
			b.Fatal(err)
		}
	}
}

// BenchmarkSHMGetImage is the floor under a capture: the MIT-SHM GetImage
// round trip into the connection's segment, nothing else (no hash, no
// copy, no frame).
func BenchmarkSHMGetImage(b *testing.B) {
	for _, size := range [][2]int{{1280, 720}, {1920, 1080}} {
		dpy := benchDisplay(b, size[0], size[1])
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			h := benchHub(b, dpy, Options{NoCache: true})
			s, _ := h.source(dpy)
			s.mu.Lock()
			defer s.mu.Unlock()
			b.ReportAllocs()
			b.SetBytes(int64(size[0] * size[1] * 4))
			cpu := startCPU(b)
			for b.Loop() {
				if _, viaSHM, err := s.grab(s.conn, size[0], size[1]); err != nil || !viaSHM {
					b.Fatalf("grab = %v (MIT-SHM %v)", err, viaSHM)
				}
			}
			cpu.report(b)
		})
	}
}

// cpuMark is the process's CPU time and minor page faults at the start of
// a benchmark loop. The CPU time per op (every thread of the process: the
// capture, xgb's reader and writer, the collector) moves less than wall
// time on a shared machine whose load changes; the X server's own work is
// not in it.
type cpuMark struct {
	cpu    time.Duration
	faults int64
}

func startCPU(b *testing.B) cpuMark {
	b.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return cpuMark{time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Minflt}
}

func (m cpuMark) report(b *testing.B) {
	b.Helper()
	now := startCPU(b)
	b.ReportMetric(float64(now.cpu-m.cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(now.faults-m.faults)/float64(b.N), "faults/op")
}

// BenchmarkNewMemory is why a capture that cannot recycle a buffer costs
// so much more than one that can: copying a 1280x720 frame into memory the
// process never wrote (a new anonymous mapping: a page fault per 4 KB page
// on first write), into memory already written, and the cost of faulting a
// new mapping in ahead (MAP_POPULATE) alone.
func BenchmarkNewMemory(b *testing.B) {
	const n = 1280 * 720 * 4
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	mmap := func(flags int) []byte {
		m, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE|flags)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	b.Run("copy-into-new", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			b.StopTimer()
			m := mmap(0)
			b.StartTimer()
			copy(m, src)
			b.StopTimer()
			_ = unix.Munmap(m)
			b.StartTimer()
		}
	})
	b.Run("copy-into-used", func(b *testing.B) {
		m := mmap(0)
		defer func() { _ = unix.Munmap(m) }()
		copy(m, src)
		b.SetBytes(n)
		for b.Loop() {
			copy(m, src)
		}
	})
	b.Run("populate", func(b *testing.B) {
		for b.Loop() {
			m := mmap(unix.MAP_POPULATE)
			b.StopTimer()
			_ = unix.Munmap(m)
			b.StartTimer()
		}
	})
}

// BenchmarkLivePaceHeap captures a 1280x720 screen whose 200x40 window
// changes 30 times a second and encodes each frame to JPEG, as a live view
// does (releasing each frame once encoded), for 20 s, and reports the Go
// heap's size at 5 s and at the end: a display read continuously must not
// make it grow (it did, 107 -> 191 MB, before the recycled buffers were
// bounded).
func BenchmarkLivePaceHeap(b *testing.B) {
	dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 720})
	recolour := changingWindow(b, dpy, 0, 0, 200, 40)
	h := benchHub(b, dpy, Options{})
	var at5s, end runtime.MemStats
	for b.Loop() {
		tick := time.NewTicker(time.Second / 30)
		for i := range 600 {
			<-tick.C
			recolour(uint32(i) * 0x010305)
			f := mustCapture(b, h, dpy)
			if _, err := f.JPEG(960, 72); err != nil {
				b.Fatal(err)
			}
			f.Release()
			if i == 149 {
				runtime.ReadMemStats(&at5s)
			}
		}
		tick.Stop()
	}
	runtime.ReadMemStats(&end)
	b.ReportMetric(float64(at5s.HeapSys)/(1<<20), "heap-MB-at-5s")
	b.ReportMetric(float64(end.HeapSys)/(1<<20), "heap-MB-at-20s")
	st := h.StatsFor(dpy)
	b.ReportMetric(float64(st.Recycled)/float64(st.Captures), "recycled/read")
}
