package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// TestScripts runs the scripts under testdata/script: the command lines of
// the README and of `acu act -h`, run by the real acu binary on a fresh
// Xvfb with real X clients, their effects checked (TestReadmeCommandsHaveScripts
// keeps every such line covered). Each script gets:
//
//   - a fresh Xvfb (1280x720) in $DISPLAY, with a session bus and the
//     accessibility bus ($DBUS_SESSION_BUS_ADDRESS), so GTK apps expose
//     their controls;
//   - HOME=$WORK, so acu's data directory is $WORK/.local/state/acu as the
//     README says; free ports in ACU_DAEMON_PORT, ACU_RELAY_PORT and
//     ACU_AGENT_PORT; the OCR judge; an exec notifier appending each
//     message to $WORK/notified.txt;
//   - the acu binary TestMain built, first on PATH.
//
// Commands of its own (besides testscript's):
//
//	export DISPLAY=:N      DISPLAY from the last stdout's DISPLAY=:N line
//	                       (as after `acu display start`); export K=V sets K
//	await daemon           until the daemon on ACU_DAEMON_PORT answers /health
//	await window TITLE [VAR]  until a window whose title contains TITLE is
//	                       mapped; its id (0x…) goes into $VAR
//	await element ID       until `acu elements` lists [ID]
//	await acu REGEXP ARGS… until `acu ARGS…` succeeds with stdout matching
//	                       REGEXP (what a window manager or an app does
//	                       after acu's command returned)
//	eval '$(CMD ARGS…)'    runs CMD and sets each NAME=VALUE line it prints
//	                       in the environment (the README's eval "$(…)")
//	await file FILE REGEXP until FILE's content matches REGEXP
//	await gone TITLE       until no window's title contains TITLE
//	await metric REGEXP    until the daemon's /metrics matches REGEXP
//
// Every await gives up after 60 s and fails the script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireUniqueNames:  true,
		RequireExplicitExec: true,
		Setup:               scriptSetup,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"export": scriptExport,
			"await":  scriptAwait,
			"eval":   scriptEval,
		},
	})
}

func scriptSetup(env *testscript.Env) error {
	tb, ok := env.T().(testing.TB)
	if !ok {
		return fmt.Errorf("testscript's T is %T, not a testing.TB", env.T())
	}
	work := env.WorkDir
	env.Setenv("HOME", work)
	env.Setenv("PATH", filepath.Dir(acuBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, k := range []string{"ACU_DAEMON_PORT", "ACU_RELAY_PORT", "ACU_AGENT_PORT"} {
		env.Setenv(k, strconv.Itoa(freePort(tb)))
	}
	env.Setenv("ACU_VISION_BACKEND", "ocr")
	env.Setenv("ACU_NOTIFY_COMMAND", notifyCommand(filepath.Join(work, "notified.txt")))
	dpy := testx.StartXvfb(tb, xvfb.Options{Width: 1280, Height: 720})
	env.Setenv("DISPLAY", dpy)
	s := atspitest.Start(tb, dpy)
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "DBUS_SESSION_BUS_ADDRESS", "GNOME_ACCESSIBILITY", "GSETTINGS_BACKEND", "GDK_BACKEND", "XDG_RUNTIME_DIR":
			env.Setenv(k, v)
		}
	}
	// Displays a script started with `acu display start` are stopped
	// whatever the script did (they run detached, in their own session).
	stateDir := filepath.Join(work, ".local", "state", "acu", "displays")
	env.Defer(func() {
		recs, _ := xvfb.List(stateDir)
		for _, r := range recs {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			_ = xvfb.StopByName(ctx, stateDir, r.Display)
			cancel()
		}
	})
	return nil
}

var displayLine = regexp.MustCompile(`(?m)^DISPLAY=(:\d+)$`)

func scriptExport(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! export")
	}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("export %s: want NAME=VALUE", a)
		}
		if k == "DISPLAY" && v == ":N" {
			m := displayLine.FindStringSubmatch(ts.ReadFile("stdout"))
			if m == nil {
				ts.Fatalf("export DISPLAY=:N: the last stdout has no DISPLAY=:N line")
			}
			v = m[1]
		}
		ts.Setenv(k, v)
	}
}

var assignLine = regexp.MustCompile(`^([A-Z_][A-Z0-9_]*)=(.*)$`)

