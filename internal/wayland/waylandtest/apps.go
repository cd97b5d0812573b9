package waylandtest

import (
	"bufio"
	"context"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/daemonproc"
	"github.com/acu-dev/acu/internal/wayland/screencopy"
)

// python is the system's Python, which has python3-gi (a virtualenv's
// first on PATH may not).
const python = "/usr/bin/python3"

// NeedGTK skips the test when python3-gi with GTK 3 is missing, or fails
// it when ACU_REQUIRE_WAYLAND=1, as Need does for a program.
func NeedGTK(t testing.TB) {
	t.Helper()
	Need(t, python)
	if err := gtkMissing(); err != nil {
		if os.Getenv("ACU_REQUIRE_WAYLAND") == "1" {
			t.Fatalf("python3-gi with GTK 3 is not installed, and ACU_REQUIRE_WAYLAND=1 requires it (run scripts/install-deps.sh): %v", err)
		}
		t.Skipf("python3-gi with GTK 3 is not installed (scripts/install-deps.sh installs it): %v", err)
	}
}

// gtkMissing says why python3-gi's GTK 3 cannot be imported, asking
// Python once a test process.
var gtkMissing = sync.OnceValue(func() error {
	return exec.Command(python, "-c", "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk").Run()
})

// GTK is a GTK 3 program in Python running natively on a compositor
// (GDK_BACKEND=wayland), started by StartGTK; the test reads its stdout
// line by line.
type GTK struct {
	lines  chan string
	stderr *daemonproc.Tail
	exited chan struct{}
}

// StartGTK runs script (Python with python3-gi's GTK 3) on c for the
// test, without the accessibility bridge; it is killed when the test
// ends. It skips the test as NeedGTK does.
func StartGTK(t testing.TB, c Compositor, script string) *GTK {
	t.Helper()
	NeedGTK(t)
	path := filepath.Join(t.TempDir(), "app.py")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, path)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8", "GDK_BACKEND=wayland", "NO_AT_BRIDGE=1"}, c.Env()...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g := &GTK{lines: make(chan string, 64), stderr: daemonproc.NewTail(16 << 10), exited: make(chan struct{})}
	cmd.Stderr = g.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the GTK app on %s: %v", c.Socket(), err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			g.lines <- sc.Text()
		}
		close(g.lines)
	}()
	go func() { _ = cmd.Wait(); close(g.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-g.exited
	})
	return g
}

// Next returns the program's next line of output (what names it in a
// failure). It fails the test when the program exits first, or prints
// nothing within a minute.
func (g *GTK) Next(t testing.TB, what string) string {
	t.Helper()
	select {
	case l, ok := <-g.lines:
		if !ok {
			<-g.exited
			t.Fatalf("the GTK app exited before %s; stderr:\n%s", what, g.stderr.String())
		}
		return l
	case <-time.After(time.Minute):
		t.Fatalf("the GTK app printed no %s within a minute; stderr:\n%s", what, g.stderr.String())
	}
	return ""
}

// Stderr returns the end of what the program wrote to stderr so far.
func (g *GTK) Stderr() string { return g.stderr.String() }

// Foot is foot, a native Wayland terminal, running cat in raw mode
// (StartFoot): every byte the terminal receives (typed text, keys' escape
// sequences, mouse reports) is copied to a file, and a red block of 10
// cells at its top left shows where its cells are on the screen.
type Foot struct {
	Out   string          // the file the terminal's received bytes go to
	Block image.Rectangle // the red block on the screen: the first row's first 10 cells
}

// StartFoot starts foot on c for the test, prints setup (terminal
// escapes, such as xterm's mouse reporting modes) and the red block, and
// returns once the block shows on the screen: the window is mapped then,
// and focused. One wheel step is one line (foot's default is 3), so one
// report.
func StartFoot(t testing.TB, c Compositor, setup string) *Foot {
	t.Helper()
	out := filepath.Join(t.TempDir(), "received")
	script := fmt.Sprintf(`stty raw -echo; printf '%s\033[41m%%10s\033[0m' ''; exec cat > %s`, setup, out)
	Client(t, c, "foot", "--override=colors.regular1=ff0000", "--override=colors.background=000000",
		"--override=scrollback.multiplier=1", "sh", "-c", script)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cp, err := screencopy.Open(ctx, c.Socket(), "", "")
	if err != nil {
		t.Fatalf("screencopy on %s: %v", c.Socket(), err)
	}
	defer cp.Close()
	for {
		f, err := cp.Grab(ctx)
		if err != nil {
			t.Fatalf("waiting for foot's red block: %v", err)
		}
		r := image.Rectangle{}
		for y := 0; y < f.H; y++ {
			for x := 0; x < f.W; x++ {
				if p := f.Pix[y*f.Stride+x*4:]; p[2] == 0xff && p[1] == 0 && p[0] == 0 {
					r = r.Union(image.Rect(x, y, x+1, y+1))
				}
			}
		}
		if _, err := os.Stat(out); err == nil && r.Dx() >= 10 && r.Dx()%10 == 0 {
			return &Foot{Out: out, Block: r}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Cell returns the screen pixel at the centre of the 1-based cell col,
// row.
func (f *Foot) Cell(col, row int) image.Point {
	cw, ch := f.Block.Dx()/10, f.Block.Dy()
	return image.Pt(f.Block.Min.X+(col-1)*cw+cw/2, f.Block.Min.Y+(row-1)*ch+ch/2)
}
