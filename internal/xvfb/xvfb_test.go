package xvfb

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func socketPath(name string) string {
	return "/tmp/.X11-unix/X" + strings.TrimPrefix(name, ":")
}

func dial(t *testing.T, name string) error {
	t.Helper()
	c, err := net.DialTimeout("unix", socketPath(name), time.Second)
	if err == nil {
		c.Close()
	}
	return err
}

func TestStartPicksDisplayAndStops(t *testing.T) {
	dir := t.TempDir()
	s, err := Start(t.Context(), Options{Width: 320, Height: 200, StateDir: dir})
	if err != nil {
		t.Fatalf("Start() = %v", err)
	}
	t.Cleanup(func() { s.Stop() })
	if !strings.HasPrefix(s.Name(), ":") {
		t.Fatalf("Name() = %q, want :N", s.Name())
	}
	if err := dial(t, s.Name()); err != nil {
		t.Fatalf("dial %s after Start: %v", s.Name(), err)
	}
	recs, err := List(dir)
	if err != nil || len(recs) != 1 || recs[0].Display != s.Name() || recs[0].Width != 320 || recs[0].Pid != s.Pid() {
		t.Fatalf("List() = %+v, %v; want one record for %s", recs, err, s.Name())
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop() = %v", err)
	}
	<-s.Done()
	recs, err = List(dir)
	if err != nil || len(recs) != 0 {
		t.Fatalf("List() after Stop = %+v, %v; want none", recs, err)
	}
}

func TestStartExplicitDisplayAndStopByName(t *testing.T) {
	dir := t.TempDir()
	// Find a free display: let Xvfb pick one, stop it, reuse its number.
	probe, err := Start(t.Context(), Options{Width: 64, Height: 64})
	if err != nil {
		t.Fatalf("Start() = %v", err)
	}
	name := probe.Name()
	probe.Stop()

	s, err := Start(t.Context(), Options{Display: name, Width: 64, Height: 64, StateDir: dir, Detach: true})
	if err != nil {
		t.Fatalf("Start(%s) = %v", name, err)
	}
	t.Cleanup(func() { s.Stop() })
	if s.Name() != name {
		t.Fatalf("Name() = %q, want %q", s.Name(), name)
	}
	// A second server on the same display fails with Xvfb's reason.
	if s2, err := Start(t.Context(), Options{Display: name, Width: 64, Height: 64}); err == nil {
		s2.Stop()
		t.Fatalf("second Start(%s) succeeded, want error", name)
	}
	if err := StopByName(t.Context(), dir, name); err != nil {
		t.Fatalf("StopByName(%s) = %v", name, err)
	}
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("server %s still running after StopByName", name)
	}
	if err := StopByName(t.Context(), dir, name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("StopByName(%s) again = %v, want ErrNotFound", name, err)
	}
	if _, err := os.Stat(recordPath(dir, name)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("record still present: %v", err)
	}
}

func TestStartBadDisplayName(t *testing.T) {
	for _, name := range []string{"99", ":x", "host:1"} {
		if _, err := Start(t.Context(), Options{Display: name}); err == nil {
			t.Errorf("Start(%q) = nil error, want invalid display", name)
		}
	}
}

func TestStartMissingBinary(t *testing.T) {
	_, err := Start(t.Context(), Options{Binary: "Xvfb-does-not-exist"})
	if err == nil || !strings.Contains(err.Error(), "xvfb") {
		t.Fatalf("Start() = %v, want error naming the xvfb package", err)
	}
}

func TestNoSHM(t *testing.T) {
	s, err := Start(t.Context(), Options{Width: 64, Height: 64, NoSHM: true, WindowManager: true})
	if err != nil {
		t.Fatalf("Start() = %v", err)
	}
	defer s.Stop()
	if err := dial(t, s.Name()); err != nil {
		t.Fatal(fmt.Errorf("dial: %w", err))
	}
}
