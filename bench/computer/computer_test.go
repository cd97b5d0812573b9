package computerbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/acu-dev/acu/bench/internal/rig"
	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// daemon is the API server with the action service on dpy. The
// reference's xdotool is another client moving the pointer: to acu, a
// user, so the user-first pause is off.
func daemon(b *testing.B, dpy string) string {
	b.Helper()
	c := rig.NewCore(b, nil)
	eng := smartwait.New(smartwait.Options{Runs: c.Runs, Capture: c.Hub, Store: c.DB, DefaultDisplay: dpy})
	svc, err := actions.New(actions.Options{Hub: c.Hub, Runs: c.Runs, Settle: eng, DefaultDisplay: dpy})
	if err != nil {
		b.Fatal(err)
	}
	rig.Go(b, svc.Run)
	return rig.Serve(b, server.New(server.Options{Token: rig.Token, Runs: c.Runs, Actions: svc}))
}

func post(b *testing.B, url, vendor, item string) api.ComputerResult {
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/computer/"+vendor+"?limit=1280x800", bytes.NewReader([]byte(item)))
	req.Header.Set("Authorization", "Bearer "+rig.Token)
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
	rig.NewFlipper(b, dpy, 0, 0, screen.W, screen.H)
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
		req.Header.Set("Authorization", "Bearer "+rig.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		ref = append(ref, time.Since(t0))
	}
	b.StopTimer()
	r := rig.Report(b, "reference", ref)
	for _, v := range api.Vendors {
		a := rig.Report(b, v, acuT[v])
		b.ReportMetric(r/a, v+"_ratio")
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
	rig.Report(b, "acu_wait", ds)
}
