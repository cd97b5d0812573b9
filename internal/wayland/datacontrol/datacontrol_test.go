package datacontrol_test

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/wayland/datacontrol"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

func paste(t *testing.T, c waylandtest.Compositor) string {
	t.Helper()
	cmd := exec.Command("wl-paste", "--no-newline")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, c.Env()...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("wl-paste: %v", err)
	}
	return string(out)
}

// TestRoundTripWithWlClipboard writes the clipboard and pastes it with
// wl-paste, copies with wl-copy and reads it, on a real sway.
func TestRoundTripWithWlClipboard(t *testing.T) {
	waylandtest.Need(t, "wl-paste")
	roundTrip(t, waylandtest.Start(t, 320, 200))
}

func roundTrip(t *testing.T, c waylandtest.Compositor) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cb, err := datacontrol.Open(ctx, c.Socket(), "")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer cb.Close()

	if got, err := cb.Read(ctx); !errors.Is(err, datacontrol.ErrEmpty) {
		t.Fatalf("Read of an empty clipboard = %q, %v; want ErrEmpty", got, err)
	}
	const first = "héllo ✓ clipboard\nline two"
	if err := cb.Write(ctx, first); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if got := paste(t, c); got != first {
		t.Fatalf("wl-paste after Write = %q, want %q", got, first)
	}
	if got, err := cb.Read(ctx); err != nil || got != first {
		t.Fatalf("Read of acu's own text = %q, %v; want %q", got, err, first)
	}

	const second = "from wl-copy: 日本語"
	waylandtest.Client(t, c, "wl-copy", "--foreground", second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := cb.Read(ctx)
		if err == nil && got == second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Read after wl-copy = %q, %v; want %q", got, err, second)
		}
		time.Sleep(20 * time.Millisecond)
	}

	const third = "acu again"
	if err := cb.Write(ctx, third); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if got := paste(t, c); got != third {
		t.Fatalf("wl-paste after the second Write = %q, want %q", got, third)
	}
}
