package idle

import (
	"context"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/virtual"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// counts returns the resumed events taken for acu's and for the user's
// once every input the compositor took so far has been read.
func (w *Watch) counts(t *testing.T) (own, user int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := w.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open != 0 || w.begun != 0 {
		t.Fatalf("after Flush: %d brackets open in the stream, %d Begins without End; want 0", w.open, w.begun)
	}
	return w.own, w.user
}

func openBoth(t *testing.T) (*Watch, *virtual.Device, *virtual.Device) {
	t.Helper()
	return openOn(t, waylandtest.Start(t, 320, 200))
}

func openOn(t *testing.T, c waylandtest.Compositor) (*Watch, *virtual.Device, *virtual.Device) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	w, err := Open(ctx, c.Socket(), "")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	var devs [2]*virtual.Device
	for i := range devs {
		if devs[i], err = virtual.Open(ctx, c.Socket(), ""); err != nil {
			t.Fatalf("virtual.Open: %v", err)
		}
		t.Cleanup(func() { devs[i].Close() })
	}
	return w, devs[0], devs[1]
}

// TestOwnInputIsNotTheUsers clicks and types 200 times with acu's own
// virtual devices, each effect bracketed by Begin and End as the gate
// does, with no pause between them: LastUser never moves (no
// self-detection), while a click of another client's pointer after them
// does move it.
func TestOwnInputIsNotTheUsers(t *testing.T) {
	w, acu, user := openBoth(t)
	ownInputIsNotTheUsers(t, w, acu, user, 3, 2)
}

