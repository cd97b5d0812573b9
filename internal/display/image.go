package display

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jezek/xgb/xproto"
)

// ImageConn is a connection that only reads pixels: the X handshake and one
// GetImage request at a time, written on the socket directly, without xgb.
// It is for a process that reads the screen once and exits (acu
// screenshot): it costs no goroutine, no extension query and no event
// reader, and a reply's pixels are read from the socket straight into the
// buffer returned, where xgb would read them into one new buffer and copy
// them into a second (two fresh 3.7 MB buffers at 1280x720, each paid for in
// page faults by a process that has just started). Long-lived captures use
// a Conn and MIT-SHM instead.
//
// Not safe for concurrent use.
type ImageConn struct {
	Name   string
	Screen Screen

	nc  net.Conn
	seq uint16
}

// OpenImage connects to the display name (as Open: ":N", ":N.S",
// "unix:N", and "HOST:N" only when opts.AllowRemote) with the authority
// xgb would use (MIT-MAGIC-COOKIE-1 from $XAUTHORITY or ~/.Xauthority,
// none when no entry matches) and reads the screen from the server's setup.
func OpenImage(ctx context.Context, name string, opts Options) (*ImageConn, error) {
	c, _, err := openImage(ctx, name, opts)
	return c, err
}

// openImage is OpenImage, with the server's setup.
func openImage(ctx context.Context, name string, opts Options) (_ *ImageConn, _ *xproto.SetupInfo, err error) {
	n, err := ParseName(name, opts.AllowRemote)
	if err != nil {
		return nil, nil, err
	}
	host, num := n.Host, displayDigits(name)
	network, addr := "unix", "/tmp/.X11-unix/X"+num
	if host != "" {
		network, addr = "tcp", net.JoinHostPort(host, strconv.Itoa(6000+n.Number))
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: connect to X display %s: %v; is it running? %s", ErrNoDisplay, name, err, HowToStart)
	}
	c := &ImageConn{Name: name, nc: nc}
	stop := c.bind(ctx)
	defer func() {
		stop()
		if err != nil {
			nc.Close()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			err = PanicError("read the server's setup", r)
		}
	}()
	setup, err := c.handshake(host, num)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: connect to X display %s: %v", ErrNoDisplay, name, err)
	}
	if c.Screen, err = screenOf(setup, n.Screen, name); err != nil {
		return nil, nil, fmt.Errorf("set up X display %s: %w", name, err)
	}
	return c, setup, nil
}

// displayDigits returns the display number of a name ParseName accepted,
// as written (xgb looks it up in the authority file that way).
func displayDigits(name string) string {
	num, _, _ := strings.Cut(name[strings.LastIndexByte(name, ':')+1:], ".")
	return num
}

// bind makes blocking socket calls return when ctx ends; stop undoes it.
func (c *ImageConn) bind(ctx context.Context) (stop func()) {
	if ctx.Done() == nil {
		return func() {}
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.nc.SetDeadline(dl)
	}
	unbind := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	return func() {
		unbind()
		_ = c.nc.SetDeadline(time.Time{})
	}
}

// handshake opens the X session and returns the server's setup.
func (c *ImageConn) handshake(host, num string) (*xproto.SetupInfo, error) {
	authName, authData, err := readAuthority(host, num)
	if err != nil {
		// As xgb: no usable authority file means trying without.
		authName, authData = "", nil
	}
	if authName != "" && (authName != "MIT-MAGIC-COOKIE-1" || len(authData) != 16) {
		return nil, errors.New("unsupported auth protocol " + authName)
	}
	req := make([]byte, 12+pad4(len(authName))+pad4(len(authData)))
	req[0] = 'l' // little-endian
	binary.LittleEndian.PutUint16(req[2:], 11)
	binary.LittleEndian.PutUint16(req[6:], uint16(len(authName)))
	binary.LittleEndian.PutUint16(req[8:], uint16(len(authData)))
	copy(req[12:], authName)
	copy(req[12+pad4(len(authName)):], authData)
	if _, err := c.nc.Write(req); err != nil {
		return nil, err
	}
	var head [8]byte
	if _, err := io.ReadFull(c.nc, head[:]); err != nil {
		return nil, err
	}
	buf := make([]byte, 8+int(binary.LittleEndian.Uint16(head[6:]))*4)
	copy(buf, head[:])
	if _, err := io.ReadFull(c.nc, buf[8:]); err != nil {
		return nil, err
	}
	switch head[0] {
	case 1:
	case 0:
		reason := buf[8:min(len(buf), 8+int(head[1]))]
		return nil, fmt.Errorf("x protocol authentication refused: %s", reason)
	default:
		return nil, fmt.Errorf("the server wants more authentication (status %d)", head[0])
	}
	if major, minor := binary.LittleEndian.Uint16(head[2:]), binary.LittleEndian.Uint16(head[4:]); major != 11 || minor != 0 {
		return nil, fmt.Errorf("x protocol version mismatch: %d.%d", major, minor)
	}
	setup := new(xproto.SetupInfo)
	xproto.SetupInfoRead(buf, setup)
	return setup, nil
}

