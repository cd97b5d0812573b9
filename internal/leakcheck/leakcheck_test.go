package leakcheck

import (
	"strings"
	"testing"
	"time"
)

func parkForever(started, stop chan struct{}) {
	close(started)
	<-stop
}

func TestLeakedFindsAndForgets(t *testing.T) {
	started, stop := make(chan struct{}), make(chan struct{})
	go parkForever(started, stop)
	<-started // Leaked reports what runs now; make sure it runs
	got := Leaked(100*time.Millisecond, "leakcheck.parkForever")
	if !strings.Contains(got, "parkForever") {
		t.Fatalf("Leaked() = %q, want the parked goroutine", got)
	}
	close(stop)
	if got := Leaked(2*time.Second, "leakcheck.parkForever"); got != "" {
		t.Fatalf("Leaked() after stop = %q, want none", got)
	}
}
