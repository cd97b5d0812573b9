package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/testx"
)

// TestActCLIThroughDaemon: with a daemon running, `acu elements` lists a
// zenity form's ids and `acu act` fills and submits it by id (proven by
// zenity's stdout); --json runs a whole request, and drag takes POS
// values, through the daemon's audit.
func TestActCLIThroughDaemon(t *testing.T) {
	dpy := startDisplay(t)
	session := atspitest.Start(t, dpy)
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+session.SessionBus, "ACU_ACT_USER_QUIET=200ms")
	startDaemon(t, env, dataDir, port)
	app := zenityForm(t, dpy, session, "Acu CLI")

	var inputs []string
	ok := ""
	for range 30 {
		out, errOut, code := acu(t, env, "elements")
		if code != 0 {
			t.Fatalf("acu elements: %d %s", code, errOut)
		}
		inputs, ok = nil, ""
		for _, m := range stateLine.FindAllStringSubmatch(out, -1) {
			if m[2] == "input" {
				inputs = append(inputs, m[1])
			}
			if m[2] == "button" && m[3] == ` "OK"` {
				ok = m[1]
			}
		}
		if len(inputs) >= 2 && ok != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(inputs) < 2 || ok == "" {
		t.Fatalf("acu elements shows inputs %v and OK %q", inputs, ok)
	}
	for i, text := range []string{"Grace Hopper", "Arlington"} {
		if out, errOut, code := acu(t, env, "act", "--at", inputs[i], "type", text); code != 0 || !strings.Contains(out, "ok") {
			t.Fatalf("acu act type: %d %s %s", code, out, errOut)
		}
	}
	shot := filepath.Join(t.TempDir(), "after.jpg")
	out, errOut, code := acu(t, env, "act", "--settle", "--screenshot", shot, "click", ok)
	if code != 0 || !strings.Contains(out, "settled: true") || !strings.Contains(out, "audit: run") {
		t.Fatalf("acu act click %s: %d %s %s", ok, code, out, errOut)
	}
	if b, err := os.ReadFile(shot); err != nil || len(b) < 100 || b[0] != 0xff {
		t.Errorf("--screenshot wrote %d bytes (%v), want a JPEG", len(b), err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if got, err := app.Wait(ctx); err != nil || got != "Grace Hopper|Arlington\n" {
		t.Fatalf("zenity printed %q (%v)", got, err)
	}

	// A drag by POS values and a --json request, seen by a real X client.
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "pad", X: 0, Y: 0, W: 1024, H: 600})
	w.Focus()
	if out, errOut, code := acu(t, env, "act", "drag", "100,100", "500,500@1024x600"); code != 0 {
		t.Fatalf("acu act drag: %d %s %s", code, out, errOut)
	}
	req := filepath.Join(t.TempDir(), "req.json")
	os.WriteFile(req, []byte(`{"actions":[{"kind":"click","at":{"x":250,"y":500},"button":"right"},{"kind":"type","text":"hey"}]}`), 0o600)
	if out, errOut, code := acu(t, env, "act", "--json", req); code != 0 || strings.Count(out, ": ok") != 2 {
		t.Fatalf("acu act --json: %d %s %s", code, out, errOut)
	}
	wctx, wcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer wcancel()
	evs, err := w.WaitFor(wctx, func(evs []testx.Event) bool {
		presses := 0
		for _, e := range evs {
			if e.Kind == testx.ButtonPress {
				presses++
			}
		}
		return presses >= 2 && w.Typed() == "hey"
	})
	if err != nil {
		t.Fatalf("events: %v (%+v)", err, evs)
	}
	var presses [][3]int
	for _, e := range evs {
		if e.Kind == testx.ButtonPress {
			presses = append(presses, [3]int{e.RootX, e.RootY, e.Button})
		}
	}
	// drag starts at 100,100 of 0..1000 = (102,60); the right click at 250,500 = (256,300).
	if len(presses) < 2 || presses[0] != [3]int{102, 60, 1} || presses[1] != [3]int{256, 300, 3} {
		t.Errorf("button presses %v, want a drag from (102,60) and a right click at (256,300)", presses)
	}

	// Bad input: a clear error and exit 2.
	if _, errOut, code := acu(t, env, "act", "click", "not a position!"); code != 2 || !strings.Contains(errOut, "position") {
		t.Errorf("acu act click with a bad position: %d %s", code, errOut)
	}
}

// TestWaitFlagsAfterTheCondition: `acu wait COND --timeout 2s` takes the
// flag as a flag, not as words of the condition.
func TestWaitFlagsAfterTheCondition(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	startDaemon(t, env, dataDir, port)
	out, errOut, code := acu(t, env, "wait", `"Never shown" is visible`, "--timeout", "2s", "--json")
	if code != 2 {
		t.Fatalf("acu wait: exit %d, want 2 (timeout)\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, "--timeout") || !strings.Contains(out, `Never shown`) {
		t.Errorf("the job's criteria took the flag in:\n%s", out)
	}
}
