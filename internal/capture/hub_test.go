package capture

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func pattern(x, y int) color.RGBA {
	return color.RGBA{uint8(x * 7), uint8(y * 3), uint8(x ^ y), 0xff}
}

// newHub returns a hub closed at the end of the test, after which no
// goroutine of capture or display may remain.
func newHub(t *testing.T, opts Options) *Hub {
	t.Helper()
	h, err := NewHub(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close()
		checkNoLeaks(t)
	})
	return h
}

func checkNoLeaks(t *testing.T) {
	t.Helper()
	var stacks string
	for range 200 {
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		leaked := false
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "acu/internal/capture.(*") || strings.Contains(g, "acu/internal/display.(*Conn).read") {
				leaked = true
			}
		}
		if !leaked {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("goroutines left after Hub.Close:\n%s", stacks)
}

// rootImage reads the root window on a separate connection with GetImage:
// the server's own view of the screen.
func rootImage(t *testing.T, dpy string) []byte {
	t.Helper()
	c, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := xproto.Setup(c).DefaultScreen(c)
	r, err := xproto.GetImage(c, xproto.ImageFormatZPixmap, xproto.Drawable(s.Root), 0, 0, s.WidthInPixels, s.HeightInPixels, 0xffffffff).Reply()
	if err != nil {
		t.Fatal(err)
	}
	return r.Data
}

// samePixels compares visible bytes (pad bytes excluded).
func samePixels(a []byte, aStride int, b []byte, bStride int, w, h int) error {
	for y := range h {
		for x := range w {
			i, j := y*aStride+x*4, y*bStride+x*4
			if a[i] != b[j] || a[i+1] != b[j+1] || a[i+2] != b[j+2] {
				return fmt.Errorf("pixel (%d,%d) = %v, want %v", x, y, a[i:i+3], b[j:j+3])
			}
		}
	}
	return nil
}

// checkContent compares f's pixels at (ox,oy) with want (an RGBA image).
func checkContent(f *frame.Frame, ox, oy int, want *image.RGBA) error {
	b := want.Bounds()
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			i := (oy+y)*f.Stride + (ox+x)*4
			c := want.RGBAAt(x, y)
			if f.Pix[i] != c.B || f.Pix[i+1] != c.G || f.Pix[i+2] != c.R {
				return fmt.Errorf("pixel (%d,%d) = BGR %v, want RGB %v", ox+x, oy+y, f.Pix[i:i+3], c)
			}
		}
	}
	return nil
}

