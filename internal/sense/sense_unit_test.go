package sense

import (
	"context"
	"encoding/json"
	"image"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/privacy"
)

// solid returns a w×h BGRX frame of one grey level with an optional dark
// rectangle.
func solid(w, h int, level byte, dark image.Rectangle) *frame.Frame {
	pix := make([]byte, w*h*4)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := level
			if image.Pt(x, y).In(dark) {
				v = 0
			}
			i := (y*w + x) * 4
			pix[i], pix[i+1], pix[i+2] = v, v, v
		}
	}
	return frame.New(pix, w, h, w*4, ":0", "screen", time.Now())
}

func TestCompare(t *testing.T) {
	const w, h = 320, 200
	screen := image.Rect(0, 0, w, h)
	var base, cursor, typed thumb
	makeThumb(&base, solid(w, h, 255, image.Rectangle{}))
	makeThumb(&cursor, solid(w, h, 255, image.Rect(40, 40, 47, 53))) // a 7x13 text cursor
	makeThumb(&typed, solid(w, h, 255, image.Rect(40, 40, 130, 53))) // a typed word

	if c := compare(&base, &base, screen); c.Cells != 0 || c.SSIM != 1 || !c.Box.Empty() {
		t.Errorf("compare(same) = %+v, want no change, SSIM 1", c)
	}
	c := compare(&base, &cursor, screen)
	if area := c.Box.Dx() * c.Box.Dy(); c.Cells == 0 || area >= 1024 {
		t.Errorf("cursor: %+v (area %d), want a change below the default MinChangeArea", c, area)
	}
	c2 := compare(&base, &typed, screen)
	if area := c2.Box.Dx() * c2.Box.Dy(); area < 1024 || !image.Rect(40, 40, 130, 53).In(c2.Box) || c2.SSIM >= c.SSIM {
		t.Errorf("typed word: %+v (area %d), want a box holding the word, SSIM below the cursor's %v", c2, area, c.SSIM)
	}
	if c := compare(nil, &base, screen); c.Box != screen {
		t.Errorf("compare(nil) = %+v, want the whole screen changed", c)
	}
}

func TestCapArea(t *testing.T) {
	region := image.Rect(0, 0, 1000, 1000)
	if got := capArea(region, image.Rect(10, 10, 20, 20), 2_000_000); got != region {
		t.Errorf("under the cap = %v", got)
	}
	if got := capArea(region, image.Rect(100, 100, 200, 200), 100_000); got != image.Rect(68, 68, 232, 232) {
		t.Errorf("cut to change = %v", got)
	}
	if got := capArea(region, image.Rect(0, 0, 1000, 1000), 100_000); got.Dx()*got.Dy() > 100_000 || got.Dx() != 1000 {
		t.Errorf("cut rows = %v", got)
	}
}

func TestAppNameAndIgnore(t *testing.T) {
	for _, tc := range []struct {
		w    display.Window
		want string
	}{
		{display.Window{Class: "XTerm", Instance: "xterm"}, "XTerm"},
		{display.Window{Class: "jetbrains-idea", Instance: "jetbrains-idea"}, "idea"},
		{display.Window{Class: "Google-chrome"}, "Google Chrome"},
		{display.Window{Instance: "foo"}, "foo"},
		{display.Window{Title: "only a title"}, "only a title"},
		{display.Window{}, "unknown"},
	} {
		if got := appName(tc.w); got != tc.want {
			t.Errorf("appName(%+v) = %q, want %q", tc.w, got, tc.want)
		}
	}
	list := privacy.New([]string{"keepassxc", "secret"})
	if !ignored(display.Window{Class: "KeePassXC"}, list) || !ignored(display.Window{Title: "My Secret Notes"}, list) || ignored(display.Window{Class: "XTerm", Title: "bash"}, list) {
		t.Error("ignored() matched wrongly")
	}
}

func TestClipText(t *testing.T) {
	if got := clipText("héllo", 2); got != "h" {
		t.Errorf("clipText = %q, want %q (never inside a rune)", got, "h")
	}
	if got := clipText("abc", 10); got != "abc" {
		t.Errorf("clipText = %q", got)
	}
}

// TestQueueSurvivesRelayDown: events queued while the relay answers 503
// are delivered in order once it recovers; a full queue drops the oldest.
func TestQueueSurvivesRelayDown(t *testing.T) {
	var up atomic.Bool
	var mu sync.Mutex
	var got []Event
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if r.URL.Path != "/sense" || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("request %s %s %v", r.Method, r.URL.Path, r.Header)
		}
		var e Event
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			t.Errorf("decode: %v", err)
		}
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	}))
	defer srv.Close()
	c, err := New(Options{Display: ":0", RelayURL: srv.URL, Token: "tok", Screen: nilScreen{}, OCR: nilReader{}, Queue: 3, RetryBase: 5 * time.Millisecond, RetryMax: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { c.sender(ctx) })
	for i := range 5 {
		c.emit(Event{Type: "text", TS: int64(i + 1), OCR: "x"})
	}
	waitUntil(t, "retries while the relay is down", func() bool { return c.Stats().Retries >= 2 })
	up.Store(true)
	waitUntil(t, "delivery", func() bool { return c.Pending() == 0 && c.Stats().Sent >= 3 })
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	var ts []int64
	for _, e := range got {
		ts = append(ts, e.TS)
	}
	// Event 1 was in flight when the queue overflowed, so 2 was dropped
	// first... either way: the newest survive, in order.
	if len(ts) < 3 || ts[len(ts)-1] != 5 || ts[len(ts)-2] != 4 {
		t.Errorf("delivered ts = %v, want the newest (…, 4, 5) in order", ts)
	}
	if s := c.Stats(); s.Dropped != 5-int64(len(ts)) {
		t.Errorf("dropped = %d, delivered %d of 5", s.Dropped, len(ts))
	}
}

func TestRefusedEventDropped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"bad"}}`, http.StatusBadRequest)
	}))
	defer srv.Close()
	c, err := New(Options{Display: ":0", RelayURL: srv.URL, Screen: nilScreen{}, OCR: nilReader{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { c.sender(ctx) })
	c.emit(Event{Type: "text", TS: 1})
	waitUntil(t, "the refusal", func() bool { return c.Stats().Refused == 1 && c.Pending() == 0 })
	cancel()
	wg.Wait()
}

func TestNewValidates(t *testing.T) {
	for _, o := range []Options{
		{Display: ":0", RelayURL: "http://127.0.0.1:1"},
		{Display: "", RelayURL: "http://127.0.0.1:1", Screen: nilScreen{}, OCR: nilReader{}},
		{Display: ":0", RelayURL: "ftp://x", Screen: nilScreen{}, OCR: nilReader{}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}