// Image reads the rectangle r of the root window (ZPixmap, all planes)
// into a new buffer of r.Dx()*r.Dy() pixels at BitsPerPixel, rows
// ScanlinePad-aligned; r must lie within the screen.
func (c *ImageConn) Image(ctx context.Context, r image.Rectangle) (_ []byte, err error) {
	if r.Empty() || !r.In(image.Rect(0, 0, c.Screen.Width, c.Screen.Height)) {
		return nil, fmt.Errorf("read %v of %s: outside the %dx%d screen", r, c.Name, c.Screen.Width, c.Screen.Height)
	}
	stop := c.bind(ctx)
	defer stop()
	defer func() {
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			err = fmt.Errorf("read the screen of %s: %w", c.Name, err)
		}
	}()
	var req [20]byte
	req[0] = 73 // GetImage
	req[1] = xproto.ImageFormatZPixmap
	binary.LittleEndian.PutUint16(req[2:], 5)
	binary.LittleEndian.PutUint32(req[4:], uint32(c.Screen.Root))
	binary.LittleEndian.PutUint16(req[8:], uint16(int16(r.Min.X)))
	binary.LittleEndian.PutUint16(req[10:], uint16(int16(r.Min.Y)))
	binary.LittleEndian.PutUint16(req[12:], uint16(r.Dx()))
	binary.LittleEndian.PutUint16(req[14:], uint16(r.Dy()))
	binary.LittleEndian.PutUint32(req[16:], 0xffffffff)
	c.seq++
	if _, err := c.nc.Write(req[:]); err != nil {
		return nil, err
	}
	var head [32]byte
	for {
		if _, err := io.ReadFull(c.nc, head[:]); err != nil {
			return nil, err
		}
		switch head[0] {
		case 0: // error
			if binary.LittleEndian.Uint16(head[2:]) == c.seq {
				return nil, fmt.Errorf("GetImage: X error %d (value %#x)", head[1], binary.LittleEndian.Uint32(head[4:]))
			}
		case 1: // reply
			if seq := binary.LittleEndian.Uint16(head[2:]); seq != c.seq {
				return nil, fmt.Errorf("reply to request %d where %d was expected", seq, c.seq)
			}
			n := int(binary.LittleEndian.Uint32(head[4:])) * 4
			line := (r.Dx()*c.Screen.BitsPerPixel + c.Screen.ScanlinePad - 1) / c.Screen.ScanlinePad * c.Screen.ScanlinePad / 8
			if want := line * r.Dy(); n != want {
				// Read it off the wire all the same, then fail.
				_, _ = io.CopyN(io.Discard, c.nc, int64(n))
				return nil, fmt.Errorf("GetImage returned %d bytes for %dx%d, want %d", n, r.Dx(), r.Dy(), want)
			}
			pix := make([]byte, n)
			if _, err := io.ReadFull(c.nc, pix); err != nil {
				return nil, err
			}
			return pix, nil
		}
		// An event (MappingNotify goes to every client): not ours, skip.
	}
}

// Close closes the connection.
func (c *ImageConn) Close() error { return c.nc.Close() }

func pad4(n int) int { return (n + 3) &^ 3 }

// readAuthority finds the authority for display number num on host ("" or
// "localhost": this machine) the way xgb does: the first entry of
// $XAUTHORITY (or ~/.Xauthority) whose family is wild, or local with this
// host's name, and whose display number is empty or num.
func readAuthority(host, num string) (name string, data []byte, err error) {
	const familyLocal, familyWild = 256, 65535
	if host == "" || host == "localhost" {
		if host, err = os.Hostname(); err != nil {
			return "", nil, err
		}
	}
	fname := os.Getenv("XAUTHORITY")
	if fname == "" {
		home := os.Getenv("HOME")
		if home == "" {
			return "", nil, errors.New("no authority file: $XAUTHORITY and $HOME are not set")
		}
		fname = home + "/.Xauthority"
	}
	b, err := os.ReadFile(fname)
	if err != nil {
		return "", nil, err
	}
	field := func() ([]byte, bool) {
		if len(b) < 2 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+n {
			return nil, false
		}
		f := b[2 : 2+n]
		b = b[2+n:]
		return f, true
	}
	for len(b) >= 2 {
		family := binary.BigEndian.Uint16(b)
		b = b[2:]
		addr, ok1 := field()
		disp, ok2 := field()
		aname, ok3 := field()
		adata, ok4 := field()
		if !ok1 || !ok2 || !ok3 || !ok4 {
			break
		}
		if (family == familyWild || family == familyLocal && string(addr) == host) &&
			(len(disp) == 0 || string(disp) == num) {
			return string(aname), adata, nil
		}
	}
	return "", nil, io.EOF
}
