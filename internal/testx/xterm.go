package testx

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// XtermSpec describes an xterm to start.
type XtermSpec struct {
	Title    string   // window title; default a unique "acu-xterm-N"
	Class    string   // WM_CLASS class; default "XTerm"
	Geometry string   // xterm -geometry, e.g. "80x24+0+0"
	Command  []string // run with -e; empty runs a shell
	Args     []string // extra xterm arguments, e.g. "-fa", "Monospace", "-fs", "14"
}

// Xterm is a running xterm.
type Xterm struct {
	Cmd    *exec.Cmd
	Title  string
	Window uint32 // the client window carrying the title
}

var xtermSeq atomic.Int64

// StartXterm starts xterm on display and waits until its window is mapped.
// It is killed when the test ends.
func StartXterm(t testing.TB, display string, spec XtermSpec) *Xterm {
	t.Helper()
	if spec.Title == "" {
		spec.Title = fmt.Sprintf("acu-xterm-%d-%d", os.Getpid(), xtermSeq.Add(1))
	}
	args := []string{"-T", spec.Title, "-n", spec.Title, "+sb"}
	if spec.Class != "" {
		args = append(args, "-class", spec.Class)
	}
	if spec.Geometry != "" {
		args = append(args, "-geometry", spec.Geometry)
	}
	args = append(args, spec.Args...)
	if len(spec.Command) > 0 {
		args = append(args, "-e")
		args = append(args, spec.Command...)
	}
	cmd := exec.Command("xterm", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testx: start xterm: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }() //nolint:errcheck // killed at cleanup
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := WaitWindow(ctx, display, spec.Title)
	if err != nil {
		t.Fatalf("testx: xterm %q on %s: %v", spec.Title, display, err)
	}
	return &Xterm{Cmd: cmd, Title: spec.Title, Window: id}
}

// WaitWindow waits until a mapped window whose WM_NAME equals title exists
// on display (searched two levels below the root) and returns its id.
func WaitWindow(ctx context.Context, display, title string) (uint32, error) {
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		return 0, fmt.Errorf("connect to %s: %w", display, err)
	}
	defer c.Close()
	root := xproto.Setup(c).DefaultScreen(c).Root
	for {
		if id := findTitled(c, root, title, 3); id != 0 {
			return uint32(id), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no window titled %q: %w", title, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func findTitled(c *xgb.Conn, w xproto.Window, title string, depth int) xproto.Window {
	tree, err := xproto.QueryTree(c, w).Reply()
	if err != nil {
		return 0
	}
	for _, ch := range tree.Children {
		p, err := xproto.GetProperty(c, false, ch, xproto.AtomWmName, xproto.GetPropertyTypeAny, 0, 256).Reply()
		if err == nil && string(p.Value) == title {
			if a, err := xproto.GetWindowAttributes(c, ch).Reply(); err == nil && a.MapState == xproto.MapStateViewable {
				return ch
			}
		}
		if depth > 1 {
			if id := findTitled(c, ch, title, depth-1); id != 0 {
				return id
			}
		}
	}
	return 0
}