// ownInputIsNotTheUsers runs TestOwnInputIsNotTheUsers's check with the
// compositor's count of resumed events per click and per character.
func ownInputIsNotTheUsers(t *testing.T, w *Watch, acu, user *virtual.Device, perClick, perChar int) {
	const n = 200
	late := 0 // acu's events read after its End: a bracket ending at End would take them for the user's
	for i := range n {
		w.Begin()
		var err error
		if i%10 == 9 {
			err = acu.Type(t.Context(), "a")
		} else {
			err = acu.Click(t.Context(), 10+i, 10+i/2, 1, 1)
		}
		if err != nil {
			t.Fatalf("acu's input %d: %v", i, err)
		}
		w.mu.Lock()
		atEnd := w.own
		w.mu.Unlock()
		w.End()
		w.mu.Lock()
		late += w.own - atEnd
		w.mu.Unlock()
	}
	own, self := w.counts(t)
	t.Logf("%d effects: %d resumed events taken for acu's, %d of them read after End; %d self-detections", n, own, late, self)
	if self != 0 || !w.LastUser().IsZero() {
		t.Fatalf("acu's own bracketed input was taken for the user's %d times (LastUser %v), want 0", self, w.LastUser())
	}
	if want := perClick*(n-n/10) + perChar*(n/10); own != want { // on sway a click is 3 (motion, press, release), a character 2 (press, release)
		t.Fatalf("%d resumed events for %d effects, want %d (one per input event)", own, n, want)
	}

	before := time.Now()
	if err := user.Click(t.Context(), 100, 100, 1, 1); err != nil {
		t.Fatalf("the user's click: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for w.LastUser().Before(before) {
		if time.Now().After(deadline) {
			t.Fatalf("LastUser after the user's click = %v, want at or after %v", w.LastUser(), before)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestUserInputRightBeforeBeginIsTheUsers clicks with another client's
// pointer and, as soon as the click is taken, brackets a click of acu's,
// 50 times: every event of the user's clicks is the user's and every one
// of acu's is acu's (Begin's marker splits the stream exactly).
func TestUserInputRightBeforeBeginIsTheUsers(t *testing.T) {
	w, acu, user := openBoth(t)
	const n = 50
	for i := range n {
		if err := user.Click(t.Context(), 100+i, 50, 1, 1); err != nil {
			t.Fatalf("the user's click %d: %v", i, err)
		}
		w.Begin()
		if err := acu.Click(t.Context(), 10+i, 10, 1, 1); err != nil {
			t.Fatalf("acu's click %d: %v", i, err)
		}
		w.End()
	}
	own, seen := w.counts(t)
	if own != 3*n || seen != 3*n {
		t.Fatalf("%d user clicks and %d of acu's (3 input events each): %d events taken for the user's and %d for acu's, want %d and %d",
			n, n, seen, own, 3*n, 3*n)
	}
}

// TestUserInputInsideABracketIsTakenForAcus shows the limit of telling
// input apart by time: another client's click while acu's input is
// bracketed is taken for acu's (docs/wayland.md, "The user first").
func TestUserInputInsideABracketIsTakenForAcus(t *testing.T) {
	w, _, user := openBoth(t)
	w.Begin()
	if err := user.Click(t.Context(), 50, 50, 1, 1); err != nil {
		t.Fatalf("the user's click: %v", err)
	}
	w.End()
	if own, seen := w.counts(t); own == 0 || seen != 0 {
		t.Fatalf("a click inside a bracket: %d events taken for acu's, %d for the user's; want some, 0", own, seen)
	}
	if last := w.LastUser(); !last.IsZero() {
		t.Fatalf("LastUser = %v, want the zero time", last)
	}
}

// TestEventsPerInput counts the resumed events of one click and one typed
// character of another client: with a 0 ms timeout each input event is
// one (the granularity docs/wayland.md states).
func TestEventsPerInput(t *testing.T) {
	w, _, user := openBoth(t)
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"click (motion, press, release)", func() error { return user.Click(t.Context(), 30, 30, 1, 1) }},
		{"typed character (press, release)", func() error { return user.Type(t.Context(), "x") }},
		{"pointer motion", func() error { return user.Move(t.Context(), 80, 40) }},
	} {
		_, u0 := w.counts(t)
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		_, u1 := w.counts(t)
		t.Logf("%s: %d resumed events", step.name, u1-u0)
		if u1 == u0 {
			t.Errorf("%s: no resumed event", step.name)
		}
	}
}

// BenchmarkBracket measures what bracketing costs each effect: Begin's
// round trip (before the input goes) and End's sending of its marker
// (after the device's own round trip; the marker's answer is not waited
// for).
func BenchmarkBracket(b *testing.B) {
	c := waylandtest.Start(b, 320, 200)
	ctx := context.Background()
	w, err := Open(ctx, c.Socket(), "")
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	acu, err := virtual.Open(ctx, c.Socket(), "")
	if err != nil {
		b.Fatal(err)
	}
	defer acu.Close()
	var begin, end time.Duration
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		w.Begin()
		begin += time.Since(t0)
		if err := acu.Click(ctx, 10+i%100, 10, 1, 1); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		w.End()
		end += time.Since(t1)
	}
	b.ReportMetric(float64(begin.Microseconds())/float64(b.N), "µs/begin")
	b.ReportMetric(float64(end.Microseconds())/float64(b.N), "µs/end")
}

// TestIdleInhibitorHidesTheUser pins a limit of org_kde_kwin_idle on sway
// 1.7: while a window inhibits idle (here sway's own `inhibit_idle open`
// on a foot window; a video player's zwp_idle_inhibitor_v1 does the
// same), sway disables the idle timers, so the user's input is not
// reported at all; once the inhibitor goes, it is again
// (docs/wayland.md, "The user first"). Blind tells which state it is in,
// and asking it is not the user's input.
func TestIdleInhibitorHidesTheUser(t *testing.T) {
	c := waylandtest.Start(t, 320, 200)
	waylandtest.Client(t, c, "foot", "--app-id=inhibitor", "sh", "-c", "exec sleep 600")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if wins, _ := sway.Windows(t.Context(), c.IPCSocket()); len(wins) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("foot's window did not show")
		}
		time.Sleep(20 * time.Millisecond)
	}
	w, _, user := openOn(t, c)
	for i, step := range []struct {
		inhibit string
		seen    bool
	}{{"open", false}, {"none", true}} {
		if err := sway.Command(t.Context(), c.IPCSocket(), "[app_id=inhibitor] inhibit_idle "+step.inhibit); err != nil {
			t.Fatalf("inhibit_idle %s: %v", step.inhibit, err)
		}
		blind, err := w.Blind(t.Context())
		if err != nil {
			t.Fatalf("Blind: %v", err)
		}
		if blind != !step.seen {
			t.Errorf("inhibit_idle %s: Blind = %v, want %v", step.inhibit, blind, !step.seen)
		}
		_, before := w.counts(t)
		if err := user.Click(t.Context(), 40+i, 40, 1, 1); err != nil {
			t.Fatalf("the user's click: %v", err)
		}
		_, after := w.counts(t)
		if seen := after > before; seen != step.seen {
			t.Errorf("inhibit_idle %s: the user's click seen = %v (%d events), want %v", step.inhibit, seen, after-before, step.seen)
		}
	}
	_, before := w.counts(t)
	for range 3 {
		if blind, err := w.Blind(t.Context()); blind || err != nil {
			t.Fatalf("Blind with no inhibitor = %v, %v; want false, nil", blind, err)
		}
	}
	if _, after := w.counts(t); after != before {
		t.Errorf("Blind's probe was taken for the user's input %d times", after-before)
	}
}