func mustParse(t *testing.T, s string) Target {
	t.Helper()
	tg, err := ParseTarget(s)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestCapturePixelExact(t *testing.T) {
	for _, tc := range []struct {
		name      string
		serverSHM bool
		hubNoSHM  bool
		wantSHM   bool
	}{
		{"shm", true, false, true},
		{"getimage_server_without_shm", false, false, false},
		{"getimage_forced", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480, NoSHM: !tc.serverSHM})
			w24 := testx.NewWindow(t, dpy, testx.Spec{Title: "Pattern 24", Class: "Acu", X: 13, Y: 17, W: 200, H: 150, Pattern: pattern})
			w32 := testx.NewWindow(t, dpy, testx.Spec{Title: "Pattern 32", Class: "Acu", X: 300, Y: 200, W: 160, H: 120, Depth: 32,
				Pattern: func(x, y int) color.RGBA { return color.RGBA{uint8(y), uint8(x), 0x80, 0xff} }})
			h := newHub(t, Options{NoSHM: tc.hubNoSHM})

			f, err := h.Capture(t.Context(), dpy, mustParse(t, "screen"))
			if err != nil {
				t.Fatalf("Capture(screen) = %v", err)
			}
			if f.W != 640 || f.H != 480 || f.Display != dpy || f.Target != "screen" || f.At.IsZero() {
				t.Fatalf("frame = %dx%d %q %q at %v", f.W, f.H, f.Display, f.Target, f.At)
			}
			if err := samePixels(f.Pix, f.Stride, rootImage(t, dpy), 640*4, 640, 480); err != nil {
				t.Errorf("screen vs server GetImage: %v", err)
			}
			if err := checkContent(f, 13, 17, w24.Content()); err != nil {
				t.Errorf("24-bit window in screen frame: %v", err)
			}
			if err := checkContent(f, 300, 200, w32.Content()); err != nil {
				t.Errorf("32-bit window in screen frame: %v", err)
			}
			if f.Hash != frame.Hash(f.Pix, f.W, f.H, f.Stride) {
				t.Error("frame hash does not match its pixels")
			}

			for _, w := range []*testx.Window{w24, w32} {
				target := fmt.Sprintf("window:%#x", w.ID())
				wf, err := h.Capture(t.Context(), dpy, mustParse(t, target))
				if err != nil {
					t.Fatalf("Capture(%s) = %v", target, err)
				}
				ww, wh := w.Size()
				if wf.W != ww || wf.H != wh || wf.Target != target {
					t.Errorf("window frame %dx%d %q, want %dx%d %q", wf.W, wf.H, wf.Target, ww, wh, target)
				}
				if err := checkContent(wf, 0, 0, w.Content()); err != nil {
					t.Errorf("Capture(%s): %v", target, err)
				}
			}

			cf, err := h.Capture(t.Context(), dpy, mustParse(t, "crop:25,50,500,500"))
			if err != nil {
				t.Fatal(err)
			}
			// 640*25/1000=16, 480*50/1000=24 .. 320,240
			if cf.W != 304 || cf.H != 216 || cf.Target != "crop:25,50,500,500" {
				t.Errorf("crop frame %dx%d %q, want 304x216", cf.W, cf.H, cf.Target)
			}
			sub := w24.Content().SubImage(image.Rect(3, 7, 200, 150)).(*image.RGBA)
			sub = cloneRGBA(sub)
			if err := checkContent(cf, 0, 0, sub); err != nil {
				t.Errorf("crop: %v", err)
			}

			st := h.StatsFor(dpy)
			if tc.wantSHM && (st.SHM != 1 || st.GetImage != 0) || !tc.wantSHM && (st.SHM != 0 || st.GetImage != 1) {
				t.Errorf("stats = %+v, want one read via shm=%v (the other captures reuse it)", st, tc.wantSHM)
			}

			// One changed pixel shows in the next capture.
			w24.SetPixel(10, 10, color.RGBA{R: 1, G: 2, B: 3})
			f2, err := h.Capture(t.Context(), dpy, mustParse(t, "screen"))
			if err != nil {
				t.Fatal(err)
			}
			if err := checkContent(f2, 13, 17, w24.Content()); err != nil {
				t.Errorf("after SetPixel: %v", err)
			}
			if f2.Hash == f.Hash {
				t.Error("hash unchanged after a pixel changed")
			}
		})
	}
}

func cloneRGBA(m *image.RGBA) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, m.Bounds().Dx(), m.Bounds().Dy()))
	for y := 0; y < out.Bounds().Dy(); y++ {
		for x := 0; x < out.Bounds().Dx(); x++ {
			out.SetRGBA(x, y, m.RGBAAt(m.Bounds().Min.X+x, m.Bounds().Min.Y+y))
		}
	}
	return out
}

func TestUnsupportedDepth(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 64, Height: 64, Depth: 16})
	h := newHub(t, Options{})
	_, err := h.Capture(t.Context(), dpy, Target{})
	if err == nil || !strings.Contains(err.Error(), "24- and 32-bit") {
		t.Fatalf("Capture on a 16-bit display = %v, want an error naming the supported depths", err)
	}
}

func TestNoDisplay(t *testing.T) {
	h := newHub(t, Options{})
	for _, name := range []string{"", ":4094"} {
		_, err := h.Capture(t.Context(), name, Target{})
		if err == nil || !strings.Contains(err.Error(), "acu display start") {
			t.Errorf("Capture(%q) = %v, want an error saying how to start a display", name, err)
		}
	}
}

