package notify

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Messages that a shell would mangle; exec must pass each one verbatim.
var nastyMessages = []string{
	"[smart_wait resolved] Job wait_abc: \"Download complete\" is visible → the dialog says 'Download complete'",
	"$(touch /tmp/acu-pwned) `id` ; rm -rf / | cat > /dev/null & echo $HOME",
	"-n", "--help", "",
	"line one\nline two\r\n\ttabbed  double  spaced ",
	"quotes ' \" \\ \\\\ \\' and {run_id} {message} {key} placeholders stay literal",
	"*.go ~ ? [a-z] !! #comment",
	"日本語 ✓ 🚀",
}

func TestExecMessageArrivesVerbatim(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "wake out.txt") // a space, quoted in the template
	e, err := NewExec(ExecOptions{Command: `sh -c 'printf %s "$1" > "$2"' sh {message} "` + out + `"`})
	if err != nil {
		t.Fatal(err)
	}
	for i, msg := range nastyMessages {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			d := Delivery{ID: int64(i), Key: "k:exec", BaseKey: "k", RunID: "wait_abc", Event: "resolved", Message: msg, Attempt: 1}
			if err := e.Notify(t.Context(), d); err != nil {
				t.Fatalf("Notify(%q) error %v", msg, err)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != msg {
				t.Errorf("file after Notify(%q) = %q, want the message exactly", msg, got)
			}
		})
	}
	if _, err := os.Stat("/tmp/acu-pwned"); err == nil {
		t.Errorf("a message's $(...) was run by a shell")
	}
}

// writeArgsScript writes an executable that records its argv, NUL-separated.
func writeArgsScript(t *testing.T, dir, name string) (prog, argsFile string) {
	t.Helper()
	prog = filepath.Join(dir, name)
	argsFile = filepath.Join(dir, name+".args")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > '" + argsFile + "'\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return prog, argsFile
}

func readArgs(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

func TestExecDefaultOpenClawCommand(t *testing.T) {
	dir := t.TempDir()
	prog, argsFile := writeArgsScript(t, dir, "open claw") // a path with a space: CLI is never split
	e, err := NewExec(ExecOptions{CLI: prog})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Check(); err != nil {
		t.Fatalf("Check() = %v, want nil for an existing program", err)
	}
	msg := "[smart_wait timeout] Job wait_1: a b — Timeout after 300s."
	if err := e.Notify(t.Context(), Delivery{Message: msg, RunID: "wait_1"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"system", "event", "--text", msg, "--mode", "now"}
	if diff := cmp.Diff(want, readArgs(t, argsFile)); diff != "" {
		t.Errorf("argv mismatch (-want +got):\n%s", diff)
	}
}

func TestExecPlaceholders(t *testing.T) {
	dir := t.TempDir()
	prog, argsFile := writeArgsScript(t, dir, "rec")
	e, err := NewExec(ExecOptions{Command: quoteArg(prog) + ` --run={run_id} --event {event} "key: {key}" {message}`})
	if err != nil {
		t.Fatal(err)
	}
	d := Delivery{Key: "wait_1:resolved:exec", BaseKey: "wait_1:resolved", RunID: "wait_1", Event: "resolved", Message: "{event} {run_id}"}
	if err := e.Notify(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	want := []string{"--run=wait_1", "--event", "resolved", "key: wait_1:resolved", "{event} {run_id}"}
	if diff := cmp.Diff(want, readArgs(t, argsFile)); diff != "" {
		t.Errorf("argv mismatch (-want +got):\n%s", diff)
	}
}

func TestNewExecRejects(t *testing.T) {
	tests := []struct{ name, cmd, want string }{
		{"no message placeholder", "notify-send acu", "no {message} argument"},
		{"placeholder only in program", "{message} x", "no {message} argument"},
		{"bad quoting", `notify-send "{message}`, "unterminated"},
		{"pipe", "echo {message} | wall", "without a shell"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewExec(ExecOptions{Command: tt.cmd})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewExec(%q) error = %v, want one containing %q", tt.cmd, err, tt.want)
			}
		})
	}
}

func TestExecCheckMissingProgram(t *testing.T) {
	tests := []ExecOptions{
		{CLI: "acu-no-such-openclaw"},
		{Command: "acu-no-such-program --text {message}"},
		{Command: filepath.Join(t.TempDir(), "missing") + " {message}"},
	}
	for _, opts := range tests {
		e, err := NewExec(opts)
		if err != nil {
			t.Fatal(err)
		}
		err = e.Check()
		if err == nil {
			t.Fatalf("Check() for %q = nil, want an error", e.Argv()[0])
		}
		for _, want := range []string{e.Argv()[0], "not found", "ACU_NOTIFY_COMMAND"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Check() = %q, want it to mention %q", err, want)
			}
		}
	}
}