// scriptEval is the shell's eval "$(CMD ARGS…)" for a command that prints
// NAME=VALUE lines (acu display start): it runs CMD (words split at
// spaces, no quoting inside) and sets every such line in the script's
// environment; the output is the next stdout and stderr.
func scriptEval(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 || !strings.HasPrefix(args[0], "$(") || !strings.HasSuffix(args[0], ")") {
		ts.Fatalf("usage: eval '$(CMD ARGS...)'")
	}
	words := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(args[0], "$("), ")"))
	if len(words) == 0 {
		ts.Fatalf("eval: no command inside $( )")
	}
	ts.Check(ts.Exec(words[0], words[1:]...))
	n := 0
	for _, l := range strings.Split(ts.ReadFile("stdout"), "\n") {
		if m := assignLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			v := m[2]
			if uq, err := strconv.Unquote(v); err == nil {
				v = uq
			} else {
				v = strings.Trim(v, "'")
			}
			ts.Setenv(m[1], v)
			n++
		}
	}
	if n == 0 {
		ts.Fatalf("eval: %s printed no NAME=VALUE line", args[0])
	}
}

const awaitLimit = 60 * time.Second

func scriptAwait(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: await daemon | window TITLE [VAR] | element ID | acu REGEXP ARGS... | file FILE REGEXP | gone TITLE | metric REGEXP")
	}
	var check func() (bool, string)
	switch {
	case args[0] == "daemon" && len(args) == 1:
		url := "http://127.0.0.1:" + ts.Getenv("ACU_DAEMON_PORT") + "/health"
		check = func() (bool, string) {
			resp, err := http.Get(url)
			if err != nil {
				return false, err.Error()
			}
			resp.Body.Close()
			return true, ""
		}
	case args[0] == "window" && (len(args) == 2 || len(args) == 3):
		check = func() (bool, string) {
			id, tree := findWindow(ts.Getenv("DISPLAY"), args[1])
			if id == "" {
				return false, tree
			}
			if len(args) == 3 {
				ts.Setenv(args[2], id)
			}
			return true, ""
		}
	case args[0] == "metric" && len(args) == 2:
		re, err := regexp.Compile(args[1])
		ts.Check(err)
		url := "http://127.0.0.1:" + ts.Getenv("ACU_DAEMON_PORT") + "/metrics"
		tokFile := filepath.Join(ts.Getenv("HOME"), ".local", "state", "acu", "token")
		check = func() (bool, string) {
			tok, err := os.ReadFile(tokFile)
			if err != nil {
				return false, err.Error()
			}
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return false, err.Error()
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return re.Match(b), string(b)
		}
	case args[0] == "gone" && len(args) == 2:
		check = func() (bool, string) {
			id, tree := findWindow(ts.Getenv("DISPLAY"), args[1])
			return id == "", tree
		}
	case args[0] == "element" && len(args) == 2:
		check = func() (bool, string) {
			err := ts.Exec("acu", "elements")
			out := ts.ReadFile("stdout")
			return err == nil && strings.Contains(out, "["+args[1]+"]"), out + ts.ReadFile("stderr")
		}
	case args[0] == "acu" && len(args) >= 3:
		re, err := regexp.Compile("(?m)" + args[1])
		ts.Check(err)
		check = func() (bool, string) {
			err := ts.Exec("acu", args[2:]...)
			out := ts.ReadFile("stdout")
			return err == nil && re.MatchString(out), out + ts.ReadFile("stderr")
		}
	case args[0] == "file" && len(args) == 3:
		re, err := regexp.Compile(args[2])
		ts.Check(err)
		check = func() (bool, string) {
			b, err := os.ReadFile(ts.MkAbs(args[1]))
			if err != nil {
				return false, err.Error()
			}
			return re.Match(b), string(b)
		}
	default:
		ts.Fatalf("usage: await daemon | window TITLE [VAR] | element ID | acu REGEXP ARGS... | file FILE REGEXP | gone TITLE | metric REGEXP")
	}
	if neg {
		ts.Fatalf("unsupported: ! await")
	}
	deadline := time.Now().Add(awaitLimit)
	for {
		ok, last := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if len(last) > 4000 {
				last = last[len(last)-4000:]
			}
			ts.Fatalf("await %s: not after %s; last seen:\n%s", strings.Join(args, " "), awaitLimit, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var treeLine = regexp.MustCompile(`^\s*(0x[0-9a-f]+) "(.*)":`)

// findWindow returns the id of a window on display whose title contains
// title (xwininfo's view of the tree: a real X client), and the tree.
func findWindow(display, title string) (id, tree string) {
	cmd := exec.Command("xwininfo", "-root", "-tree")
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	out, err := cmd.Output()
	if err != nil {
		return "", err.Error()
	}
	for _, line := range strings.Split(string(out), "\n") {
		if m := treeLine.FindStringSubmatch(line); m != nil && strings.Contains(m[2], title) {
			return m[1], ""
		}
	}
	return "", string(out)
}
