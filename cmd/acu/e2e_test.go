package main

// End-to-end tests: the real acu binary, built once in TestMain, against a
// real Xvfb, real xterms, real SQLite and the built-in OCR judge (real
// Tesseract). No model API is involved.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/jpeg"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/leakcheck"
	"github.com/acu-dev/acu/internal/pgtest"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

var acuBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "acu-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	acuBin = filepath.Join(dir, "acu")
	build := exec.Command("go", "build", "-o", acuBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build acu:", err)
		os.Exit(1)
	}
	leakcheck.MainThen(m, func() {
		pgtest.Stop()
		os.RemoveAll(dir)
	}, "acu-dev/acu/", "\nmain.", "created by main.", "github.com/jezek/xgb") // package main: cmd/acu
}

// handedOut are the ports freePort returned in this process: the kernel may
// offer a just-closed port again, and two listeners of one test (the
// daemon's and the relay's) must not get the same.
var (
	portsMu   sync.Mutex
	handedOut = map[int]bool{}
)

// freePort is a free TCP port on 127.0.0.1 that no test of this process
// was handed before (t: a test's, or a script's testing.TB).
func freePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !handedOut[p] {
			handedOut[p] = true
			return p
		}
	}
	t.Fatal("no free port not handed out before")
	return 0
}

// daemon is a real `acu serve` process.
type daemonProc struct {
	t       *testing.T
	env     []string
	dataDir string
	port    int
	cmd     *exec.Cmd
	done    chan struct{}
	log     *syncBuffer
	client  *api.Client
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newEnv returns the environment of acu processes of one test: a private
// data dir, a free port, the display, and an exec notifier that appends
// each message as a line to notified.txt.
func newEnv(t *testing.T, display string) (env []string, dataDir string, port int) {
	dataDir = t.TempDir()
	port = freePort(t)
	notified := filepath.Join(dataDir, "notified.txt")
	env = append(os.Environ(),
		"HOME="+dataDir, "XDG_CONFIG_HOME="+dataDir, "ACU_DATA_DIR="+dataDir,
		"ACU_DAEMON_PORT="+strconv.Itoa(port), "DISPLAY="+display,
		"ACU_VISION_BACKEND=ocr", "ACU_LOG_LEVEL=debug", "ACU_RELAY_PORT="+strconv.Itoa(freePort(t)),
		"ACU_NOTIFY_COMMAND="+notifyCommand(notified),
	)
	return env, dataDir, port
}

// notifyCommand is an ACU_NOTIFY_COMMAND (an exec notifier) that appends
// each message as a line to file.
func notifyCommand(file string) string {
	return "sh -c 'printf \"%s\\n\" \"$1\" >> " + file + "' sh {message}"
}

func startDaemon(t *testing.T, env []string, dataDir string, port int) *daemonProc {
	t.Helper()
	d := &daemonProc{t: t, env: env, dataDir: dataDir, port: port, done: make(chan struct{}), log: &syncBuffer{}}
	d.cmd = exec.Command(acuBin, "serve")
	d.cmd.Env = env
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() { d.stop(); d.dumpOnFailure() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-d.done:
			t.Fatalf("acu serve exited early:\n%s", d.log)
		default:
		}
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("acu serve did not answer within 30s:\n%s", d.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	tok, err := os.ReadFile(filepath.Join(dataDir, "token"))
	if err != nil {
		t.Fatal(err)
	}
	d.client = api.NewClient(base, strings.TrimSpace(string(tok)))
	return d
}

func (d *daemonProc) dumpOnFailure() {
	if d.t.Failed() {
		d.t.Logf("daemon log:\n%s", d.log)
	}
}

func (d *daemonProc) stop() {
	select {
	case <-d.done:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(15 * time.Second):
		d.t.Errorf("acu serve did not stop on SIGTERM within 15s")
		d.cmd.Process.Kill()
		<-d.done
	}
}

func (d *daemonProc) kill9() {
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
}

// acu runs the CLI with the test's environment.
func acu(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, acuBin, args...)
	cmd.Env = env
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return o.String(), e.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("acu %v: %v", args, err)
	}
	return o.String(), e.String(), 0
}