func TestWindowTargeting(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	a := testx.NewWindow(t, dpy, testx.Spec{Title: "Editor one", Class: "Ed", X: 0, Y: 0, W: 50, H: 50})
	b := testx.NewWindow(t, dpy, testx.Spec{Title: "Editor two", Class: "Ed", X: 100, Y: 0, W: 60, H: 40})
	c := testx.NewWindow(t, dpy, testx.Spec{Title: "Mail — Inbox", Class: "Thunder", X: 200, Y: 0, W: 70, H: 30})
	h := newHub(t, Options{})

	for _, tc := range []struct {
		target string
		want   *testx.Window
	}{
		{"window:editor ONE", a},
		{"window:inbox", c},
		{"window:thunder", c}, // class when no title matches
		{fmt.Sprintf("window:%d", b.ID()), b},
		{fmt.Sprintf("window:%#x", b.ID()), b},
		{fmt.Sprintf("window:%#X", a.ID()), a},
	} {
		r, err := h.Resolve(t.Context(), dpy, mustParse(t, tc.target))
		if err != nil {
			t.Errorf("Resolve(%s) = %v", tc.target, err)
			continue
		}
		w, hh := tc.want.Size()
		x, y := tc.want.Pos()
		if r.Window.ID != tc.want.ID() || r.Rect != image.Rect(x, y, x+w, y+hh) || r.Label != fmt.Sprintf("window:%#x", tc.want.ID()) {
			t.Errorf("Resolve(%s) = %+v, want window %#x", tc.target, r, tc.want.ID())
		}
	}

	_, err := h.Resolve(t.Context(), dpy, mustParse(t, "window:nothing like it"))
	var te *TargetError
	if !errors.As(err, &te) || te.Ambiguous || len(te.Candidates) != 3 {
		t.Fatalf("Resolve(no match) = %v, want a TargetError listing 3 windows", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "Editor one") || !strings.Contains(msg, fmt.Sprintf("%#x", c.ID())) {
		t.Errorf("no-match error %q should list titles and ids", msg)
	}
	_, err = h.Capture(t.Context(), dpy, mustParse(t, "window:editor"))
	if !errors.As(err, &te) || !te.Ambiguous || len(te.Candidates) != 2 {
		t.Fatalf("Capture(ambiguous) = %v, want an ambiguous TargetError with 2 candidates", err)
	}
	if _, err := h.Watch(t.Context(), dpy, mustParse(t, "window:editor")); !errors.Is(err, ErrTarget) {
		t.Errorf("Watch(ambiguous) = %v, want ErrTarget", err)
	}

	ws, err := h.Windows(t.Context(), dpy)
	if err != nil || len(ws) != 3 {
		t.Errorf("Windows() = %v, %v; want 3", ws, err)
	}
	if w, hh, err := h.ScreenSize(t.Context(), dpy); err != nil || w != 640 || hh != 480 {
		t.Errorf("ScreenSize() = %d, %d, %v", w, hh, err)
	}
}

func TestWindowFollowsMove(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "Mover", X: 10, Y: 10, W: 80, H: 60, Pattern: pattern})
	h := newHub(t, Options{})
	tg := mustParse(t, "window:mover")
	ch, err := h.Watch(t.Context(), dpy, tg)
	if err != nil {
		t.Fatal(err)
	}
	for i, pos := range [][2]int{{10, 10}, {400, 300}, {555, 100}} {
		if i > 0 {
			w.Move(pos[0], pos[1])
			waitNotified(t, ch, "window moved")
		}
		f, err := h.Capture(t.Context(), dpy, tg)
		if err != nil {
			t.Fatal(err)
		}
		if f.W != 80 || f.H != 60 {
			t.Fatalf("at %v: frame %dx%d, want 80x60", pos, f.W, f.H)
		}
		if err := checkContent(f, 0, 0, w.Content()); err != nil {
			t.Errorf("at %v: %v", pos, err)
		}
	}
	// The watcher follows: a pixel changed at the new place notifies.
	drain(ch)
	w.SetPixel(1, 1, color.RGBA{G: 9})
	waitNotified(t, ch, "pixel in moved window")
}

func waitNotified(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: channel closed", what)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no notification", what)
	}
}

