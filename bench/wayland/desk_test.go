package waylandbench

import (
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/testx"
	wlframes "github.com/acu-dev/acu/internal/wayland/frames"
	"github.com/acu-dev/acu/internal/wayland/virtual"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
	"github.com/acu-dev/acu/internal/xvfb"
)

const (
	screenW, screenH = 1280, 720
	// marker is a block of 40x15 cells in colour 196 of the 256-colour
	// palette (pure red in xterm's and foot's palettes) at the top left,
	// drawn from the home position over what was there.
	blockCols, blockRows = 40, 15
)

// block returns the escape sequence that paints the block in 256-colour
// palette entry colour.
func block(colour int) string {
	var s strings.Builder
	s.WriteString("\033[H")
	for range blockRows {
		fmt.Fprintf(&s, "\033[48;5;%dm%s\033[0m\r\n", colour, strings.Repeat(" ", blockCols))
	}
	return s.String()
}

// clear is the escape sequence that clears the terminal to its (black)
// background.
const clear = "\033[0m\033[2J\033[H"

// capturer is what the smart-wait engine and the live view read frames
// through: capture.Hub on X11, frames.Hub on Wayland.
type capturer interface {
	Resolve(ctx context.Context, display string, t capture.Target) (capture.Resolved, error)
	Capture(ctx context.Context, display string, t capture.Target) (*frame.Frame, error)
	Watch(ctx context.Context, display string, t capture.Target) (<-chan struct{}, error)
}

// pointer is each backend's input device as the benchmarks use it.
type pointer interface {
	Click(ctx context.Context, x, y int) error
	Type(ctx context.Context, text string) error
}

// desk is one backend's display with a terminal on it, its capture hub
// and its input device.
type desk struct {
	name    string // x11 or wayland
	display string // ":N" or the compositor's socket path
	env     []string
	hub     capturer
	dev     pointer
	term    *terminal
	// ref is the script's way to act and screenshot: xdotool and xwd on
	// X11, wtype and grim on Wayland.
	refType func(text string) *exec.Cmd
	refShot func(out string) *exec.Cmd
}

// backends are the sub-benchmarks every benchmark runs, X11 first.
var backends = []string{"x11", "wayland"}

// startDesk starts a 1280x720 display of backend with a terminal running
// setup (stty arguments and escapes) whose received bytes come out of
// d.term.
func startDesk(b *testing.B, backend, stty, escapes string) *desk {
	b.Helper()
	dir := b.TempDir()
	t := newTerminal(b, dir)
	script := fmt.Sprintf(`stty %s; printf '%s'; cat %s & exec cat > %s`, stty, escapes, t.inPath, t.outPath)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := &desk{name: backend}
	switch backend {
	case "x11":
		for _, p := range []string{"xterm", "xdotool", "xwd"} {
			need(b, p)
		}
		d.display = testx.StartXvfb(b, xvfb.Options{Width: screenW, Height: screenH})
		d.env = append(os.Environ(), "DISPLAY="+d.display)
		testx.StartXterm(b, d.display, testx.XtermSpec{Geometry: "200x50+0+0", Command: []string{"sh", "-c", script},
			Args: []string{"-bg", "black", "-fg", "white"}})
		hub, err := capture.NewHub(capture.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { hub.Close() })
		d.hub = hub
		conn, err := display.Open(ctx, d.display, display.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close() })
		// No hold between press and release: the Wayland device has none.
		dev, err := input.New(conn, input.Area{W: screenW, H: screenH}, input.Options{ClickDelay: -1})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { dev.Close() })
		d.dev = xDevice{dev}
		d.refType = func(text string) *exec.Cmd { return d.cmd("xdotool", "type", "--delay", "0", text) }
		d.refShot = func(out string) *exec.Cmd { return d.cmd("xwd", "-root", "-silent", "-out", out) }
	case "wayland":
		for _, p := range []string{"foot", "wtype", "grim"} {
			waylandtest.Need(b, p)
		}
		c := waylandtest.Start(b, screenW, screenH)
		d.display = c.Socket()
		d.env = append(os.Environ(), c.Env()...)
		waylandtest.Client(b, c, "foot", "--override=colors.background=000000", "sh", "-c", script)
		hub := wlframes.New(wlframes.Options{})
		b.Cleanup(func() { hub.Close() })
		d.hub = hub
		dev, err := virtual.Open(ctx, c.Socket(), "")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { dev.Close() })
		d.dev = wlDevice{dev}
		d.refType = func(text string) *exec.Cmd { return d.cmd("wtype", text) }
		d.refShot = func(out string) *exec.Cmd { return d.cmd("grim", out) }
	default:
		b.Fatalf("unknown backend %q", backend)
	}
	d.term = t
	d.waitDrawn(b, ctx)
	return d
}

