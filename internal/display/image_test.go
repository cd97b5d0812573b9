package display_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

func pattern(x, y int) color.RGBA {
	return color.RGBA{uint8(x * 7), uint8(y * 3), uint8(x ^ y), 0xff}
}

// xgbImage reads r of the root window through xgb: the reference.
func xgbImage(t *testing.T, dpy string, r image.Rectangle) []byte {
	t.Helper()
	c, err := xgb.NewConnDisplay(dpy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	root := xproto.Setup(c).DefaultScreen(c).Root
	rep, err := xproto.GetImage(c, xproto.ImageFormatZPixmap, xproto.Drawable(root), int16(r.Min.X), int16(r.Min.Y),
		uint16(r.Dx()), uint16(r.Dy()), 0xffffffff).Reply()
	if err != nil {
		t.Fatal(err)
	}
	return rep.Data
}

// TestImageConn: the pixels of the whole screen and of a rectangle are
// byte for byte what xgb's GetImage reads, and the screen is what Open
// reports.
func TestImageConn(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 320, Height: 200})
	testx.NewWindow(t, dpy, testx.Spec{Title: "img", X: 30, Y: 20, W: 150, H: 100, Pattern: pattern})
	ic, err := display.OpenImage(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatalf("OpenImage(%s) = %v", dpy, err)
	}
	defer ic.Close()
	c, err := display.Open(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := c.Screen
	c.Close()
	if ic.Screen != want {
		t.Errorf("ImageConn.Screen = %+v, want Open's %+v", ic.Screen, want)
	}
	// Several requests on one connection, each checked.
	for _, r := range []image.Rectangle{image.Rect(0, 0, 320, 200), image.Rect(25, 15, 190, 130), image.Rect(319, 199, 320, 200)} {
		got, err := ic.Image(t.Context(), r)
		if err != nil {
			t.Fatalf("Image(%v) = %v", r, err)
		}
		if want := xgbImage(t, dpy, r); !bytes.Equal(got, want) {
			t.Errorf("Image(%v): %d bytes differing from xgb's GetImage (%d bytes)", r, len(got), len(want))
		}
	}
	for _, r := range []image.Rectangle{image.Rect(300, 0, 330, 10), image.Rect(-1, 0, 5, 5), {}} {
		if _, err := ic.Image(t.Context(), r); err == nil || !strings.Contains(err.Error(), "outside") {
			t.Errorf("Image(%v) = %v, want an error: outside the screen", r, err)
		}
	}
}

func TestOpenImageErrors(t *testing.T) {
	for _, name := range []string{":4093", ":0/x", "remote.example:0"} {
		ic, err := display.OpenImage(t.Context(), name, display.Options{})
		if err == nil {
			ic.Close()
			t.Errorf("OpenImage(%q) succeeded", name)
			continue
		}
		if name == ":4093" && !errors.Is(err, display.ErrNoDisplay) {
			t.Errorf("OpenImage(%q) = %v, want ErrNoDisplay", name, err)
		}
		if name != ":4093" && !errors.Is(err, display.ErrBadName) {
			t.Errorf("OpenImage(%q) = %v, want ErrBadName", name, err)
		}
	}
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 64, Height: 64})
	if _, err := display.OpenImage(t.Context(), dpy+".3", display.Options{}); !errors.Is(err, display.ErrBadName) {
		t.Errorf("OpenImage(%s.3) = %v, want ErrBadName (one screen)", dpy, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := display.OpenImage(ctx, dpy, display.Options{}); err == nil {
		t.Errorf("OpenImage with a cancelled context succeeded")
	}
}

// xauthEntry is one entry of an Xauthority file.
func xauthEntry(family uint16, addr, num, name string, data []byte) []byte {
	var b []byte
	b = binary.BigEndian.AppendUint16(b, family)
	for _, f := range [][]byte{[]byte(addr), []byte(num), []byte(name), data} {
		b = binary.BigEndian.AppendUint16(b, uint16(len(f)))
		b = append(b, f...)
	}
	return b
}

// TestOpenImageAuthority: against a server that checks cookies, the
// cookie xgb would send is found in $XAUTHORITY (the entry for this
// display, after entries for other hosts and displays), and a wrong one is
// refused with the server's reason.
func TestOpenImageAuthority(t *testing.T) {
	dir := t.TempDir()
	cookie := []byte("0123456789abcdef")
	serverAuth := filepath.Join(dir, "server")
	// The server accepts any display number's wild entry.
	if err := os.WriteFile(serverAuth, xauthEntry(65535, "", "", "MIT-MAGIC-COOKIE-1", cookie), 0o600); err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 64, Height: 64, Args: []string{"-auth", serverAuth}})
	num := strings.TrimPrefix(dpy, ":")
	wrong := []byte("fedcba9876543210")
	var client []byte
	client = append(client, xauthEntry(256, "other-host", num, "MIT-MAGIC-COOKIE-1", wrong)...)
	client = append(client, xauthEntry(256, host, num+"0", "MIT-MAGIC-COOKIE-1", wrong)...)
	client = append(client, xauthEntry(256, host, num, "MIT-MAGIC-COOKIE-1", cookie)...)
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, client, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, xauthEntry(65535, "", "", "MIT-MAGIC-COOKIE-1", wrong), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Setenv("XAUTHORITY", good)
	ic, err := display.OpenImage(t.Context(), dpy, display.Options{})
	if err != nil {
		t.Fatalf("OpenImage(%s) with the right cookie = %v", dpy, err)
	}
	if _, err := ic.Image(t.Context(), image.Rect(0, 0, 64, 64)); err != nil {
		t.Errorf("Image = %v", err)
	}
	ic.Close()

	t.Setenv("XAUTHORITY", bad)
	if ic, err := display.OpenImage(t.Context(), dpy, display.Options{}); err == nil {
		ic.Close()
		t.Fatalf("OpenImage(%s) with a wrong cookie succeeded", dpy)
	} else if !errors.Is(err, display.ErrNoDisplay) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("OpenImage with a wrong cookie = %v, want ErrNoDisplay saying it was refused", err)
	}
}
