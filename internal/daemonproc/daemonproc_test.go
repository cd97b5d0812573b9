package daemonproc

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/acu-dev/acu/internal/leakcheck"
)

// childEnv makes the test binary a child process instead of running the
// tests: "ignore-term" ignores SIGTERM, "plain" keeps the default; both
// say "ready" once set up and then block.
const childEnv = "DAEMONPROC_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		leakcheck.Main(m, "acu-dev/acu/")
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		child()
	default:
		child()
	}
}

func child() {
	os.Stdout.WriteString("ready\n")
	// A sleep, not select{}: with no goroutine runnable and no timer the
	// runtime ends the child as deadlocked (exit 2), which -race hides.
	for {
		time.Sleep(time.Hour)
	}
}

// startChild starts the test binary as a child of the given kind and
// returns once it is set up; the child is killed and reaped at cleanup.
// done is closed once it has exited; its wait status is then in *status.
func startChild(t *testing.T, kind string) (cmd *exec.Cmd, done chan struct{}, status *syscall.WaitStatus) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+kind)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	done = make(chan struct{})
	status = new(syscall.WaitStatus)
	line, rerr := bufio.NewReader(out).ReadString('\n')
	go func() {
		_ = cmd.Wait()
		*status = cmd.ProcessState.Sys().(syscall.WaitStatus)
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	if rerr != nil || line != "ready\n" {
		t.Fatalf("child %s said %q, %v; want ready", kind, line, rerr)
	}
	return cmd, done, status
}

// anyProgram accepts every program: the tests' children are the test binary.
func anyProgram(string) bool { return true }

func TestTailKeepsTheLastBytes(t *testing.T) {
	tail := NewTail(8)
	for _, s := range []string{"abc", "defgh", "ijkl"} {
		if n, err := tail.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want %d, nil", s, n, err, len(s))
		}
	}
	if got, want := tail.String(), "efghijkl"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

func TestRunning(t *testing.T) {
	self := os.Getpid()
	if !Running(self, anyProgram) {
		t.Errorf("Running(own pid, any program) = false, want true")
	}
	want := filepath.Base(os.Args[0])
	if !Running(self, func(p string) bool { return p == want }) {
		t.Errorf("Running(own pid, program %q) = false, want true", want)
	}
	if Running(self, func(p string) bool { return p == "Xvfb" }) {
		t.Errorf("Running(own pid, program Xvfb) = true, want false (another program has the pid)")
	}

	// A child that has exited but is not reaped yet is a zombie: not running.
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatalf("waitid: %v", err)
	}
	zombie := Running(cmd.Process.Pid, anyProgram)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if zombie {
		t.Errorf("Running(pid of an exited, unreaped child) = true, want false")
	}
	if Running(cmd.Process.Pid, anyProgram) {
		t.Errorf("Running(pid of a reaped child) = true, want false")
	}
}

type rec struct {
	Name string `json:"name"`
	Pid  int    `json:"pid"`
}

// TestListDropsRecordsOfDeadProcesses records a running child, a child
// that has exited, a record without a pid and one that does not decode:
// List returns the running one only, hands the dead one to gone and
// removes the two broken files.
func TestListDropsRecordsOfDeadProcesses(t *testing.T) {
	dir := t.TempDir()
	live, _, _ := startChild(t, "plain")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	path := func(name string) string { return filepath.Join(dir, "srv-"+name+".json") }
	for _, r := range []rec{{"live", live.Process.Pid}, {"dead", dead.Process.Pid}, {"nopid", 0}} {
		if err := WriteRecord(path(r.Name), r); err != nil {
			t.Fatalf("WriteRecord(%s) = %v", r.Name, err)
		}
	}
	if err := os.WriteFile(path("garbage"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}

	var gone []rec
	got, err := List(filepath.Join(dir, "srv-*.json"), func(r rec) int { return r.Pid },
		func(pid int) bool { return Running(pid, anyProgram) },
		func(r rec) { gone = append(gone, r); _ = os.Remove(path(r.Name)) })
	if err != nil {
		t.Fatalf("List() = %v", err)
	}
	if diff := cmp.Diff([]rec{{"live", live.Process.Pid}}, got); diff != "" {
		t.Errorf("List() records (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]rec{{"dead", dead.Process.Pid}}, gone); diff != "" {
		t.Errorf("List() handed to gone (-want +got):\n%s", diff)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if diff := cmp.Diff([]string{path("live")}, left); diff != "" {
		t.Errorf("files left in the state dir (-want +got):\n%s", diff)
	}
}

func TestWriteRecordMakesDirAndReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state", "srv-1.json")
	for _, r := range []rec{{"first", 1}, {"second", 2}} {
		if err := WriteRecord(p, r); err != nil {
			t.Fatalf("WriteRecord(%+v) = %v", r, err)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(b), `"second"`) || strings.Contains(string(b), `"first"`) {
		t.Fatalf("record file = %s, %v; want the second record only", b, err)
	}
	if _, err := os.Stat(p + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left beside the record: %v", err)
	}
	if err := WriteRecord(filepath.Join(p, "under-a-file.json"), rec{}); err == nil {
		t.Errorf("WriteRecord under a regular file = nil, want an error")
	}
}

// running is Running for the tests' children, which cmd.Wait reaps: a
// reaped child's pid has no /proc entry.
func running(pid int) bool { return Running(pid, anyProgram) }

// TestStopEscalatesToSIGKILL stops a real child that ignores SIGTERM: Stop
// kills it with SIGKILL once the grace has passed.
func TestStopEscalatesToSIGKILL(t *testing.T) {
	cmd, done, status := startChild(t, "ignore-term")
	Stop(t.Context(), cmd.Process.Pid, 100*time.Millisecond, running)
	<-done
	if !status.Signaled() || status.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want killed by SIGKILL", *status)
	}
}

// TestStopKillsWhenContextEnds: a child that ignores SIGTERM is killed at
// once when the context ends, long before the grace.
func TestStopKillsWhenContextEnds(t *testing.T) {
	cmd, done, status := startChild(t, "ignore-term")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	Stop(ctx, cmd.Process.Pid, time.Hour, running)
	<-done
	if !status.Signaled() || status.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want killed by SIGKILL", *status)
	}
}

// TestStopEndsWithSIGTERM: a child that keeps SIGTERM's default ends by it
// and Stop returns once it is gone, without SIGKILL.
func TestStopEndsWithSIGTERM(t *testing.T) {
	cmd, done, status := startChild(t, "plain")
	Stop(t.Context(), cmd.Process.Pid, time.Hour, running)
	<-done
	if !status.Signaled() || status.Signal() != syscall.SIGTERM {
		t.Fatalf("child ended with %v, want ended by SIGTERM", *status)
	}
}

// TestTerminateEscalatesToSIGKILL: Terminate of a started child that
// ignores SIGTERM kills it after the grace and returns once it is reaped.
func TestTerminateEscalatesToSIGKILL(t *testing.T) {
	cmd, done, status := startChild(t, "ignore-term")
	Terminate(cmd.Process, done, 100*time.Millisecond)
	select {
	case <-done:
	default:
		t.Fatalf("Terminate returned before the child was reaped")
	}
	if !status.Signaled() || status.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want killed by SIGKILL", *status)
	}
}

func TestTerminateEndsWithSIGTERM(t *testing.T) {
	cmd, done, status := startChild(t, "plain")
	Terminate(cmd.Process, done, time.Hour)
	if !status.Signaled() || status.Signal() != syscall.SIGTERM {
		t.Fatalf("child ended with %v, want ended by SIGTERM", *status)
	}
}