func need(b *testing.B, program string) {
	if _, err := exec.LookPath(program); err != nil {
		b.Fatalf("%s is needed (scripts/install-deps.sh installs it): %v", program, err)
	}
}

func (d *desk) cmd(name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Env = d.env
	return c
}

// waitDrawn paints the marker block and waits until the screen shows it:
// the terminal is mapped, has the pointer's output and reads its input.
func (d *desk) waitDrawn(b *testing.B, ctx context.Context) {
	b.Helper()
	d.term.write(b, block(196))
	scr, _ := capture.ParseTarget("screen")
	for {
		f, err := d.hub.Capture(ctx, d.display, scr)
		if err == nil {
			n := redPixels(f)
			f.Release()
			if n > 100*100 {
				break
			}
		}
		if ctx.Err() != nil {
			b.Fatalf("%s: the terminal's red block never showed (last capture error: %v)", d.name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	d.term.write(b, clear)
}

func redPixels(f *frame.Frame) int {
	n := 0
	for y := range f.H {
		row := f.Pix[y*f.Stride:]
		for x := range f.W {
			if p := row[x*4:]; p[2] > 200 && p[1] < 60 && p[0] < 60 {
				n++
			}
		}
	}
	return n
}

type xDevice struct{ d *input.Device }

func (x xDevice) Click(ctx context.Context, px, py int) error {
	return x.d.ClickAt(ctx, &image.Point{X: px, Y: py}, 1, 1)
}
func (x xDevice) Type(ctx context.Context, text string) error { return x.d.Type(ctx, text) }

type wlDevice struct{ d *virtual.Device }

func (w wlDevice) Click(ctx context.Context, x, y int) error { return w.d.Click(ctx, x, y, 1, 1) }
func (w wlDevice) Type(ctx context.Context, text string) error {
	return w.d.Type(ctx, text)
}

// terminal is the two pipes of the terminal's script: what is written to
// in is printed on the terminal; what the terminal receives (typed keys,
// mouse reports) comes out of out.
type terminal struct {
	inPath, outPath string
	in              *os.File

	mu   sync.Mutex
	got  []byte
	when time.Time // when got last grew
	grew chan struct{}
}

func newTerminal(b *testing.B, dir string) *terminal {
	b.Helper()
	t := &terminal{inPath: filepath.Join(dir, "in"), outPath: filepath.Join(dir, "out"), grew: make(chan struct{}, 1)}
	for _, p := range []string{t.inPath, t.outPath} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	// Opened read-write, neither end blocks waiting for the other, and
	// neither sees an end of file while the benchmark holds it.
	var err error
	if t.in, err = os.OpenFile(t.inPath, os.O_RDWR, 0); err != nil {
		b.Fatal(err)
	}
	out, err := os.OpenFile(t.outPath, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := out.Read(buf)
			if n > 0 {
				now := time.Now()
				t.mu.Lock()
				t.got = append(t.got, buf[:n]...)
				t.when = now
				t.mu.Unlock()
				select {
				case t.grew <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	b.Cleanup(func() {
		t.in.Close()
		out.Close()
		<-done
	})
	return t
}

func (t *terminal) write(b *testing.B, s string) {
	if _, err := t.in.WriteString(s); err != nil {
		b.Fatal(err)
	}
}

// received returns the bytes received so far and when the last arrived.
func (t *terminal) received() ([]byte, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.got, t.when
}

// waitFor waits until what the terminal received ends with suffix after
// from bytes and returns when that last byte arrived.
func (t *terminal) waitFor(b *testing.B, from int, suffix string) time.Time {
	b.Helper()
	deadline := time.After(10 * time.Second)
	for {
		got, at := t.received()
		if len(got) > from && strings.HasSuffix(string(got[from:]), suffix) {
			return at
		}
		select {
		case <-t.grew:
		case <-deadline:
			b.Fatalf("the terminal received %q after byte %d, want it to end with %q", got[min(from, len(got)):], from, suffix)
		}
	}
}
