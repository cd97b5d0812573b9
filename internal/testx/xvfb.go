package testx

import (
	"context"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/xvfb"
)

// StartXvfb starts a fresh Xvfb (Xvfb picks a free display number unless
// opts.Display is set) and returns its display name (":N"). The server is
// stopped when the test ends. Defaults: 1280x720x24 with MIT-SHM.
func StartXvfb(t testing.TB, opts xvfb.Options) string {
	t.Helper()
	return StartServer(t, opts).Name()
}

// StartServer is StartXvfb returning the server, for tests that kill and
// restart it (opts.Display set to the old name brings it back).
func StartServer(t testing.TB, opts xvfb.Options) *xvfb.Server {
	t.Helper()
	opts.Detach = false
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := xvfb.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}
