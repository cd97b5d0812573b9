package a11yjudge

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func pred(t *testing.T, cond string) []Predicate {
	t.Helper()
	p := Parse(cond)
	if !p.Structural() || p.Rest() != "" {
		t.Fatalf("Parse(%q) = %+v, want structural only", cond, p)
	}
	return p.Predicates()
}

// decideSoon decides cond after each event on the display until it holds
// (as a wait does), or fails after 10 s.
func decideSoon(t *testing.T, j *Judge, ch <-chan struct{}, display, cond string) Decision {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	preds := pred(t, cond)
	var last Decision
	for {
		d, err := j.Decide(ctx, display, preds, false)
		if err == nil && d.Met {
			return d
		}
		if err == nil {
			last = d
		}
		select {
		case <-ch:
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("%q never held: last %+v, err %v", cond, last, err)
		}
	}
}

func notNow(t *testing.T, j *Judge, display, cond string) {
	t.Helper()
	d, err := j.Decide(t.Context(), display, pred(t, cond), false)
	if err != nil {
		t.Fatalf("Decide(%q): %v", cond, err)
	}
	if d.Met {
		t.Errorf("Decide(%q) = met (%s), want not met", cond, d.Evidence)
	}
}

// The judge decides every kind of predicate on a real GTK application,
// woken by its AT-SPI events.
func TestJudgeGTK(t *testing.T) { testJudgeToolkit(t, atspitest.GTK) }

// And on a real Qt one (Qt's own AT-SPI bridge).
func TestJudgeQt(t *testing.T) { testJudgeToolkit(t, atspitest.Qt) }

func testJudgeToolkit(t *testing.T, toolkit string) {
	dpy := testx.StartXvfb(t, xvfb.Options{})
	s := atspitest.Start(t, dpy)
	j := New(Options{SessionBus: s.SessionBus})
	t.Cleanup(j.Close)
	ch, err := j.Watch(t.Context(), dpy)
	if err != nil {
		t.Fatal(err)
	}
	fx := s.StartFixture(t, toolkit, "Acu Fixture")
	ctx := t.Context()

	decideSoon(t, j, ch, dpy, "the window 'Acu Fixture' is open")
	notNow(t, j, dpy, "the Install button is enabled")
	decideSoon(t, j, ch, dpy, "the Install button is disabled")
	notNow(t, j, dpy, "the window 'Downloads' is open")
	decideSoon(t, j, ch, dpy, "the window 'Downloads' is gone")

	for _, step := range []struct{ cmd, cond, not string }{
		{"enable", "the Install button is enabled", "the Install button is disabled"},
		{"check", "the checkbox 'Remember me' is checked", "the Remember me check box is unchecked"},
		{"progress 0.5", "the download progress is at 50%", "the download progress reaches 100%"},
		{"progress 1", "the download progress reaches 100%", "the progress bar is below 100%"},
		{"text hello acu", `the Name field contains "acu"`, `the Name field is "acu"`},
		{"focus", "the Name field has focus", "the Install button has focus"},
		{"", "the window 'Acu Fixture' is focused", "the window 'Downloads' is focused"},
		{"row one", "the Files list has 1 item", "the Files list has at least 2 rows"},
		{"row two", "the Files list has at least 2 rows", "the Files list is empty"},
		{"dialog Export", "the Export dialog is open", "the window 'Export' is gone"},
		{"close Export", "the window 'Export' is gone", "the Export dialog is open"},
	} {
		if step.cmd != "" {
			if _, err := fx.Do(ctx, step.cmd); err != nil {
				t.Fatal(err)
			}
		}
		d := decideSoon(t, j, ch, dpy, step.cond)
		t.Logf("%s: %q holds: %s (read %s, %d nodes, %v)", step.cmd, step.cond, d.Evidence, d.Read, d.Nodes, d.Latency)
		notNow(t, j, dpy, step.not)
	}
}

// A display without an accessibility bus, or without an accessible
// application, has no tree: ErrNoTree, for the wait engine's fallback.
func TestJudgeNoTree(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{})
	j := New(Options{SessionBus: "unix:path=/nonexistent/bus"})
	t.Cleanup(j.Close)
	if _, err := j.Decide(t.Context(), dpy, pred(t, "the Save dialog is open"), true); !errors.Is(err, ErrNoTree) {
		t.Errorf("Decide without a bus = %v, want ErrNoTree", err)
	}
	s := atspitest.Start(t, dpy)
	j2 := New(Options{SessionBus: s.SessionBus})
	t.Cleanup(j2.Close)
	// With no application, "open" is not yet; "gone" cannot be told.
	if d, err := j2.Decide(t.Context(), dpy, pred(t, "the Save dialog is open"), true); err != nil || d.Met {
		t.Errorf("Decide(open) with no application = %+v, %v; want not met", d, err)
	}
	_, err := j2.Decide(t.Context(), dpy, pred(t, "the Save dialog is gone"), true)
	if !errors.Is(err, ErrNoTree) || !strings.Contains(err.Error(), "no accessible application") {
		t.Errorf("Decide(gone) with no application = %v, want ErrNoTree naming it", err)
	}
}

// An excluded window (ACU_EXCLUDE_WINDOWS) is invisible to the judge.
func TestJudgeExcludes(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{})
	s := atspitest.Start(t, dpy)
	s.StartFixture(t, atspitest.GTK, "Acu Secret Vault")
	j := New(Options{SessionBus: s.SessionBus, Exclude: []string{"secret"}})
	t.Cleanup(j.Close)
	open := New(Options{SessionBus: s.SessionBus})
	t.Cleanup(open.Close)
	decideSoon(t, open, nil, dpy, "the window 'Acu Secret Vault' is open")
	for _, cond := range []string{"the window 'Acu Secret Vault' is open", "the Install button is disabled"} {
		notNow(t, j, dpy, cond)
	}
}
