package xvfb

import (
	"context"
	"errors"
	"fmt"

	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/acu-dev/acu/internal/daemonproc"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// defaultWMTimeout bounds the wait for a window manager to announce itself.
const defaultWMTimeout = 10 * time.Second

// startWM starts the first installed window manager on the server and
// waits until it has announced itself: it has set _NET_SUPPORTING_WM_CHECK
// on the root window (EWMH), or, for a window manager without EWMH, it owns
// the WM_S0 manager selection (ICCCM).
// Before that, a window mapped on the display is not yet managed (no frame,
// no focus, no EWMH state), so callers that act at once must not see the
// display as ready. None installed is not an error.
func (s *Server) startWM(ctx context.Context, rec *Record) error {
	wm, path := findWM()
	if path == "" {
		s.log.Info("no window manager installed; display runs without one", "display", s.name)
		return nil
	}
	w := exec.Command(path)
	w.Env = append(os.Environ(), "DISPLAY="+s.name)
	// The window manager's output: a file beside the display's log when the
	// display outlives this process (a pipe to it would break), else memory.
	out := daemonproc.NewTail(8 << 10)
	var logPath string
	if s.opts.Detach {
		w.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if s.opts.StateDir != "" {
			logPath = filepath.Join(s.opts.StateDir, "wm-"+strings.TrimPrefix(s.name, ":")+".log")
			f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return fmt.Errorf("start window manager %s on %s: log file: %w", wm, s.name, err)
			}
			defer f.Close()
			w.Stdout, w.Stderr = f, f
		}
	} else {
		w.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		w.Stdout, w.Stderr = out, out
	}
	if err := w.Start(); err != nil {
		return fmt.Errorf("start window manager %s on %s: %w (start the display without a window manager, or reinstall %s)", wm, s.name, err, wm)
	}
	exited := make(chan struct{})
	go func() { _ = w.Wait(); close(exited) }() // reaped here; its exit after start is not the display's error
	s.wm, s.wmDone = w, exited
	rec.WM, rec.WMPid = wm, w.Process.Pid

	timeout := s.opts.WMTimeout
	if timeout <= 0 {
		timeout = defaultWMTimeout
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := waitWM(wctx, s.name, !ownsSelectionOnly[wm], exited); err != nil {
		output := strings.TrimSpace(out.String())
		if logPath != "" {
			if b, rerr := os.ReadFile(logPath); rerr == nil {
				output = strings.TrimSpace(string(b))
			}
		}
		if len(output) > 2000 {
			output = "…" + output[len(output)-2000:]
		}
		if output == "" {
			output = "no output"
		}
		select {
		case <-exited:
		default:
			_ = w.Process.Signal(syscall.SIGKILL)
			<-exited
		}
		s.wm = nil
		return fmt.Errorf("start window manager %s on %s: %w; its output: %s (start the display without a window manager, or fix %s)", wm, s.name, err, output, wm)
	}
	s.log.Info("window manager started", "display", s.name, "wm", wm)
	return nil
}

// ownsSelectionOnly are the window managers of WindowManagers that follow
// ICCCM (they take the WM_S0 selection) but not EWMH (they never set
// _NET_SUPPORTING_WM_CHECK).
var ownsSelectionOnly = map[string]bool{"twm": true}

// waitWM polls the display until a window manager has announced itself, the
// window manager exits (exited closes) or ctx ends. An EWMH window manager
// is up once _NET_SUPPORTING_WM_CHECK is set: openbox takes WM_S0 first and
// sets the property after its set-up, and clients (acu's window list among
// them) find the window manager by the property. Others are up once they
// own WM_S0.
func waitWM(ctx context.Context, display string, ewmh bool, exited <-chan struct{}) error {
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		return fmt.Errorf("connect to check the window manager: %w", err)
	}
	defer c.Close()
	root := xproto.Setup(c).DefaultScreen(c).Root
	atom := func(name string) (xproto.Atom, error) {
		r, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
		if err != nil {
			return 0, err
		}
		return r.Atom, nil
	}
	wmS0, err := atom("WM_S0")
	if err != nil {
		return err
	}
	check, err := atom("_NET_SUPPORTING_WM_CHECK")
	if err != nil {
		return err
	}
	start := time.Now()
	for {
		if ewmh {
			if p, err := xproto.GetProperty(c, false, root, check, xproto.AtomWindow, 0, 1).Reply(); err == nil && p.ValueLen > 0 {
				return waitWMEventLoop(ctx, c, root, atom, exited)
			}
		} else if o, err := xproto.GetSelectionOwner(c, wmS0).Reply(); err == nil && o.Owner != xproto.WindowNone {
			return nil
		}
		select {
		case <-exited:
			return errors.New("it exited before managing the screen")
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				what := "set _NET_SUPPORTING_WM_CHECK on the root window (EWMH)"
				if !ewmh {
					what = "take the WM_S0 selection (ICCCM)"
				}
				return fmt.Errorf("not ready after %s: it did not %s", time.Since(start).Round(time.Millisecond), what)
			}
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// supportedGrace bounds how long, once _NET_SUPPORTING_WM_CHECK is set, the
// wait looks for the window manager's _NET_SUPPORTED list (set in the same
// set-up, right after it).
const supportedGrace = time.Second

// waitWMEventLoop waits, once an EWMH window manager has announced itself,
// until it handles requests: announcing comes early in a window manager's
// start-up (openbox sets _NET_SUPPORTING_WM_CHECK as it takes the screen,
// then reads its configuration, themes and menus and manages the windows
// already there before it reads its first event). When it lists
// _NET_REQUEST_FRAME_EXTENTS in _NET_SUPPORTED, an unmapped probe window asks
// for its frame extents, which the window manager answers (by setting
// _NET_FRAME_EXTENTS on it) from its event loop; the answer means the
// start-up is over. A window manager that does not offer the request is
// taken as ready when announced.
func waitWMEventLoop(ctx context.Context, c *xgb.Conn, root xproto.Window, atom func(string) (xproto.Atom, error), exited <-chan struct{}) error {
	supported, err := atom("_NET_SUPPORTED")
	if err != nil {
		return err
	}
	request, err := atom("_NET_REQUEST_FRAME_EXTENTS")
	if err != nil {
		return err
	}
	extents, err := atom("_NET_FRAME_EXTENTS")
	if err != nil {
		return err
	}
	offers := false
	for t0 := time.Now(); ; {
		p, err := xproto.GetProperty(c, false, root, supported, xproto.AtomAtom, 0, 4096).Reply()
		if err == nil && p.ValueLen > 0 {
			for i := 0; i+4 <= len(p.Value); i += 4 {
				if xproto.Atom(xgb.Get32(p.Value[i:])) == request {
					offers = true
					break
				}
			}
			break
		}
		if time.Since(t0) > supportedGrace {
			break
		}
		if err := pause(ctx, exited, t0, "list what it supports (_NET_SUPPORTED)"); err != nil {
			return err
		}
	}
	if !offers {
		return nil
	}
	probe, err := xproto.NewWindowId(c)
	if err != nil {
		return err
	}
	if err := xproto.CreateWindowChecked(c, 0, probe, root, -10, -10, 1, 1, 0,
		xproto.WindowClassInputOutput, 0, 0, nil).Check(); err != nil {
		return fmt.Errorf("create a probe window: %w", err)
	}
	defer xproto.DestroyWindow(c, probe)
	ev := xproto.ClientMessageEvent{Format: 32, Window: probe, Type: request,
		Data: xproto.ClientMessageDataUnionData32New([]uint32{0, 0, 0, 0, 0})}
	// The request is sent again every 60 ms: openbox drops one that
	// comes while it is still starting.
	for t0, n := time.Now(), 0; ; n++ {
		if n%3 == 0 {
			if err := xproto.SendEventChecked(c, false, root,
				xproto.EventMaskSubstructureNotify|xproto.EventMaskSubstructureRedirect, string(ev.Bytes())).Check(); err != nil {
				return fmt.Errorf("ask for frame extents: %w", err)
			}
		}
		if p, err := xproto.GetProperty(c, false, probe, extents, xproto.AtomCardinal, 0, 4).Reply(); err == nil && p.ValueLen == 4 {
			return nil
		}
		if err := pause(ctx, exited, t0, "answer a request (_NET_REQUEST_FRAME_EXTENTS) after announcing itself: its start-up is not over"); err != nil {
			return err
		}
	}
}

// pause waits 20 ms; it fails when the window manager exits or ctx ends,
// saying what it did not do since start.
func pause(ctx context.Context, exited <-chan struct{}, start time.Time, what string) error {
	select {
	case <-exited:
		return errors.New("it exited before managing the screen")
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("not ready after %s: it did not %s", time.Since(start).Round(time.Millisecond), what)
		}
		return ctx.Err()
	case <-time.After(20 * time.Millisecond):
		return nil
	}
}