// quiet reports whether ch stays silent for a while (a bounded wait for
// absence, not a speed threshold).
func quiet(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return false
	case <-time.After(300 * time.Millisecond):
		return true
	}
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func TestDamageNotifications(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "Canvas", X: 0, Y: 0, W: 320, H: 240, Fill: color.RGBA{B: 200}})
	h := newHub(t, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	screen, err := h.Watch(ctx, dpy, mustParse(t, "screen"))
	if err != nil {
		t.Fatal(err)
	}
	// crop 0..250 of 640x480 = (0,0)-(160,120): the window's top-left quarter.
	crop, err := h.Watch(ctx, dpy, mustParse(t, "crop:0,0,250,250"))
	if err != nil {
		t.Fatal(err)
	}
	win, err := h.Watch(ctx, dpy, mustParse(t, "window:canvas"))
	if err != nil {
		t.Fatal(err)
	}
	if !quiet(screen) || !quiet(crop) || !quiet(win) {
		t.Fatal("notification from an unchanged screen")
	}

	w.SetPixel(300, 200, color.RGBA{R: 255}) // outside the crop
	waitNotified(t, screen, "screen, one pixel")
	waitNotified(t, win, "window, one pixel")
	if !quiet(crop) {
		t.Error("crop notified for a pixel outside it")
	}
	w.SetPixel(5, 5, color.RGBA{R: 255}) // inside the crop
	waitNotified(t, crop, "crop, one pixel")
	waitNotified(t, screen, "screen, second pixel")
	drain(win)

	// Many changes coalesce into one pending notification.
	for i := range 20 {
		w.SetPixel(10+i, 10, color.RGBA{G: uint8(i)})
	}
	waitNotified(t, screen, "screen, burst")
	if len(screen) != 0 {
		t.Error("more than one notification pending after a burst")
	}
	cancel()
	for _, ch := range []<-chan struct{}{screen, crop, win} {
		select {
		case _, ok := <-ch:
			for ok {
				_, ok = <-ch
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Watch channel not closed after ctx ended")
		}
	}
}

func TestConcurrentCapturesShare(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 1280, Height: 720})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "Static", X: 0, Y: 0, W: 300, H: 200, Pattern: pattern})
	h := newHub(t, Options{})
	const n = 64
	frames := make([]*frame.Frame, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			f, err := h.Capture(t.Context(), dpy, Target{})
			if err != nil {
				t.Error(err)
			}
			frames[i] = f
		})
	}
	wg.Wait()
	st := h.StatsFor(dpy)
	if st.Captures != 1 {
		t.Errorf("%d concurrent captures of a static screen read it %d times, want 1 (stats %+v)", n, st.Captures, st)
	}
	for i, f := range frames {
		if f != frames[0] {
			t.Fatalf("frame %d differs from frame 0: not shared", i)
		}
	}
	// 1000 sequential jobs on a static screen: still one read.
	for range 1000 {
		if _, err := h.Capture(t.Context(), dpy, Target{}); err != nil {
			t.Fatal(err)
		}
	}
	if st := h.StatsFor(dpy); st.Captures != 1 || st.Reused+st.Joined != n-1+1000 {
		t.Errorf("after 1000 more captures: stats %+v, want 1 read", st)
	}
	w.SetPixel(0, 0, color.RGBA{R: 7})
	f, err := h.Capture(t.Context(), dpy, Target{})
	if err != nil {
		t.Fatal(err)
	}
	if f == frames[0] || h.StatsFor(dpy).Captures != 2 {
		t.Errorf("a changed screen was not re-read: stats %+v", h.StatsFor(dpy))
	}
}

func TestPrivacyBlackout(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	pub := testx.NewWindow(t, dpy, testx.Spec{Title: "Public notes", X: 0, Y: 0, W: 100, H: 100, Pattern: pattern})
	testx.NewWindow(t, dpy, testx.Spec{Title: "My Bank — SECRET", X: 200, Y: 50, W: 120, H: 80, Fill: color.RGBA{R: 250, G: 250, B: 250}})
	testx.NewWindow(t, dpy, testx.Spec{Title: "chat", Class: "KeePassXC", X: 400, Y: 300, W: 50, H: 50, Fill: color.RGBA{R: 250}})
	h := newHub(t, Options{Exclude: []string{"secret", "keepass"}})
	black := image.NewRGBA(image.Rect(0, 0, 120, 80))
	for i := 3; i < len(black.Pix); i += 4 {
		black.Pix[i] = 0xff
	}
	for _, target := range []string{"screen", "crop:0,0,1000,1000", "window:bank"} {
		f, err := h.Capture(t.Context(), dpy, mustParse(t, target))
		if err != nil {
			t.Fatal(err)
		}
		ox, oy := 200, 50
		if target == "window:bank" {
			ox, oy = 0, 0
		} else {
			if err := checkContent(f, 0, 0, pub.Content()); err != nil {
				t.Errorf("%s: public window altered: %v", target, err)
			}
			if err := checkContent(f, 400, 300, cloneRGBA(black.SubImage(image.Rect(0, 0, 50, 50)).(*image.RGBA))); err != nil {
				t.Errorf("%s: window excluded by class not blacked out: %v", target, err)
			}
		}
		if err := checkContent(f, ox, oy, black); err != nil {
			t.Errorf("%s: excluded window not blacked out: %v", target, err)
		}
	}
}

