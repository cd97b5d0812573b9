package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
)

// waitForBuildFinished runs `acu wait '"Build finished" is visible'` with
// args (the display, a target) against the running daemon, creates flag
// once the wait is registered (the app prints the text only then, so the
// wait has judged the screen without it first), and returns the wait
// once it resolved with the text. The Wayland and GNOME wait tests share
// it.
func waitForBuildFinished(t *testing.T, env []string, flag string, args ...string) api.Wait {
	t.Helper()
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := acu(t, env, append(append([]string{"wait", `"Build finished" is visible`}, args...), "--timeout", "90", "--json")...)
		done <- result{out, errOut, code}
	}()
	eventually(t, 60*time.Second, "the wait to start", func() bool {
		out, _, _ := acu(t, env, "waits", "--json")
		return strings.Contains(out, "Build finished")
	})
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("acu wait did not return")
	}
	if r.code != 0 {
		t.Fatalf("acu wait: exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.errOut)
	}
	var w api.Wait
	if err := json.Unmarshal([]byte(r.out), &w); err != nil {
		t.Fatalf("acu wait --json printed %q: %v", r.out, err)
	}
	t.Logf("wait: %s %q screenshot %s", w.State, w.Message, w.Screenshot)
	if w.State != "resolved" || !strings.Contains(w.Message, "Build finished") {
		t.Fatalf("wait = %s %q, want resolved", w.State, w.Message)
	}
	return w
}
