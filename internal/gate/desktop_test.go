package gate_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/leakcheck"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func TestMain(m *testing.M) { leakcheck.Main(m, "acu/internal/gate", "acu/internal/clipboard") }

// setRootProp plays at-spi-bus-launcher: it publishes the display's
// accessibility bus on the root window.
func setRootProp(t *testing.T, dpy, name, value string) {
	t.Helper()
	c, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
	if err != nil {
		t.Fatal(err)
	}
	root := xproto.Setup(c).DefaultScreen(c).Root
	if err := xproto.ChangePropertyChecked(c, xproto.PropModeReplace, root, a.Atom, xproto.AtomString, 8,
		uint32(len(value)), []byte(value)).Check(); err != nil {
		t.Fatal(err)
	}
}

func TestLaunchGetsTheDisplaysAccessibilityBus(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	setRootProp(t, dpy, "AT_SPI_BUS", "unix:path=/tmp/acu-test-a11y-bus")
	svc := gate.New(gate.Options{DefaultDisplay: dpy, Env: append(os.Environ(), "NO_AT_BRIDGE=1", "DISPLAY=:0")})
	defer svc.Close()
	out := filepath.Join(t.TempDir(), "env")
	res, err := svc.Launch(t.Context(), api.LaunchRequest{Argv: []string{"sh", "-c",
		`echo "$DISPLAY|$AT_SPI_BUS_ADDRESS|$NO_AT_BRIDGE|$GNOME_ACCESSIBILITY" > ` + out + `.tmp && mv ` + out + `.tmp ` + out}})
	if err != nil {
		t.Fatal(err)
	}
	if res.PID == 0 || res.Display != dpy {
		t.Errorf("Launch() = %+v", res)
	}
	var b []byte
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err = os.ReadFile(out); err == nil {
			break
		}
	}
	if got, want := strings.TrimSpace(string(b)), dpy+"|unix:path=/tmp/acu-test-a11y-bus||1"; got != want {
		t.Errorf("launched program's env = %q, want %q", got, want)
	}
}

func TestWindowsWithoutWM(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 640, Height: 480})
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "no wm", Class: "NoWM", X: 10, Y: 20, W: 100, H: 80})
	svc := gate.New(gate.Options{DefaultDisplay: dpy})
	defer svc.Close()
	ctx := t.Context()
	l, err := svc.Windows(ctx, "")
	if err != nil || l.WM != "" || len(l.Windows) != 1 || l.Windows[0].Title != "no wm" {
		t.Fatalf("Windows() = %+v, %v; want the one window, no WM", l, err)
	}
	id := l.Windows[0].ID
	if id != fmt.Sprintf("%#x", w.ID()) {
		t.Errorf("id = %s, want %#x", id, w.ID())
	}
	for _, op := range []string{api.WindowMaximize, api.WindowMinimize, api.WindowFocus} {
		res, err := svc.WindowOp(ctx, id, op, api.WindowOp{})
		if err != nil {
			t.Fatalf("%s = %v", op, err)
		}
		t.Logf("%s: %s -> %+v", op, res.Method, res.Window)
	}
	res, err := svc.WindowOp(ctx, id, api.WindowFocus, api.WindowOp{})
	if err != nil || res.Window == nil || !res.Window.Focused || !res.Window.Maximized || res.Window.Minimized {
		t.Errorf("after maximize, minimize, focus: %+v, %v; want focused, maximized, not minimized", res.Window, err)
	}
	_, err = svc.WindowOp(ctx, id, api.WindowClose, api.WindowOp{})
	var de *gate.Error
	if !errors.As(err, &de) || de.Kind != gate.Conflict || de.Field != "kill" {
		t.Errorf("close without WM_DELETE_WINDOW = %v, want a conflict naming kill", err)
	}
	if _, err := svc.WindowOp(ctx, id, api.WindowClose, api.WindowOp{Kill: true}); err != nil {
		t.Errorf("close with kill = %v", err)
	}
	l, err = svc.Windows(ctx, "")
	if err != nil || len(l.Windows) != 0 {
		t.Errorf("Windows() after kill = %+v, %v; want none", l, err)
	}
}