// TestBeginFlushedSeesTheUsersInputBefore clicks with another client's
// pointer and, as soon as the click is taken, opens a bracket with
// BeginFlushed and clicks with acu's, 50 times: the time it returns is
// at or after the user's click each time (its one round trip read it),
// and every event is counted on its own side.
func TestBeginFlushedSeesTheUsersInputBefore(t *testing.T) {
	w, acu, user := openBoth(t)
	const n = 50
	for i := range n {
		before := time.Now()
		if err := user.Click(t.Context(), 100+i, 50, 1, 1); err != nil {
			t.Fatalf("the user's click %d: %v", i, err)
		}
		last, _, err := w.BeginFlushed(t.Context())
		if err != nil {
			t.Fatalf("BeginFlushed %d: %v", i, err)
		}
		if last.Before(before) {
			t.Fatalf("click %d: BeginFlushed returned the user's last input %v, before the click at %v", i, last, before)
		}
		if err := acu.Click(t.Context(), 10+i, 10, 1, 1); err != nil {
			t.Fatalf("acu's click %d: %v", i, err)
		}
		w.End()
	}
	own, seen := w.counts(t)
	if own != 3*n || seen != 3*n {
		t.Fatalf("%d user clicks and %d of acu's (3 input events each): %d events taken for the user's and %d for acu's, want %d and %d",
			n, n, seen, own, 3*n, 3*n)
	}
}

// TestCancelledBracketIsTheUsers: input read in a bracket that is
// cancelled (acu sent nothing in it: the gate refused the effect) is the
// user's, and input after the cancel is too; no bracket stays open.
func TestCancelledBracketIsTheUsers(t *testing.T) {
	w, _, user := openBoth(t)
	if _, _, err := w.BeginFlushed(t.Context()); err != nil { // a bracket ended by End: nothing in it
		t.Fatal(err)
	}
	w.End()
	before := time.Now()
	_, cancel, err := w.BeginFlushed(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := user.Click(t.Context(), 50, 50, 1, 1); err != nil {
		t.Fatalf("the user's click: %v", err)
	}
	if err := w.Flush(t.Context()); err != nil { // the click is read inside the bracket
		t.Fatal(err)
	}
	cancel()
	cancel() // a second cancel does nothing
	if own, seen := w.counts(t); own != 0 || seen != 3 {
		t.Fatalf("a click inside a cancelled bracket: %d events taken for acu's, %d for the user's; want 0, 3", own, seen)
	}
	if last := w.LastUser(); last.Before(before) {
		t.Fatalf("LastUser = %v, want at or after %v", last, before)
	}
	_, cancel, err = w.BeginFlushed(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := user.Click(t.Context(), 60, 60, 1, 1); err != nil {
		t.Fatalf("the user's click: %v", err)
	}
	if own, seen := w.counts(t); own != 0 || seen != 6 {
		t.Fatalf("a click after a cancelled bracket: %d events taken for acu's, %d for the user's; want 0, 6", own, seen)
	}
}

// TestBeginFlushedOnAStoppedWatch: once the watch has stopped,
// BeginFlushed is an error (the user's input cannot be read), and its
// cancel does nothing.
func TestBeginFlushedOnAStoppedWatch(t *testing.T) {
	w, _, _ := openBoth(t)
	w.Close()
	_, cancel, err := w.BeginFlushed(t.Context())
	if err == nil {
		t.Fatal("BeginFlushed on a closed watch: no error")
	}
	cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.begun != 0 || w.open != 0 {
		t.Fatalf("after a failed BeginFlushed: %d Begins without End, %d brackets open; want 0", w.begun, w.open)
	}
}
