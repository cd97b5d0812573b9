package leakcheck

import (
	"strings"
	"testing"
	"time"
)

func parkForever(stop chan struct{}) { <-stop }

func TestLeakedFindsAndForgets(t *testing.T) {
	stop := make(chan struct{})
	go parkForever(stop)
	got := Leaked(100*time.Millisecond, "leakcheck.parkForever")
	if !strings.Contains(got, "parkForever") {
		t.Fatalf("Leaked() = %q, want the parked goroutine", got)
	}
	close(stop)
	if got := Leaked(2*time.Second, "leakcheck.parkForever"); got != "" {
		t.Fatalf("Leaked() after stop = %q, want none", got)
	}
}
