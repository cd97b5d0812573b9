package main

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/testx"
)

// TestDesktopCLI drives acu windows, acu launch and acu clip through the
// real daemon on Xvfb with openbox, checking the results with xclip and the
// window list.
func TestDesktopCLI(t *testing.T) {
	dpy := startDisplay(t)
	testx.StartWM(t, dpy)
	env, dataDir, port := newEnv(t, dpy)
	apps := filepath.Join(dataDir, "share", "applications")
	if err := os.MkdirAll(apps, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(apps, "acu-cli-term.desktop"),
		[]byte("[Desktop Entry]\nType=Application\nName=CLI Term\nExec=xterm -T \"acu cli entry\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(env, "XDG_DATA_HOME="+filepath.Join(dataDir, "share"))
	d := startDaemon(t, env, dataDir, port)
	defer d.stop()
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := acu(t, env, args...)
		if code != 0 {
			t.Fatalf("acu %v: exit %d: %s %s", args, code, out, errOut)
		}
		return out
	}

	var res api.LaunchResult
	if err := json.Unmarshal([]byte(run("launch", "--wait", "--timeout", "30", "CLI Term")), &res); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-res.PID, syscall.SIGKILL) })
	if res.Window == nil || res.Window.Title != "acu cli entry" {
		t.Fatalf("acu launch = %+v, want the entry's window", res)
	}
	if out := run("windows"); !strings.Contains(out, res.Window.ID) || !strings.Contains(out, "acu cli entry") {
		t.Errorf("acu windows =\n%s\nwant %s listed", out, res.Window.ID)
	}
	run("windows", "move", res.Window.ID, "120", "90", "--display", dpy) // flags anywhere
	eventually(t, 20*time.Second, "the window at 120,90", func() bool {
		var l api.WindowList
		if json.Unmarshal([]byte(run("windows", "--json")), &l) != nil {
			return false
		}
		for _, w := range l.Windows {
			if w.ID == res.Window.ID {
				return w.X == 120 && w.Y == 90
			}
		}
		return false
	})
	run("windows", "close", res.Window.ID)
	eventually(t, 20*time.Second, "the window gone", func() bool {
		_, _, code := acu(t, env, "windows", "focus", res.Window.ID)
		return code != 0
	})

	run("clip", "set", "über ✓ clip")
	xc := exec.CommandContext(t.Context(), "xclip", "-o", "-selection", "clipboard")
	xc.Env = append(os.Environ(), "DISPLAY="+dpy)
	if out, err := xc.Output(); err != nil || string(out) != "über ✓ clip" {
		t.Errorf("xclip after acu clip set = %q, %v", out, err)
	}
	if out := run("clip", "get"); out != "über ✓ clip" {
		t.Errorf("acu clip get = %q", out)
	}
	if _, errOut, code := acu(t, env, "windows", "explode", "0x1"); code == 0 || !strings.Contains(errOut, "explode") {
		t.Errorf("acu windows explode: exit %d, %s", code, errOut)
	}
}

func TestParseInterleaved(t *testing.T) {
	tests := []struct {
		args    []string
		pos     []string
		display string
	}{
		{[]string{"0x1", "10", "20"}, []string{"0x1", "10", "20"}, ""},
		{[]string{"0x1", "--display", ":9", "10", "20"}, []string{"0x1", "10", "20"}, ":9"},
		{[]string{"0x1", "10", "20", "--display=:9"}, []string{"0x1", "10", "20"}, ":9"},
		{[]string{"--display", ":9", "0x1", "--", "-5", "-6"}, []string{"0x1", "-5", "-6"}, ":9"},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		dpy := fs.String("display", "", "")
		pos, err := parseInterleaved(fs, tt.args)
		if err != nil || !slices.Equal(pos, tt.pos) || *dpy != tt.display {
			t.Errorf("parseInterleaved(%q) = %q, display %q, %v; want %q, %q", tt.args, pos, *dpy, err, tt.pos, tt.display)
		}
	}
}