func TestExecFailureCarriesOutput(t *testing.T) {
	e, err := NewExec(ExecOptions{Command: `sh -c 'echo "stdout line"; echo "no gateway running" >&2; exit 3' sh {message}`})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Notify(t.Context(), Delivery{Message: "m"})
	if err == nil {
		t.Fatal("Notify() = nil for exit status 3")
	}
	for _, want := range []string{"exit status 3", "stdout line", "no gateway running"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Notify() error %q, want it to contain %q", err, want)
		}
	}
}

func TestExecOutputBounded(t *testing.T) {
	e, err := NewExec(ExecOptions{MaxOutput: 100, Command: `sh -c 'i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done; exit 1' sh {message}`})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Notify(t.Context(), Delivery{Message: "m"})
	if err == nil {
		t.Fatal("Notify() = nil for exit status 1")
	}
	if len(err.Error()) > 300 {
		t.Errorf("Notify() error is %d bytes, want the output cut to about 100: %q", len(err.Error()), err)
	}
	if !strings.Contains(err.Error(), "line 1999") || !strings.Contains(err.Error(), "bytes cut") {
		t.Errorf("Notify() error %q, want the output's tail and a cut marker", err)
	}
}

func TestExecTimeoutKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	e, err := NewExec(ExecOptions{
		Timeout: 300 * time.Millisecond,
		Command: `sh -c 'sleep 300 & echo $! > "$1"; wait' sh ` + quoteArg(pidFile) + ` {message}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Notify(t.Context(), Delivery{Message: "m"})
	if err == nil || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Fatalf("Notify() error = %v, want a timeout", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The grandchild was killed with the group; wait for init to reap it.
	waitFor(t, "the command's child to be killed", func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || isZombie(pid)
	})
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestExecCancelled(t *testing.T) {
	e, err := NewExec(ExecOptions{Command: `sh -c 'sleep 300' sh {message}`})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextWithCancel(t)
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	err = e.Notify(ctx, Delivery{Message: "m"})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("Notify() error = %v, want interrupted", err)
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 5}
	for _, s := range []string{"ab", "cd", "efg", "hijklmnop", "q"} {
		b.Write([]byte(s))
	}
	if got, want := string(b.buf), "mnopq"; got != want {
		t.Errorf("tail = %q, want %q", got, want)
	}
	if got, want := b.dropped, 12; got != want {
		t.Errorf("dropped = %d, want %d", got, want)
	}
}

func BenchmarkExecArgs(b *testing.B) {
	b.ReportAllocs()
	e, err := NewExec(ExecOptions{})
	if err != nil {
		b.Fatal(err)
	}
	d := Delivery{Message: nastyMessages[0], RunID: "wait_1", Event: "resolved", BaseKey: "wait_1:resolved"}
	for b.Loop() {
		_ = e.args(d)
	}
}

// BenchmarkExecNotify is one attempt of the default command line with a
// program that exits 0 at once (fork, exec, wait).
func BenchmarkExecNotify(b *testing.B) {
	b.ReportAllocs()
	e, err := NewExec(ExecOptions{CLI: "true"})
	if err != nil {
		b.Fatal(err)
	}
	d := Delivery{Message: nastyMessages[0], RunID: "wait_1", Event: "resolved"}
	for b.Loop() {
		if err := e.Notify(b.Context(), d); err != nil {
			b.Fatal(err)
		}
	}
}
