package portal

import (
	"bytes"
	"context"
	"image"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asSessionUser runs this test again as DefaultUser when the test runs as
// root, and reports whether the caller is that run: xdg-desktop-portal
// identifies the app asking through /proc/PID/root, which it cannot open
// for another user's process, so a portal client must be the session's
// own user (as acu is inside a person's GNOME session).
func asSessionUser(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return true
	}
	u, err := user.Lookup(DefaultUser)
	if err != nil {
		t.Fatalf("the portal test runs as %s when root: %v (scripts/install-deps.sh creates it)", DefaultUser, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("/tmp", "acu-portal-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "portal.test")
	if err := copyFile(self, bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "LANG=C.UTF-8",
		"ACU_REQUIRE_PORTAL=" + os.Getenv("ACU_REQUIRE_PORTAL"), "ACU_PORTAL_FRAMES=" + os.Getenv("ACU_PORTAL_FRAMES")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{uint32(gid)}},
		Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Fatalf("%s as %s: %v:\n%s", t.Name(), DefaultUser, err, out)
	case bytes.Contains(out, []byte("--- SKIP")):
		t.Skipf("as %s: %s", DefaultUser, out)
	case !bytes.Contains(out, []byte("--- PASS: "+t.Name())):
		t.Fatalf("%s as %s did not pass:\n%s", t.Name(), DefaultUser, out)
	}
	t.Logf("ran as %s:\n%s", DefaultUser, out)
	return false
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// isColor reports whether img's pixel at x, y is within 0x30 of rgb.
func isColor(img image.Image, x, y int, rgb uint32) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	near := func(v uint32, want uint32) bool { d := int(v>>8) - int(want); return d > -0x30 && d < 0x30 }
	return near(r, rgb>>16&0xff) && near(g, rgb>>8&0xff) && near(b, rgb&0xff)
}

// portalSession starts the headless session for a portal test, as the
// session's own user (asSessionUser); ok is false in the root run, which
// has nothing more to do.
func portalSession(t *testing.T, programs ...string) (h *Headless, person *Session, ok bool) {
	t.Helper()
	need(t, programs...)
	if !asSessionUser(t) {
		return nil, nil, false
	}
	h, person = startSession(t)
	return h, person, true
}

// openApproved opens a portal session with opts while approve plays the
// person at the portal's dialog (it waits for the dialog and clicks
// through it), and returns the session the portal granted.
func openApproved(t *testing.T, ctx context.Context, h *Headless, opts PortalOptions, approve func()) *PortalSession {
	t.Helper()
	type opened struct {
		p   *PortalSession
		err error
	}
	done := make(chan opened, 1)
	go func() {
		p, err := OpenPortal(ctx, h.BusAddress(), opts)
		done <- opened{p, err}
	}()
	approve()
	var o opened
	select {
	case o = <-done:
	case <-ctx.Done():
		t.Fatal("the portal never answered Start")
	}
	if o.err != nil {
		t.Fatalf("%v\nthe bus's log (its services):\n%s", o.err, tail(h.Log("dbus-daemon"), 4000))
	}
	t.Cleanup(func() { o.p.Close() })
	return o.p
}

// TestPortalRemoteDesktop goes the way an app in a person's GNOME session
// goes: xdg-desktop-portal's RemoteDesktop with a ScreenCast of the
// monitor, approved in the portal's dialog (xdg-desktop-portal-gnome's,
// on the headless mutter: the test plays the person, turning "Allow
// remote interaction" on and pressing Share through mutter's own remote
// desktop), then typing into zenity through the portal and reading a
// frame through the PipeWire connection the portal opened.
func TestPortalRemoteDesktop(t *testing.T) {
	h, person, ok := portalSession(t, "/usr/libexec/xdg-desktop-portal", "/usr/libexec/xdg-desktop-portal-gnome", "zenity")
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	p := openApproved(t, ctx, h, PortalOptions{Input: true}, func() {
		// The dialog of xdg-desktop-portal-gnome 43 on a 1280x720 monitor:
		// Share (blue) at 852,232, the interaction switch (off, light) at 829,432.
		waitFrame(t, ctx, h, person, "the portal's dialog", func(img image.Image) bool {
			return isColor(img, 852, 232, 0x3584e4) && isColor(img, 829, 432, 0xe0e0e0)
		})
		if err := person.Click(ctx, 829, 432, 1); err != nil {
			t.Fatal(err)
		}
		waitFrame(t, ctx, h, person, "the switch on", func(img image.Image) bool { return isColor(img, 820, 432, 0x3584e4) })
		if err := person.Click(ctx, 852, 232, 1); err != nil {
			t.Fatal(err)
		}
	})
	st := p.Streams()
	if len(st) != 1 || st[0].Node == 0 || st[0].Width != 1280 || st[0].Height != 720 {
		t.Fatalf("streams %+v, want one of the 1280x720 monitor", st)
	}
	t.Logf("stream %+v, restore token %q", st[0], p.RestoreToken())

	blank, err := Grab(ctx, h.PipeWireSocket(), person.Node())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, exited := client(t, h, &out, "zenity", "--entry", "--title", "portal-typing", "--text", "Name")
	waitFrame(t, ctx, h, person, "zenity's dialog", func(img image.Image) bool { return changed(blank, img) > 2000 })
	if err := p.Type(ctx, "Portal typed 7;x"); err != nil {
		t.Fatal(err)
	}
	if err := p.Key(ctx, "BackSpace Return"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-ctx.Done():
		t.Fatal("zenity did not exit")
	}
	if got := strings.TrimSpace(out.String()); got != "Portal typed 7;" {
		t.Fatalf("zenity printed %q, want %q", got, "Portal typed 7;")
	}

	remote, err := p.PipeWireRemote(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	img, err := GrabRemote(ctx, remote, st[0].Node)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, 1280, 720) {
		t.Fatalf("portal frame %v, want 1280x720", img.Bounds())
	}
}

// TestPortalRestoreToken: a screen cast asked with persist_mode gets a
// restore token once the person approves the dialog; a second session
// with the token starts without any dialog (the person approves once).
func TestPortalRestoreToken(t *testing.T) {
	h, person, ok := portalSession(t, "/usr/libexec/xdg-desktop-portal", "/usr/libexec/xdg-desktop-portal-gnome")
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	first := openApproved(t, ctx, h, PortalOptions{Persist: true}, func() {
		// The screen-cast dialog of xdg-desktop-portal-gnome 43: "Remember
		// this selection" ticked (persist_mode asked), Share disabled (pale)
		// at 852,232 until the monitor's row at 640,386 is chosen.
		waitFrame(t, ctx, h, person, "the portal's dialog", func(img image.Image) bool {
			return isColor(img, 852, 232, 0x99c1f1) && isColor(img, 545, 333, 0x3584e4)
		})
		if err := person.Click(ctx, 640, 386, 1); err != nil {
			t.Fatal(err)
		}
		waitFrame(t, ctx, h, person, "Share enabled", func(img image.Image) bool { return isColor(img, 852, 232, 0x3584e4) })
		if err := person.Click(ctx, 852, 232, 1); err != nil {
			t.Fatal(err)
		}
	})
	token := first.RestoreToken()
	first.Close()
	if token == "" {
		t.Fatal("the approved screen cast with persist_mode 2 gave no restore token")
	}
	// No one clicks now: only the token can let Start answer.
	ctx2, cancel2 := context.WithTimeout(ctx, 30*time.Second)
	defer cancel2()
	p, err := OpenPortal(ctx2, h.BusAddress(), PortalOptions{Persist: true, RestoreToken: token})
	if err != nil {
		t.Fatalf("restoring with the token: %v", err)
	}
	defer p.Close()
	if st := p.Streams(); len(st) != 1 || st[0].Width != 1280 {
		t.Fatalf("restored streams %+v, want the 1280x720 monitor", st)
	}
	if p.RestoreToken() == "" {
		t.Fatal("the restored session gave no new token (each token is single-use)")
	}
}
