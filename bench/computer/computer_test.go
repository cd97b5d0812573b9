package computerbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

const token = "bench-token-0123456789"

// daemon is the API server with the action service on dpy. The
// reference's xdotool is another client moving the pointer: to acu, a
// user, so the user-first pause is off.
func daemon(b *testing.B, dpy string) string {
	b.Helper()
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { hub.Close() })
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	eng := smartwait.New(smartwait.Options{Runs: reg, Capture: hub, Store: db, DefaultDisplay: dpy})
	svc, err := actions.New(actions.Options{Hub: hub, Runs: reg, Settle: eng, DefaultDisplay: dpy})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = svc.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	srv := httptest.NewServer(server.New(server.Options{Token: token, Runs: reg, Actions: svc}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// flipper is a window that changes colour once on every button press.
type flipper struct {
	still atomic.Int64 // unix ns of the last change
}

func newFlipper(b *testing.B, dpy string, w, h int) *flipper {
	b.Helper()
	x, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(x.Close)
	scr := xproto.Setup(x).DefaultScreen(x)
	win, err := xproto.NewWindowId(x)
	if err != nil {
		b.Fatal(err)
	}
	err = xproto.CreateWindowChecked(x, scr.RootDepth, win, scr.Root, 0, 0, uint16(w), uint16(h), 0, xproto.WindowClassInputOutput,
		scr.RootVisual, xproto.CwBackPixel|xproto.CwEventMask, []uint32{0x336699, xproto.EventMaskButtonPress}).Check()
	if err != nil {
		b.Fatal(err)
	}
	xproto.MapWindow(x, win)
	xproto.ClearArea(x, false, win, 0, 0, 0, 0)
	if _, err := xproto.GetInputFocus(x).Reply(); err != nil {
		b.Fatal(err)
	}
	f := &flipper{}
	go func() {
		colour := uint32(0x336699)
		for {
			ev, err := x.WaitForEvent()
			if ev == nil && err == nil {
				return
			}
			if _, ok := ev.(xproto.ButtonPressEvent); !ok {
				continue
			}
			colour ^= 0xffffff
			xproto.ChangeWindowAttributes(x, win, xproto.CwBackPixel, []uint32{colour})
			xproto.ClearArea(x, false, win, 0, 0, 0, 0)
			_, _ = xproto.GetInputFocus(x).Reply()
			f.still.Store(time.Now().UnixNano())
		}
	}()
	return f
}

func post(b *testing.B, url, vendor, item string) api.ComputerResult {
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/computer/"+vendor+"?limit=1280x800", bytes.NewReader([]byte(item)))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var res api.ComputerResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != 200 || res.Status != api.ComputerActed {
		b.Fatalf("%s: %d %+v %v", vendor, resp.StatusCode, res.Error, err)
	}
	return res
}

func report(b *testing.B, name string, ds []time.Duration) time.Duration {
	slices.Sort(ds)
	q := func(p float64) time.Duration { return ds[int(p*float64(len(ds)-1))] }
	b.ReportMetric(float64(q(0.5).Microseconds())/1000, name+"_p50_ms")
	b.ReportMetric(float64(q(0.95).Microseconds())/1000, name+"_p95_ms")
	return q(0.5)
}

// BenchmarkTurn: one turn of each dialect without model time (a click on
// a window that changes once; settle; screenshot PNG at the model's size,
// as the vendors' demos send), and the reference executor's turn (xdotool
// subprocess, fixed 2 s sleep, the same screenshot), interleaved.
func BenchmarkTurn(b *testing.B) {
	for _, sz := range []dialect.Size{{W: 1280, H: 800}, {W: 1920, H: 1080}} {
		b.Run("screen="+sz.String(), func(b *testing.B) { turn(b, sz) })
	}
}

func turn(b *testing.B, screen dialect.Size) {
	if _, err := exec.LookPath("xdotool"); err != nil {
		b.Fatal("xdotool is needed for the reference: apt-get install xdotool (scripts/install-deps.sh)")
	}
	dpy := testx.StartXvfb(b, xvfb.Options{Width: screen.W, Height: screen.H})
	url := daemon(b, dpy)
	newFlipper(b, dpy, screen.W, screen.H)
	img := dialect.Fit(screen, dialect.Size{W: 1280, H: 800})
	cx, cy := img.W/2, img.H/2
	items := map[string]string{
		api.VendorAnthropic: fmt.Sprintf(`{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"left_click","coordinate":[%d,%d]}}`, cx, cy),
		api.VendorOpenAI:    fmt.Sprintf(`{"type":"computer_call","call_id":"c1","action":{"type":"click","button":"left","x":%d,"y":%d},"pending_safety_checks":[]}`, cx, cy),
		api.VendorUITARS:    `"Thought: click.\nAction: click(start_box='(500,500)')"`,
	}
	for v, it := range items { // warm up: connections, keymaps
		post(b, url, v, it)
	}
	env := append(os.Environ(), "DISPLAY="+dpy)
	acuT := map[string][]time.Duration{}
	var ref []time.Duration
	sx, sy := dialect.ToScreen(cx, cy, img, screen)
	b.ResetTimer()
	for range b.N {
		for _, v := range api.Vendors {
			t0 := time.Now()
			post(b, url, v, items[v])
			acuT[v] = append(acuT[v], time.Since(t0))
		}
		t0 := time.Now()
		cmd := exec.Command("xdotool", "mousemove", fmt.Sprint(sx), fmt.Sprint(sy), "click", "1")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("xdotool: %v: %s", err, out)
		}
		time.Sleep(2 * time.Second) // the demo's screenshot delay
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/v1/screenshot?format=png&max_width=%d", url, img.W), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		ref = append(ref, time.Since(t0))
	}
	b.StopTimer()
	r := report(b, "reference", ref)
	for _, v := range api.Vendors {
		a := report(b, v, acuT[v])
		b.ReportMetric(float64(r)/float64(a), v+"_ratio")
	}
}

// BenchmarkWait: a model's 2 s wait on a still screen: acu ends it once
// the screen has been still for 1 s (and says so); the vendors' samples
// sleep the full 2 s.
func BenchmarkWait(b *testing.B) {
	dpy := testx.StartXvfb(b, xvfb.Options{Width: 1280, Height: 800})
	url := daemon(b, dpy)
	item := `{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"wait","duration":2}}`
	var ds []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		res := post(b, url, api.VendorAnthropic, item)
		ds = append(ds, time.Since(t0))
		if res.Waited == nil || !res.Waited.Settled {
			b.Fatalf("wait = %+v, want ended early", res.Waited)
		}
	}
	b.StopTimer()
	report(b, "acu_wait", ds)
}