func TestReconnectAfterServerRestart(t *testing.T) {
	srv := testx.StartServer(t, xvfb.Options{Width: 320, Height: 240})
	dpy := srv.Name()
	h := newHub(t, Options{MaxBackoff: 100 * time.Millisecond})
	if _, err := h.Capture(t.Context(), dpy, Target{}); err != nil {
		t.Fatal(err)
	}
	ch, err := h.Watch(t.Context(), dpy, Target{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	if _, err := h.Capture(t.Context(), dpy, Target{}); err == nil {
		t.Log("capture right after the kill still succeeded (connection loss not yet seen)")
	}
	srv2 := testx.StartServer(t, xvfb.Options{Display: dpy, Width: 400, Height: 300})
	w := testx.NewWindow(t, srv2.Name(), testx.Spec{Title: "After restart", X: 5, Y: 5, W: 50, H: 50, Pattern: pattern})

	// The watcher learns about the reconnect (one spurious notification).
	waitNotified(t, ch, "reconnect")
	deadline := time.Now().Add(30 * time.Second)
	var f *frame.Frame
	for {
		f, err = h.Capture(t.Context(), dpy, Target{})
		if err == nil && f.W == 400 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no capture from the restarted server: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := checkContent(f, 5, 5, w.Content()); err != nil {
		t.Errorf("after reconnect: %v", err)
	}
	if st := h.StatsFor(dpy); st.Reconnects < 1 {
		t.Errorf("stats %+v, want a reconnect", st)
	}
	drain(ch)
	w.SetPixel(3, 3, color.RGBA{B: 1})
	waitNotified(t, ch, "change after reconnect")
}

func TestMetricsRegistered(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 64, Height: 64})
	reg := prometheus.NewRegistry()
	h := newHub(t, Options{Registerer: reg})
	if _, err := h.Capture(t.Context(), dpy, Target{}); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		if mf.GetName() == "acu_capture_reads_total" {
			for _, m := range mf.GetMetric() {
				if m.GetCounter().GetValue() == 1 {
					found = true
				}
			}
		}
	}
	if !found {
		t.Errorf("acu_capture_reads_total with one read not found in %v", mfs)
	}
	hist := false
	for _, mf := range mfs {
		if mf.GetName() == "acu_capture_read_duration_seconds" && len(mf.GetMetric()) == 1 &&
			mf.GetMetric()[0].GetHistogram().GetSampleCount() == 1 {
			hist = true
		}
	}
	if !hist {
		t.Errorf("acu_capture_read_duration_seconds with one sample not found")
	}
}

func TestClosedHub(t *testing.T) {
	h := newHub(t, Options{})
	h.Close()
	if _, err := h.Capture(t.Context(), ":1", Target{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Capture after Close = %v, want ErrClosed", err)
	}
}

// Two servers that number DAMAGE events differently (MIT-SHM on and off)
// are watched by one hub at the same time.
func TestWatchServersWithDifferentEventNumbers(t *testing.T) {
	d1 := testx.StartXvfb(t, xvfb.Options{Width: 200, Height: 100})
	d2 := testx.StartXvfb(t, xvfb.Options{Width: 200, Height: 100, NoSHM: true})
	w1 := testx.NewWindow(t, d1, testx.Spec{Title: "one", W: 50, H: 50})
	w2 := testx.NewWindow(t, d2, testx.Spec{Title: "two", W: 50, H: 50})
	h := newHub(t, Options{})
	c1, err := h.Watch(t.Context(), d1, Target{})
	if err != nil {
		t.Fatal(err)
	}
	c2, err := h.Watch(t.Context(), d2, Target{})
	if err != nil {
		t.Fatal(err)
	}
	w2.SetPixel(1, 1, color.RGBA{R: 1})
	waitNotified(t, c2, "display without SHM")
	w1.SetPixel(1, 1, color.RGBA{R: 1})
	waitNotified(t, c1, "display with SHM")
}
