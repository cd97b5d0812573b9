package sense

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/relay"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// recorder keeps every event posted to the relay (whose ring holds only
// the last 30) and forwards it.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	evs  []Event
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost && req.URL.Path == "/sense" {
		b, _ := io.ReadAll(req.Body)
		var e Event
		if err := json.Unmarshal(b, &e); err == nil {
			r.mu.Lock()
			r.evs = append(r.evs, e)
			r.mu.Unlock()
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	r.next.ServeHTTP(w, req)
}

func (r *recorder) events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.evs...)
}

// find returns the index of the first event from index from that matches.
func (r *recorder) find(from int, match func(Event) bool) int {
	for i, e := range r.events() {
		if i >= from && match(e) {
			return i
		}
	}
	return -1
}

// activate does what a window manager would: _NET_ACTIVE_WINDOW on the
// root and the input focus.
func activate(t *testing.T, x *xgb.Conn, id uint32) {
	t.Helper()
	root := xproto.Setup(x).DefaultScreen(x).Root
	a, err := xproto.InternAtom(x, false, uint16(len("_NET_ACTIVE_WINDOW")), "_NET_ACTIVE_WINDOW").Reply()
	if err != nil {
		t.Fatal(err)
	}
	v := make([]byte, 4)
	binary.LittleEndian.PutUint32(v, id)
	xproto.ChangeProperty(x, xproto.PropModeReplace, root, a.Atom, xproto.AtomWindow, 32, 1, v)
	xproto.ConfigureWindow(x, xproto.Window(id), xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
	xproto.SetInputFocus(x, xproto.InputFocusPointerRoot, xproto.Window(id), xproto.TimeCurrentTime)
	if _, err := xproto.GetInputFocus(x).Reply(); err != nil {
		t.Fatal(err)
	}
}

func shellXterm(t *testing.T, dpy, title, class, geometry string) *testx.Xterm {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	xt := testx.StartXterm(t, dpy, testx.XtermSpec{Title: title, Class: class, Geometry: geometry,
		Args:    []string{"-fa", "Monospace", "-fs", "14", "-bg", "white", "-fg", "black"},
		Command: []string{"sh", "-c", "PS1='$ '; export PS1; touch " + ready + "; exec sh -i"}})
	waitUntil(t, "the shell in "+title, func() bool { _, err := os.Stat(ready); return err == nil })
	return xt
}

// TestSenseOnXvfb: a real xterm under Xvfb. Typing a command makes a text
// event whose OCR holds it; a secret typed is redacted; switching windows
// makes a context event; an ignored window is neither reported nor read.
func TestSenseOnXvfb(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 1024, Height: 600})
	rl, err := relay.New(t.Context(), relay.Options{Token: "sense-test-token"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{next: rl.Handler()}
	srv := httptest.NewServer(rec)
	defer srv.Close()

	a := shellXterm(t, dpy, "sense-a", "", "60x8+0+0")
	b := shellXterm(t, dpy, "sense-b", "AcuOther", "60x8+0+300")
	secret := shellXterm(t, dpy, "vault", "SecretApp", "40x6+620+0")

	x, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	activate(t, x, a.Window)

	ignore := []string{"secretapp"}
	hub, err := capture.NewHub(capture.Options{Exclude: ignore})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	eng, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Display: dpy, RelayURL: srv.URL, Token: "sense-test-token", Screen: hub, OCR: eng, Ignore: ignore,
		MinInterval: 300 * time.Millisecond, FocusPoll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	waitUntil(t, "the first context event", func() bool {
		return rec.find(0, func(e Event) bool { return e.Type == "context" && e.Meta.App == "XTerm" }) >= 0
	})

	conn, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dev, err := input.New(conn, input.Area{W: 1024, H: 600}, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()

	// Typing a command produces a text event whose OCR contains it.
	from := len(rec.events())
	if err := dev.Type(t.Context(), "echo sensetest done\n"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a text event with the typed command", func() bool {
		return rec.find(from, func(e Event) bool {
			return e.Type == "text" && e.Meta.App == "XTerm" && strings.Contains(strings.ToLower(e.OCR), "sensetest") && e.Meta.SSIM != nil
		}) >= 0
	})

	// A secret on screen is redacted before it leaves.
	from = len(rec.events())
	if err := dev.Type(t.Context(), "echo password=hunter2\n"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a text event with the redacted assignment", func() bool {
		return rec.find(from, func(e Event) bool { return e.Type == "text" && strings.Contains(e.OCR, "[REDACTED]") }) >= 0
	})

	// Switching windows produces a context event.
	from = len(rec.events())
	activate(t, x, b.Window)
	waitUntil(t, "a context event for the other window", func() bool {
		return rec.find(from, func(e Event) bool { return e.Type == "context" && e.Meta.App == "AcuOther" && e.OCR == "" }) >= 0
	})

	// An ignored window: no context event, nothing read while it is focused,
	// and its pixels are blacked out of every frame.
	from = len(rec.events())
	activate(t, x, secret.Window)
	if err := dev.Type(t.Context(), "echo vaultword\n"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the ignored window's input to be skipped", func() bool { return c.Stats().IgnoredSkips > 0 })
	activate(t, x, a.Window)
	if err := dev.Type(t.Context(), "echo backagain\n"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "events after returning to the xterm", func() bool {
		return rec.find(from, func(e Event) bool { return e.Type == "text" && strings.Contains(strings.ToLower(e.OCR), "backagain") }) >= 0
	})
	for _, e := range rec.events() {
		if e.Meta.App == "SecretApp" || strings.Contains(strings.ToLower(e.OCR), "vaultword") {
			t.Errorf("the ignored window leaked: %+v", e)
		}
		if strings.Contains(e.OCR, "hunter2") {
			t.Errorf("a secret left unredacted: %+v", e)
		}
	}
	// The relay got them in the seed's shape.
	evs := rl.Sense(0)
	if len(evs) == 0 {
		t.Fatal("the relay holds no sense events")
	}
	last, _ := json.Marshal(evs[len(evs)-1])
	var m map[string]any
	if err := json.Unmarshal(last, &m); err != nil || m["type"] == nil || m["ts"] == nil || m["meta"] == nil || m["receivedAt"] == nil {
		t.Errorf("relay's event %s lacks the seed's fields", last)
	}
	if s := c.Stats(); s.Sent == 0 || s.Refused != 0 {
		t.Errorf("stats %+v", s)
	}
}
