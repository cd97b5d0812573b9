package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/pgtest"
)

// fleetDaemon is one host of a fleet: its own display, data directory,
// host id, and a real `acu serve` on the shared PostgreSQL database.
type fleetDaemon struct {
	host    string
	display string
	env     []string
	dataDir string
	port    int
	d       *daemonProc
}

func startFleetDaemon(t *testing.T, dsn, host string, extra func(display string) []string) *fleetDaemon {
	t.Helper()
	f := &fleetDaemon{host: host, display: startDisplay(t)}
	f.env, f.dataDir, f.port = newEnv(t, f.display)
	f.env = append(f.env, "ACU_DB="+dsn, "ACU_HOST_ID="+host, "ACU_OWNER_LEASE=2s", "ACU_LOG_LEVEL=info")
	if extra != nil {
		f.env = append(f.env, extra(f.display)...)
	}
	f.d = startDaemon(t, f.env, f.dataDir, f.port)
	return f
}

// notifiedLines returns every line the exec notifiers of the fleet
// delivered, across all daemons.
func notifiedLines(t *testing.T, fleet []*fleetDaemon) []string {
	var out []string
	for _, f := range fleet {
		for _, l := range readLines(t, filepath.Join(f.dataDir, "notified.txt")) {
			if l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// TestFleetOnPostgres: three daemons (hosts a, b, c), each with its own
// Xvfb display and data directory, on one real PostgreSQL database. Waits
// created on a for the displays of b and c are claimed and judged there
// and resolve; a lists the whole fleet's runs and streams its events; each
// resolution is woken exactly once across the fleet; kill -9 of b orphans
// its live wait (notified once), and b's restart takes it back and
// resolves it.
func TestFleetOnPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	a := startFleetDaemon(t, dsn, "a", nil)
	b := startFleetDaemon(t, dsn, "b", nil)
	// c runs tasks: a zenity dialog with its accessibility bus, and the
	// task models faked.
	var zenity *atspitest.App
	c := startFleetDaemon(t, dsn, "c", func(dpy string) []string {
		session, app := zenityEntry(t, dpy)
		zenity = app
		srv := llmtest.NewOpenAI(t, taskModel)
		return []string{"DBUS_SESSION_BUS_ADDRESS=" + session.SessionBus, "ACU_TASK_BASE_URL=" + srv.URL, "ACU_TASK_API_KEY=" + llmtest.Key, "ACU_TASK_OCR=false"}
	})
	fleet := []*fleetDaemon{a, b, c}
	ctx := t.Context()

	// a streams the fleet's events from now on.
	var mu sync.Mutex
	seen := map[string][]string{} // run id -> streams
	fctx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	go a.d.client.Follow(fctx, api.EventQuery{}, func(ev api.Event) error {
		mu.Lock()
		seen[ev.RunID] = append(seen[ev.RunID], ev.Stream)
		mu.Unlock()
		return nil
	})
	time.Sleep(300 * time.Millisecond)

	// An unknown host is refused, naming the live ones.
	if _, err := a.d.client.CreateWait(ctx, api.CreateWait{Criteria: `"x" is visible`, Host: "zz", Timeout: 30}); err == nil ||
		!strings.Contains(err.Error(), "a, b, c") {
		t.Errorf("wait for an unknown host: %v, want refused naming a, b, c", err)
	}
	// Every host announces its display; any daemon lists them.
	hosts, err := a.d.client.Hosts(ctx)
	if err != nil || hosts.Self != "a" || len(hosts.Hosts) != 3 {
		t.Fatalf("hosts through a = %+v, %v; want a, b, c", hosts, err)
	}
	for i, f := range fleet {
		h := hosts.Hosts[i]
		if h.Host != f.host || len(h.Displays) != 1 || h.Displays[0] != f.display || len(h.Processes) != 1 || h.Processes[0].Program != "serve" {
			t.Errorf("host %d = %+v, want %s with display %s and its daemon", i, h, f.host, f.display)
		}
	}
	if out, _, code := acu(t, b.env, "hosts"); code != 0 || !strings.Contains(out, "b (this one)") || !strings.Contains(out, c.display) {
		t.Errorf("acu hosts on b: exit %d\n%s", code, out)
	}
	xtermShowing(t, b.display, "bravo", "Bravo ready", 3*time.Second)
	xtermShowing(t, c.display, "charlie", "Charlie ready", 3*time.Second)
	wb, err := a.d.client.CreateWait(ctx, api.CreateWait{Criteria: `"Bravo ready" is visible`, Host: "b", Timeout: 90})
	if err != nil {
		t.Fatal(err)
	}
	wc, err := a.d.client.CreateWait(ctx, api.CreateWait{Criteria: `"Charlie ready" is visible`, Host: "c", Timeout: 90})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		id, host string
		f        *fleetDaemon
	}{{wb.ID, "b", b}, {wc.ID, "c", c}} {
		res, err := a.d.client.WaitRun(ctx, w.id, 90*time.Second)
		if err != nil || res.Status != "resolved" {
			t.Fatalf("wait %s for host %s = %+v, %v; want resolved", w.id, w.host, res, err)
		}
		run, err := a.d.client.Run(ctx, w.id)
		if err != nil || run.Host != w.host || run.Owner == nil || run.Owner.Host != w.host || run.Owner.Program != "serve" {
			t.Errorf("run %s = %+v (owner %+v), %v; want host %s and its daemon as owner", w.id, run, run.Owner, err, w.host)
		}
		// The judging happened there: its daemon's wait view has the evidence.
		if j, err := w.f.d.client.GetWait(ctx, w.id); err != nil || !strings.Contains(j.Evidence, "ready") {
			t.Errorf("wait %s read on host %s = %+v, %v", w.id, w.host, j, err)
		}
	}
	// Fleet-wide listing and streaming on a.
	for _, host := range []string{"b", "c"} {
		l, err := a.d.client.Runs(ctx, api.RunQuery{Host: host, Kind: "wait"})
		if err != nil || len(l.Runs) != 1 {
			t.Errorf("a's runs of host %s = %+v, %v; want the one wait", host, l, err)
		}
	}
	eventually(t, 10*time.Second, "a's stream carrying b's and c's verdicts and ends", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range []string{wb.ID, wc.ID} {
			s := strings.Join(seen[id], ",")
			if !strings.Contains(s, "verdict") || !strings.HasSuffix(s, "lifecycle") {
				return false
			}
		}
		return true
	})
	// One wake per resolution, fleet-wide.
	eventually(t, 20*time.Second, "both wakes", func() bool { return countPrefix(notifiedLines(t, fleet), "[smart_wait resolved]") >= 2 })
	time.Sleep(2 * time.Second) // room for a duplicate to show
	lines := notifiedLines(t, fleet)
	for _, id := range []string{wb.ID, wc.ID} {
		if n := countPrefix(lines, "[smart_wait resolved] Job "+id+":"); n != 1 {
			t.Errorf("resolution of %s woken %d times across the fleet, want 1:\n%s", id, n, strings.Join(lines, "\n"))
		}
	}

	// An action request through a for c's display: c acts, a answers.
	act, err := a.d.client.Act(ctx, api.ActRequest{Host: "c", Actions: []api.Action{{Kind: "move", At: api.Pt(500, 500)}}})
	if err != nil || !act.OK || len(act.Results) != 1 || act.Results[0].At == nil {
		t.Fatalf("action for host c through a = %+v, %v", act, err)
	}
	xd := exec.Command("xdotool", "getmouselocation")
	xd.Env = append(os.Environ(), "DISPLAY="+c.display)
	outB, _ := xd.Output()
	out := string(outB)
	if want := fmt.Sprintf("x:%d y:%d", act.Results[0].At[0], act.Results[0].At[1]); !strings.Contains(out, want) {
		t.Errorf("pointer on c's display: %q, want %s", out, want)
	}
	if _, err := a.d.client.Act(ctx, api.ActRequest{Host: "c", Actions: []api.Action{{Kind: "levitate"}}}); err == nil || !strings.Contains(err.Error(), "levitate") {
		t.Errorf("a bad action for host c: %v, want c's refusal naming it", err)
	}
	// A task through a for c: c's orchestrator fills c's dialog.
	task, err := a.d.client.CreateTaskOn(ctx, "c", "Enter Grace Hopper as the name and press OK", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := a.d.client.WaitRun(ctx, task.ID, 2*time.Minute); err != nil || res.Status != "completed" {
		t.Fatalf("task for host c = %+v, %v; want completed", res, err)
	}
	zctx, zcancel := context.WithTimeout(ctx, 30*time.Second)
	if got, err := zenity.Wait(zctx); err != nil || got != "Grace Hopper\n" {
		t.Errorf("c's zenity printed %q (%v), want the name", got, err)
	}
	zcancel()

	// An update goes to the wait's host; cancel works from any daemon.
	wx, err := a.d.client.CreateWait(ctx, api.CreateWait{Criteria: `"Xray ready" is visible`, Host: "c", Timeout: 120})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "c claiming the wait", func() bool {
		r, err := a.d.client.Run(ctx, wx.ID)
		return err == nil && r.Owner != nil && r.Owner.Host == "c"
	})
	crit := `"Yankee ready" is visible`
	if _, err := a.d.client.UpdateWait(ctx, wx.ID, api.UpdateWait{Criteria: &crit}); err == nil || !strings.Contains(err.Error(), `host "c"`) {
		t.Errorf("update through a of c's wait: %v, want 409 naming host c", err)
	}
	if j, err := c.d.client.UpdateWait(ctx, wx.ID, api.UpdateWait{Criteria: &crit}); err != nil || j.Criteria != crit {
		t.Errorf("update through c: %+v, %v", j, err)
	}
	if _, err := a.d.client.CancelWait(ctx, wx.ID, "not needed"); err != nil {
		t.Fatalf("cancel through a of c's wait: %v", err)
	}
	eventually(t, 20*time.Second, "c dropping the cancelled wait", func() bool {
		l, err := c.d.client.ListWaits(ctx, api.WaitQuery{State: "live"})
		return err == nil && len(l.Waits) == 0
	})
	eventually(t, 20*time.Second, "the cancellation's wake", func() bool {
		return countPrefix(notifiedLines(t, fleet), "[smart_wait cancelled] Job "+wx.ID) >= 1
	})

	// kill -9 of b while it runs a wait: orphaned, notified once; b's
	// restart takes it back and it resolves.
	wd, err := a.d.client.CreateWait(ctx, api.CreateWait{Criteria: `"Delta ready" is visible`, Host: "b", Timeout: 120})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "b claiming the wait", func() bool {
		r, err := a.d.client.Run(ctx, wd.ID)
		return err == nil && r.Owner != nil && r.Owner.Host == "b"
	})
	b.d.kill9()
	var orphan api.Run
	eventually(t, 30*time.Second, "the wait orphaned", func() bool {
		orphan, err = a.d.client.Run(ctx, wd.ID)
		return err == nil && orphan.Status == "orphaned"
	})
	if orphan.EndedAt != nil || orphan.Owner != nil {
		t.Errorf("orphaned run = %+v, want live and unowned", orphan)
	}
	eventually(t, 20*time.Second, "the orphan notification", func() bool {
		return countPrefix(notifiedLines(t, fleet), "[acu orphaned] Run "+wd.ID) >= 1
	})
	b.d = startDaemon(t, b.env, b.dataDir, b.port)
	eventually(t, 30*time.Second, "b's new daemon taking the wait back", func() bool {
		r, err := a.d.client.Run(ctx, wd.ID)
		return err == nil && r.Status == "running" && r.Owner != nil && r.Owner.Host == "b" && r.Owner.Alive
	})
	xtermShowing(t, b.display, "delta", "Delta ready", 0)
	res, err := a.d.client.WaitRun(ctx, wd.ID, 90*time.Second)
	if err != nil || res.Status != "resolved" {
		t.Fatalf("orphaned wait after b's return = %+v, %v; want resolved", res, err)
	}
	lines = notifiedLines(t, fleet)
	if n := countPrefix(lines, "[smart_wait cancelled] Job "+wx.ID); n != 1 {
		t.Errorf("cancel of %s woken %d times, want 1", wx.ID, n)
	}
	if n := countPrefix(lines, "[acu orphaned] Run "+wd.ID); n != 1 {
		t.Errorf("orphan of %s notified %d times, want 1:\n%s", wd.ID, n, strings.Join(lines, "\n"))
	}
	evs, err := a.d.client.EventsAfter(ctx, api.EventQuery{RunID: wd.ID, Streams: []string{"lifecycle", "ownership"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs.Events {
		got = append(got, e.Stream+":"+phaseOf(e))
	}
	if want := "lifecycle:start,ownership:claimed,ownership:orphaned,ownership:resumed,lifecycle:end"; strings.Join(got, ",") != want {
		t.Errorf("orphaned wait's lifecycle and ownership = %s, want %s", strings.Join(got, ","), want)
	}
}

func phaseOf(e api.Event) string {
	var p struct {
		Phase string `json:"phase"`
	}
	if err := json.Unmarshal(e.Data, &p); err != nil {
		return fmt.Sprintf("?%v", err)
	}
	return p.Phase
}