func startDisplay(t *testing.T) string {
	return testx.StartXvfb(t, xvfb.Options{Width: 1024, Height: 600})
}

// xtermShowing starts an xterm that prints text after delay.
func xtermShowing(t *testing.T, display, title, text string, delay time.Duration) {
	t.Helper()
	script := fmt.Sprintf("echo 'Downloading...'; sleep %.1f; echo '%s'; exec sleep 600", delay.Seconds(), text)
	testx.StartXterm(t, display, testx.XtermSpec{Title: title, Geometry: "70x12+20+20",
		Args: []string{"-fa", "DejaVu Sans Mono", "-fs", "14"}, Command: []string{"sh", "-c", script}})
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestWaitCLIResolvesAndNotifies(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	startDaemon(t, env, dataDir, port)
	xtermShowing(t, dpy, "download", "Download complete", 3*time.Second)

	out, errOut, code := acu(t, env, "wait", `"Download complete" is visible`, "--timeout", "60", "--target", "window:download", "--task", "task-1", "--json")
	if code != 0 {
		t.Fatalf("acu wait exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	var w api.Wait
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		t.Fatalf("acu wait --json printed %q: %v", out, err)
	}
	want := fmt.Sprintf("[smart_wait resolved] Job %s: \"Download complete\" is visible → ", w.ID)
	if w.State != "resolved" || !strings.HasPrefix(w.Message, want) {
		t.Fatalf("job = %s %q, want resolved with message starting %q", w.State, w.Message, want)
	}
	if st, err := os.Stat(w.Screenshot); err != nil || st.Size() == 0 {
		t.Errorf("screenshot %q not saved: %v", w.Screenshot, err)
	}
	notified := filepath.Join(dataDir, "notified.txt")
	eventually(t, 10*time.Second, "the exec notifier", func() bool { return len(readLines(t, notified)) == 1 })
	if got := readLines(t, notified)[0]; got != w.Message {
		t.Errorf("notified %q, want exactly %q", got, w.Message)
	}

	// Timeout: exit status 2 and the seed's message.
	out, _, code = acu(t, env, "wait", `"Never shown" is visible`, "--timeout", "2")
	if code != 2 || !strings.Contains(out, `[smart_wait timeout] Job `) || !strings.Contains(out, `: "Never shown" is visible — Timeout after 2s.`) {
		t.Errorf("timeout: exit %d, stdout %q", code, out)
	}
	// Bad input, when asked to be strict: an unknown window lists the
	// candidates; exit 1. (By default a wait waits for the window to open.)
	_, errOut, code = acu(t, env, "wait", `"x" is visible`, "--strict-target", "--target", "window:no-such-window")
	if code != 1 || !strings.Contains(errOut, "no-such-window") || !strings.Contains(errOut, "download") {
		t.Errorf("unknown window: exit %d, stderr %q", code, errOut)
	}
	// The OCR judge rejects a condition it cannot decide, naming other backends.
	_, errOut, code = acu(t, env, "wait", "the page looks finished")
	if code != 1 || !strings.Contains(strings.ToLower(errOut), "openrouter") {
		t.Errorf("undecidable condition: exit %d, stderr %q", code, errOut)
	}
}

func TestCrashKill9AndRestart(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)
	ctx := t.Context()

	// A wait that cannot resolve yet, with a long deadline.
	w, err := d.client.CreateWait(ctx, api.CreateWait{Criteria: `"Phoenix ready" is visible`, Timeout: 120})
	if err != nil {
		t.Fatal(err)
	}
	// A settle that stays live (the screen keeps changing: a clock ticks).
	clock := exec.Command("xclock", "-update", "1", "-geometry", "120x120+600+300")
	clock.Env = append(os.Environ(), "DISPLAY="+dpy)
	clock.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := clock.Start(); err != nil {
		t.Fatalf("start xclock: %v", err)
	}
	t.Cleanup(func() { clock.Process.Kill(); clock.Wait() })
	go d.client.Settle(context.WithoutCancel(ctx), api.SettleRequest{Quiet: 60, Timeout: 100})
	eventually(t, 10*time.Second, "two live runs", func() bool {
		l, err := d.client.Runs(ctx, api.RunQuery{Live: ptr(true)})
		return err == nil && len(l.Runs) == 2
	})
	eventually(t, 10*time.Second, "a verdict", func() bool {
		j, err := d.client.GetWait(ctx, w.ID)
		return err == nil && j.Evaluations > 0
	})
	before, err := d.client.EventsAfter(ctx, api.EventQuery{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	live, _ := d.client.Runs(ctx, api.RunQuery{Live: ptr(true)})
	var settleID string
	for _, r := range live.Runs {
		if r.Kind == "settle" {
			settleID = r.ID
		}
	}
	d.kill9()

	d2 := startDaemon(t, env, dataDir, port)
	after, err := d2.client.EventsAfter(ctx, api.EventQuery{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	// Nothing acknowledged is lost: every event seen before the kill is
	// still there, unchanged.
	byCursor := map[int64]api.Event{}
	for _, e := range after.Events {
		byCursor[e.Cursor] = e
	}
	for _, e := range before.Events {
		got, ok := byCursor[e.Cursor]
		if !ok || got.RunID != e.RunID || got.Seq != e.Seq || string(got.Data) != string(e.Data) {
			t.Errorf("event %d (%s seq %d) lost or changed after kill -9", e.Cursor, e.RunID, e.Seq)
		}
	}
	if before.Epoch == after.Epoch {
		t.Errorf("epoch %q did not change across the restart", after.Epoch)
	}
	// The settle run (no owner resumes settles) ended with phase error.
	sr, err := d2.client.Run(ctx, settleID)
	if err != nil {
		t.Fatal(err)
	}
	if sr.Status != "error" || !strings.Contains(sr.Error, "restarted") {
		t.Errorf("settle run after restart = %s %q, want error saying the daemon restarted", sr.Status, sr.Error)
	}
	// The wait resumed with its original deadline, and resolves.
	j, err := d2.client.GetWait(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != "watching" || !j.Deadline.Equal(w.Deadline) {
		t.Fatalf("wait after restart = %s deadline %s, want watching with deadline %s", j.State, j.Deadline, w.Deadline)
	}
	xtermShowing(t, dpy, "phoenix", "Phoenix ready", 0)
	res, err := d2.client.WaitRun(ctx, w.ID, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "resolved" {
		t.Fatalf("resumed wait ended %s %s", res.Status, res.Error)
	}
	// Exactly one lifecycle start and one end for the wait, across both processes.
	evs, _ := d2.client.EventsAfter(ctx, api.EventQuery{RunID: w.ID, Streams: []string{"lifecycle"}})
	var phases []string
	for _, e := range evs.Events {
		var lc api.Lifecycle
		json.Unmarshal(e.Data, &lc)
		phases = append(phases, lc.Phase)
	}
	if strings.Join(phases, ",") != "start,end" {
		t.Errorf("wait lifecycle phases = %v, want start,end", phases)
	}
}

func ptr[T any](v T) *T { return &v }

func TestDeadlinePassesWhileDown(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)
	w, err := d.client.CreateWait(t.Context(), api.CreateWait{Criteria: `"Nothing" is visible`, Timeout: 2})
	if err != nil {
		t.Fatal(err)
	}
	d.kill9()
	time.Sleep(time.Until(w.Deadline) + 200*time.Millisecond)
	d2 := startDaemon(t, env, dataDir, port)
	res, err := d2.client.WaitRun(t.Context(), w.ID, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "timeout" {
		t.Fatalf("wait ended %s, want timeout", res.Status)
	}
	notified := filepath.Join(dataDir, "notified.txt")
	eventually(t, 10*time.Second, "the timeout notification", func() bool { return len(readLines(t, notified)) == 1 })
	want := fmt.Sprintf(`[smart_wait timeout] Job %s: "Nothing" is visible — Timeout after 2s.`, w.ID)
	if got := readLines(t, notified)[0]; got != want {
		t.Errorf("notified %q, want %q", got, want)
	}
}

func TestCLIBasics(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	// Bad configuration names the variable and the accepted values.
	bad := append(append([]string{}, env...), "ACU_VISION_BACKEND=gpt9")
	_, errOut, code := acu(t, bad, "serve")
	if code != 1 || !strings.Contains(errOut, "ACU_VISION_BACKEND") || !strings.Contains(errOut, "openrouter") {
		t.Errorf("bad config: exit %d, stderr %q", code, errOut)
	}
	// No daemon yet: a clear message.
	_, errOut, code = acu(t, env, "runs")
	if code != 1 || !strings.Contains(errOut, "acu serve") {
		t.Errorf("runs without daemon: exit %d, stderr %q", code, errOut)
	}
	startDaemon(t, env, dataDir, port)
	out, _, code := acu(t, env, "config")
	if code != 0 || !strings.Contains(out, "ACU_DAEMON_PORT="+strconv.Itoa(port)) {
		t.Errorf("config: exit %d, %q", code, out)
	}
	out, _, code = acu(t, env, "version")
	if code != 0 || !strings.HasPrefix(out, "acu ") {
		t.Errorf("version: %q", out)
	}
	// Screenshot locally, as PNG and as the judge's JPEG.
	for _, name := range []string{"s.png", "s.jpg"} {
		p := filepath.Join(dataDir, name)
		_, errOut, code = acu(t, env, "screenshot", "-o", p)
		if st, err := os.Stat(p); code != 0 || err != nil || st.Size() == 0 {
			t.Errorf("screenshot %s: exit %d %s", name, code, errOut)
		}
	}
	// Settle on a static screen settles.
	out, _, code = acu(t, env, "settle", "--quiet", "300ms", "--timeout", "10s")
	if code != 0 || !strings.Contains(out, `"settled": true`) {
		t.Errorf("settle: exit %d %q", code, out)
	}
	// runs lists the settle run; events prints stored events as JSON lines.
	out, _, code = acu(t, env, "runs")
	if code != 0 || !strings.Contains(out, "settle") {
		t.Errorf("runs: exit %d %q", code, out)
	}
	out, _, code = acu(t, env, "events", "--follow=false")
	sc := bufio.NewScanner(strings.NewReader(out))
	n := 0
	for sc.Scan() {
		var e api.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Errorf("events line %q: %v", sc.Text(), err)
		}
		n++
	}
	if code != 0 || n < 2 {
		t.Errorf("events: exit %d, %d lines", code, n)
	}
	// acu serve started the relay on its own port, with a generated token
	// (0600) that its clients send; without it the relay answers 401.
	// `acu open` and `acu relay open` print one-time links whose code is
	// in the fragment.
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "ACU_RELAY_PORT="); ok {
			fi, err := os.Stat(filepath.Join(dataDir, "relay-token"))
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("relay token file: %v %v, want mode 0600", fi, err)
			}
			tok, _ := os.ReadFile(filepath.Join(dataDir, "relay-token"))
			for _, auth := range []string{"", "Bearer " + strings.TrimSpace(string(tok))} {
				req, _ := http.NewRequest("GET", "http://127.0.0.1:"+p+"/health", nil)
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("relay health: %v", err)
				}
				resp.Body.Close()
				if want := map[bool]int{true: 401, false: 200}[auth == ""]; resp.StatusCode != want {
					t.Errorf("relay /health (token %v) = %d, want %d", auth != "", resp.StatusCode, want)
				}
			}
			out, errOut, code := acu(t, env, "relay", "open")
			if code != 0 || !strings.HasPrefix(out, "http://127.0.0.1:"+p+"/#code=") || strings.Contains(out, strings.TrimSpace(string(tok))) {
				t.Errorf("relay open: exit %d %q %q", code, out, errOut)
			}
		}
	}
	out, errOut, code = acu(t, env, "open", "/v1/runs")
	if code != 0 || !strings.HasPrefix(out, "http://127.0.0.1:"+strconv.Itoa(port)+"/#code=") {
		t.Errorf("open: exit %d %q %q", code, out, errOut)
	}
	// doctor passes: display, OCR judge, tesseract, notifier (sh), daemon.
	out, errOut, code = acu(t, env, "doctor")
	if code != 0 || !strings.Contains(out, "ok   judge      ocr") {
		t.Errorf("doctor: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestActCLI drives `acu act` against a real X client that records the input
// it receives: normalized coordinates land on the expected pixels, inside a
// crop too, and typed text arrives as characters.
func TestActCLI(t *testing.T) {
	dpy := startDisplay(t) // 1024x600
	env, _, _ := newEnv(t, dpy)
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "target", X: 0, Y: 0, W: 1024, H: 600})
	w.Focus()
	run := func(args ...string) {
		t.Helper()
		if out, errOut, code := acu(t, env, append([]string{"act"}, args...)...); code != 0 {
			t.Fatalf("acu act %v: exit %d %s %s", args, code, out, errOut)
		}
	}
	run("click", "500", "500")
	// A crop of the right half: (0,0) in it is the screen's (512,0); a far
	// out-of-range point is clamped into it.
	run("--crop", "500,0,1000,1000", "click", "0", "0")
	run("--crop", "500,0,1000,1000", "right_click", "5000", "-10")
	run("type", "hi there!")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	evs, err := w.WaitFor(ctx, func(evs []testx.Event) bool {
		presses, typed := 0, 0
		for _, e := range evs {
			if e.Kind == testx.ButtonPress {
				presses++
			}
			if e.Rune != 0 {
				typed++
			}
		}
		return presses >= 3 && typed >= len("hi there!")
	})
	if err != nil {
		t.Fatalf("events: %v (got %+v)", err, evs)
	}
	var clicks [][3]int
	for _, e := range evs {
		if e.Kind == testx.ButtonPress {
			clicks = append(clicks, [3]int{e.RootX, e.RootY, e.Button})
		}
	}
	want := [][3]int{{512, 300, 1}, {512, 0, 1}, {1023, 0, 3}}
	for i, c := range want {
		if i >= len(clicks) || clicks[i] != c {
			t.Errorf("click %d = %v, want %v (all: %v)", i, clicks, c, clicks)
		}
	}
	if got := w.Typed(); got != "hi there!" {
		t.Errorf("typed %q, want %q", got, "hi there!")
	}

	// One grammar with or without a daemon: flags after the action,
	// X,Y and X,Y@WxH positions, drags between positions, a negative
	// scroll, and "--" for text that looks like a flag.
	w.ResetEvents()
	run("click", "250,500", "--button", "right")
	run("--local", "click", "100,200@1024x600")
	run("drag", "100,100", "400,400")
	run("scroll", "500,500", "-3")
	run("type", "--", "--at")
	evs, err = w.WaitFor(ctx, func(evs []testx.Event) bool {
		presses := 0
		for _, e := range evs {
			if e.Kind == testx.ButtonPress {
				presses++
			}
		}
		return presses >= 6 && strings.HasSuffix(w.Typed(), "--at")
	})
	if err != nil {
		t.Fatalf("events: %v (got %+v)", err, evs)
	}
	clicks = nil
	for _, e := range evs {
		if e.Kind == testx.ButtonPress {
			clicks = append(clicks, [3]int{e.RootX, e.RootY, e.Button})
		}
	}
	want = [][3]int{{256, 300, 3}, {100, 200, 1}, {102, 60, 1}}
	for i, c := range want {
		if i >= len(clicks) || clicks[i] != c {
			t.Errorf("click %d = %v, want %v (all: %v)", i, clicks, c, clicks)
		}
	}
	var up int
	for _, c := range clicks[3:] {
		if c[2] == 4 { // wheel up: a negative scroll
			up++
		}
	}
	if up != 3 {
		t.Errorf("scroll -3: %d wheel-up clicks, want 3 (all: %v)", up, clicks)
	}
	if out, _, code := acu(t, env, "act", "click", "btn_ok", "--settle"); code == 2 || strings.Contains(out, "Usage") {
		t.Errorf("acu act click btn_ok --settle: exit %d (usage), want the action tried", code)
	}
}

// TestEventRetention: a daemon started with a tiny ACU_EVENT_RETENTION
// deletes the progress events of ended runs and keeps the runs and their
// lifecycle.
func TestEventRetention(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	d := startDaemon(t, env, dataDir, port)
	ctx := t.Context()
	w, err := d.client.CreateWait(ctx, api.CreateWait{Criteria: `"Nothing here" is visible`, Timeout: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := d.client.WaitRun(ctx, w.ID, 30*time.Second); err != nil || res.Status != "timeout" {
		t.Fatalf("wait = %+v, %v", res, err)
	}
	streams := func(c *api.Client) map[string]int {
		l, err := c.EventsAfter(ctx, api.EventQuery{RunID: w.ID})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int{}
		for _, e := range l.Events {
			m[e.Stream]++
		}
		return m
	}
	if got := streams(d.client); got["verdict"] == 0 || got["lifecycle"] != 2 {
		t.Fatalf("events before = %v, want verdicts and two lifecycle events", got)
	}
	d.stop()
	d2 := startDaemon(t, append(append([]string{}, env...), "ACU_EVENT_RETENTION=1ms"), dataDir, port)
	eventually(t, 10*time.Second, "the verdicts to be pruned", func() bool { return streams(d2.client)["verdict"] == 0 })
	if got := streams(d2.client); got["lifecycle"] != 2 {
		t.Errorf("events after pruning = %v, want the two lifecycle events kept", got)
	}
	if r, err := d2.client.Run(ctx, w.ID); err != nil || r.Status != "timeout" {
		t.Errorf("run after pruning = %+v, %v", r, err)
	}
}

// TestBenchJudgeFromAnyDirectory: `acu bench judge` runs the built-in
// labelled set from a directory that is not the repository's root.
func TestBenchJudgeFromAnyDirectory(t *testing.T) {
	env, _, _ := newEnv(t, ":0")
	cmd := exec.CommandContext(t.Context(), acuBin, "bench", "judge", "--backend", "ocr")
	cmd.Env, cmd.Dir = env, t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("acu bench judge from %s: %v\n%s", cmd.Dir, err, out)
	}
	if !strings.Contains(string(out), "from the built-in set") || !strings.Contains(string(out), "false YES") {
		t.Errorf("acu bench judge printed:\n%s", out)
	}
}

// TestServeSetsMemoryLimit: acu serve runs under ACU_MEMORY_LIMIT's soft
// limit by default, and GOMEMLIMIT wins when set (read off /metrics).
func TestServeSetsMemoryLimit(t *testing.T) {
	limitOf := func(env []string, dataDir string, port int) string {
		d := startDaemon(t, env, dataDir, port)
		defer d.stop()
		req, _ := http.NewRequest("GET", d.client.BaseURL()+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+tokenOf(t, dataDir))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "go_gc_gomemlimit_bytes "); ok {
				return v
			}
		}
		t.Fatalf("no go_gc_gomemlimit_bytes in /metrics")
		return ""
	}
	env, dataDir, port := newEnv(t, ":0")
	if got := limitOf(env, dataDir, port); got != "1.2582912e+08" {
		t.Errorf("default limit = %s, want 120MiB (1.2582912e+08)", got)
	}
	env, dataDir, port = newEnv(t, ":0")
	if got := limitOf(append(env, "ACU_MEMORY_LIMIT=256MiB"), dataDir, port); got != "2.68435456e+08" {
		t.Errorf("ACU_MEMORY_LIMIT=256MiB: limit = %s", got)
	}
	env, dataDir, port = newEnv(t, ":0")
	if got := limitOf(append(env, "ACU_MEMORY_LIMIT=256MiB", "GOMEMLIMIT=100MiB"), dataDir, port); got != "1.048576e+08" {
		t.Errorf("GOMEMLIMIT=100MiB beside ACU_MEMORY_LIMIT: limit = %s, want GOMEMLIMIT's", got)
	}
}

// TestActionsOverHTTP: `acu serve` acts through POST /v1/actions on pixels
// of a downscaled screenshot it returned, and the request shows in `acu
// runs` and `acu events` as a session run.
func TestActionsOverHTTP(t *testing.T) {
	dpy := startDisplay(t) // 1024x600
	env, dataDir, port := newEnv(t, dpy)
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "target", X: 0, Y: 0, W: 1024, H: 600})
	w.Focus()
	d := startDaemon(t, env, dataDir, port)
	d.client.SetClientName("e2e")
	ctx := t.Context()
	shot, err := d.client.ScreenshotWith(ctx, "", api.ShotOptions{Format: "jpeg", MaxWidth: 512})
	if err != nil {
		t.Fatal(err)
	}
	if shot.ID == "" || shot.Width != 512 || shot.Height != 300 {
		t.Fatalf("screenshot %dx%d id %q, want 512x300 with an id", shot.Width, shot.Height, shot.ID)
	}
	res, err := d.client.Act(ctx, api.ActRequest{Shot: shot.ID, Actions: []api.Action{
		{Kind: api.ActClick, At: &api.Point{X: ptr(100), Y: ptr(50)}},
		{Kind: api.ActType, Text: "ok"},
	}})
	if err != nil || !res.OK {
		t.Fatalf("Act = %+v, %v", res, err)
	}
	// Image pixel (100,50) of a half-size shot shows screen pixels
	// 200-201 x 100-101; acu clicks the centre.
	if at := res.Results[0].At; at == nil || *at != [2]int{201, 101} {
		t.Errorf("click at %v, want 201,101", at)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := w.WaitFor(wctx, func(evs []testx.Event) bool { return w.Typed() == "ok" }); err != nil {
		t.Fatalf("typed %q: %v", w.Typed(), err)
	}
	out, errOut, code := acu(t, env, "runs", "--kind", "session", "--json")
	if code != 0 || !strings.Contains(out, `"sessionKey": "e2e@`+dpy+`"`) {
		t.Fatalf("acu runs --kind session: exit %d %s %s", code, out, errOut)
	}
	if res.SessionRun == "" {
		t.Fatal("no session run in the answer")
	}
	out, errOut, code = acu(t, env, "events", "--run", res.SessionRun, "--follow=false")
	if code != 0 || !strings.Contains(out, `"client":"e2e"`) || !strings.Contains(out, `"kind":"click"`) {
		t.Errorf("acu events of the session: exit %d\n%s\n%s", code, out, errOut)
	}
	// Bad input is a 400 naming the field.
	_, err = d.client.Act(ctx, api.ActRequest{Actions: []api.Action{{Kind: "tap"}}})
	var se *api.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusBadRequest || se.Field != "actions[0].kind" {
		t.Errorf("unknown kind = %v, want 400 naming actions[0].kind", err)
	}
}

// TestScreenshotJPEGSizes: acu screenshot writes a full-size JPEG like any
// screenshot tool, and the judges' size on request.
func TestScreenshotJPEGSizes(t *testing.T) {
	dpy := startDisplay(t) // 1024x600
	env, _, _ := newEnv(t, dpy)
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		w, h int
	}{{nil, 1024, 600}, {[]string{"--max-dim", "512", "--quality", "50"}, 512, 300}} {
		out := filepath.Join(dir, fmt.Sprintf("shot%d.jpg", c.w))
		if _, errOut, code := acu(t, env, append([]string{"screenshot", "-o", out}, c.args...)...); code != 0 {
			t.Fatalf("acu screenshot %v: %s", c.args, errOut)
		}
		fh, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := jpeg.DecodeConfig(fh)
		fh.Close()
		if err != nil || cfg.Width != c.w || cfg.Height != c.h {
			t.Errorf("acu screenshot %v wrote %dx%d (%v), want %dx%d", c.args, cfg.Width, cfg.Height, err, c.w, c.h)
		}
	}
}
