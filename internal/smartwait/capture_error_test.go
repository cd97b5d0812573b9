package smartwait

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/xvfb"
)

// TestCaptureErrorEvents: while the display cannot be read (its X server
// stopped), each poll of a wait fails to capture; the job says so in
// LastError, no judge is asked, and each distinct failure is one verdict
// event (the message names the reconnect backoff, so it changes), never
// the same one twice in a row.
func TestCaptureErrorEvents(t *testing.T) {
	srv, err := xvfb.Start(t.Context(), xvfb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	mj, backend := newMarkerJudge(t)
	h := newHarness(t, harnessOpts{judge: backend, display: srv.Name()})
	job, err := h.eng.Create(t.Context(), Spec{Criteria: "a red marker is visible", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "a first judgement", func() bool {
		j, _ := h.eng.Get(t.Context(), job.ID)
		return j.Evaluations > 0
	})
	if err := srv.Stop(); err != nil {
		t.Logf("stop Xvfb: %v", err)
	}
	holdDisplayNumber(t, srv.Name())
	eventually(t, "a capture error", func() bool {
		j, _ := h.eng.Get(t.Context(), job.ID)
		return strings.HasPrefix(j.LastError, "capture: ")
	})
	// Judgements of frames captured before the stop may still be under
	// way when it comes; from the first failed capture on, none may start.
	calls := mj.calls.Load()
	time.Sleep(time.Second) // several polls fail
	var msgs []string
	for _, ev := range h.verdicts(job.ID) {
		var d map[string]any
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		msg, _ := d["error"].(string)
		if !strings.HasPrefix(msg, "capture: ") {
			continue
		}
		if d["met"] != false {
			t.Errorf("capture error event %v: want met false", d)
		}
		if n := len(msgs); n > 0 && msgs[n-1] == msg {
			t.Errorf("the capture error %q is two events in a row", msg)
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 {
		t.Error("no capture error event")
	}
	if got := mj.calls.Load(); got != calls {
		t.Errorf("the judge was asked %d times while nothing could be captured", got-calls)
	}
	if _, err := h.eng.Cancel(t.Context(), job.ID, "test done"); err != nil {
		t.Fatal(err)
	}
}

// holdDisplayNumber keeps the stopped display's number from being taken by
// another test's X server until t ends: tests of other packages start Xvfb
// in parallel with -displayfd, which picks the lowest free number, and a
// wait reconnecting to a new server on the same number captures its screen
// and asks the judge. An X server skips a number whose abstract socket is
// bound (a lock file naming a live process does not stop it under
// -displayfd: tried); connections to the held socket are closed at once, so
// a capture fails as fast as it does on a number nobody serves.
func holdDisplayNumber(t *testing.T, name string) {
	t.Helper()
	l, err := net.Listen("unix", "@/tmp/.X11-unix/X"+strings.TrimPrefix(name, ":"))
	if err != nil {
		t.Skipf("another X server took %s before this test could hold it: %v", name, err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
}
