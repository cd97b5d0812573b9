package wayland

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Conn is a client connection to a Wayland compositor. It is not safe for
// concurrent use: one owner makes requests and waits for events.
type Conn struct {
	sock    *net.UnixConn
	path    string
	objects map[uint32]*object
	free    []uint32 // ids the compositor released (delete_id), reused first
	next    uint32
	rbuf    []byte
	rfds    []int // descriptors received and not yet taken by an event
	err     error // the first fatal error: the connection is unusable after it

	globals  []Global
	registry uint32

	woken atomic.Bool // Wake was called and DispatchWake has not yet returned ErrWoken
}

// ErrWoken is DispatchWake's answer to a Wake.
var ErrWoken = errors.New("wayland connection woken")

// Wake makes the owner's DispatchWake (waiting, or next) return ErrWoken,
// so that a goroutine dispatching a connection for good can be handed
// work. It is the one method safe to call from any goroutine.
func (c *Conn) Wake() {
	c.woken.Store(true)
	_ = c.sock.SetReadDeadline(time.Unix(1, 0))
}

// DispatchWake is Dispatch that also returns ErrWoken after a Wake.
func (c *Conn) DispatchWake(ctx context.Context) error {
	if c.woken.Swap(false) {
		return ErrWoken
	}
	err := c.dispatch(ctx, true)
	if errors.Is(err, errInterrupted) {
		c.woken.Store(false)
		return ErrWoken
	}
	return err
}

type object struct {
	iface   string
	handler func(*Event)
}

// Global is one global the compositor advertises in its registry.
type Global struct {
	Name      uint32
	Interface string
	Version   uint32
}

// ProtocolError is the compositor's wl_display.error: the connection is
// over after it.
type ProtocolError struct {
	Object    uint32
	Interface string
	Code      uint32
	Message   string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("wayland protocol error on %s@%d (code %d): %s", e.Interface, e.Object, e.Code, e.Message)
}

// Fixed is a wl_fixed_t argument: a signed 24.8 fixed-point number.
type Fixed float64

// FD is a file descriptor argument, passed to the compositor with
// SCM_RIGHTS (it stays open on this side).
type FD int

const displayID = 1

// SocketPath resolves a WAYLAND_DISPLAY value to the socket's path: an
// absolute path as it is, a name ("wayland-1") inside runtimeDir
// (XDG_RUNTIME_DIR), as libwayland resolves it.
func SocketPath(display, runtimeDir string) (string, error) {
	if display == "" {
		display = "wayland-0"
	}
	if filepath.IsAbs(display) {
		return display, nil
	}
	if runtimeDir == "" {
		return "", fmt.Errorf("wayland display %q: XDG_RUNTIME_DIR is not set: set it to the directory holding the socket, or give the socket's absolute path", display)
	}
	return filepath.Join(runtimeDir, display), nil
}

// Dial connects to the compositor listening on the socket at path, reads
// its registry and returns once every global it advertises is known.
func Dial(ctx context.Context, path string) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("connect to wayland display %s: %w", path, err)
	}
	c := &Conn{sock: nc.(*net.UnixConn), path: path, objects: map[uint32]*object{}, next: displayID + 1}
	c.objects[displayID] = &object{iface: "wl_display", handler: c.onDisplay}
	c.registry = c.NewObject("wl_registry", c.onRegistry)
	if err := c.Request(displayID, 1, c.registry); err != nil { // wl_display.get_registry
		c.Close()
		return nil, err
	}
	if err := c.Roundtrip(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("read the registry of wayland display %s: %w", path, err)
	}
	return c, nil
}

// Path returns the socket path the connection was made to.
func (c *Conn) Path() string { return c.path }

// Close closes the connection and any descriptors received and not taken.
func (c *Conn) Close() error {
	for _, fd := range c.rfds {
		unix.Close(fd)
	}
	c.rfds = nil
	return c.sock.Close()
}

// Err returns the fatal error that ended the connection, nil while usable.
func (c *Conn) Err() error { return c.err }

// Globals returns the globals the compositor advertised.
func (c *Conn) Globals() []Global { return c.globals }

// Global returns the first advertised global of interface iface.
func (c *Conn) Global(iface string) (Global, bool) {
	for _, g := range c.globals {
		if g.Interface == iface {
			return g, true
		}
	}
	return Global{}, false
}

// Bind binds global g at version min(g.Version, max) and returns the new
// object's id and the version bound.
func (c *Conn) Bind(g Global, max uint32, handler func(*Event)) (id, version uint32, err error) {
	version = min(g.Version, max)
	id = c.NewObject(g.Interface, handler)
	// wl_registry.bind(name, new_id of any interface: interface, version, id)
	if err := c.Request(c.registry, 0, g.Name, g.Interface, version, id); err != nil {
		return 0, 0, err
	}
	return id, version, nil
}

// NewObject allocates an id for a new object of interface iface, whose
// events go to handler (nil ignores them). The caller sends the request
// that creates it.
func (c *Conn) NewObject(iface string, handler func(*Event)) uint32 {
	var id uint32
	if n := len(c.free); n > 0 {
		id, c.free = c.free[n-1], c.free[:n-1]
	} else {
		id = c.next
		c.next++
	}
	c.objects[id] = &object{iface: iface, handler: handler}
	return id
}

// Adopt registers an object the compositor created (a new_id in one of
// its events), whose events go to handler.
func (c *Conn) Adopt(id uint32, iface string, handler func(*Event)) {
	c.objects[id] = &object{iface: iface, handler: handler}
}

// Forget drops an object the compositor created once it is destroyed: the
// compositor sends no delete_id for its own ids.
func (c *Conn) Forget(id uint32) { delete(c.objects, id) }

// Request sends request opcode op on object obj. Arguments are marshalled
// by type: uint32 (uint, object, new_id), int32, Fixed, string, []byte
// (array) and FD.
func (c *Conn) Request(obj uint32, op uint16, args ...any) error {
	if c.err != nil {
		return c.err
	}
	msg := make([]byte, 8, 32)
	var fds []int
	for _, a := range args {
		switch v := a.(type) {
		case uint32:
			msg = binary.LittleEndian.AppendUint32(msg, v)
		case int32:
			msg = binary.LittleEndian.AppendUint32(msg, uint32(v))
		case Fixed:
			msg = binary.LittleEndian.AppendUint32(msg, uint32(int32(math.Round(float64(v)*256))))
		case string:
			msg = binary.LittleEndian.AppendUint32(msg, uint32(len(v)+1))
			msg = append(msg, v...)
			msg = append(msg, 0)
			msg = pad(msg)
		case []byte:
			msg = binary.LittleEndian.AppendUint32(msg, uint32(len(v)))
			msg = append(msg, v...)
			msg = pad(msg)
		case FD:
			fds = append(fds, int(v))
		default:
			panic(fmt.Sprintf("wayland: request argument of type %T", a))
		}
	}
	if len(msg) > 1<<16-1 {
		return fmt.Errorf("wayland request %d on %s@%d: %d bytes exceed the protocol's message size", op, c.iface(obj), obj, len(msg))
	}
	binary.LittleEndian.PutUint32(msg[0:], obj)
	binary.LittleEndian.PutUint32(msg[4:], uint32(len(msg))<<16|uint32(op))
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if _, _, err := c.sock.WriteMsgUnix(msg, oob, nil); err != nil {
		c.err = fmt.Errorf("write to wayland display %s: %w", c.path, err)
		return c.err
	}
	return nil
}

func pad(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// Destroyed forgets obj's handler after the caller sent its destructor;
// its id is reused once the compositor confirms (delete_id).
func (c *Conn) Destroyed(obj uint32) {
	if o := c.objects[obj]; o != nil {
		o.handler = nil
	}
}

// Sync sends wl_display.sync without waiting: done runs while a later
// dispatch reads the compositor's answer, which comes after every event
// the requests made before it caused on this connection.
func (c *Conn) Sync(done func()) error {
	cb := c.NewObject("wl_callback", func(*Event) { done() })
	return c.Request(displayID, 0, cb) // wl_display.sync
}

// Roundtrip sends wl_display.sync and dispatches events until the
// compositor answers it: every request made before has been processed.
func (c *Conn) Roundtrip(ctx context.Context) error {
	done := false
	if err := c.Sync(func() { done = true }); err != nil {
		return err
	}
	for !done {
		if err := c.Dispatch(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Dispatch reads what the compositor sent (waiting for at least one
// message unless some are buffered) and calls the handlers of the events.
// It returns ctx's error when ctx ends first.
func (c *Conn) Dispatch(ctx context.Context) error { return c.dispatch(ctx, false) }

func (c *Conn) dispatch(ctx context.Context, wakeable bool) error {
	if c.err != nil {
		return c.err
	}
	if c.dispatchBuffered() {
		return c.err
	}
	if err := c.read(ctx, wakeable); err != nil {
		return err
	}
	c.dispatchBuffered()
	return c.err
}

// errInterrupted is a read ended by Wake.
var errInterrupted = errors.New("interrupted")

func (c *Conn) read(ctx context.Context, wakeable bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dl, _ := ctx.Deadline()
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(28*4))
	for {
		_ = c.sock.SetReadDeadline(dl)
		stop := context.AfterFunc(ctx, func() { _ = c.sock.SetReadDeadline(time.Unix(1, 0)) })
		// Checked after the deadline is set: a Wake from here on moves the
		// deadline to the past again, so the read below returns.
		if wakeable && c.woken.Load() {
			stop()
			return errInterrupted
		}
		n, oobn, _, _, err := c.sock.ReadMsgUnix(buf, oob)
		stop()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if !dl.IsZero() && !time.Now().Before(dl) {
					return context.DeadlineExceeded
				}
				if wakeable {
					return errInterrupted
				}
				continue // a Wake meant for DispatchWake: its flag stays set
			}
			c.err = fmt.Errorf("read from wayland display %s: %w", c.path, err)
			return c.err
		}
		if n == 0 {
			c.err = fmt.Errorf("wayland display %s closed the connection", c.path)
			return c.err
		}
		if oobn > 0 {
			if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
				for _, m := range msgs {
					if fds, err := unix.ParseUnixRights(&m); err == nil {
						c.rfds = append(c.rfds, fds...)
					}
				}
			}
		}
		c.rbuf = append(c.rbuf, buf[:n]...)
		return nil
	}
}

// dispatchBuffered dispatches every complete message buffered and reports
// whether there was one.
func (c *Conn) dispatchBuffered() bool {
	got := false
	for len(c.rbuf) >= 8 && c.err == nil {
		size := int(binary.LittleEndian.Uint32(c.rbuf[4:]) >> 16)
		if size < 8 {
			c.err = fmt.Errorf("wayland display %s sent a message of %d bytes", c.path, size)
			return true
		}
		if len(c.rbuf) < size {
			break
		}
		ev := &Event{Object: binary.LittleEndian.Uint32(c.rbuf), Opcode: uint16(binary.LittleEndian.Uint32(c.rbuf[4:])),
			data: c.rbuf[8:size], c: c}
		got = true
		if o := c.objects[ev.Object]; o != nil && o.handler != nil {
			o.handler(ev)
			if ev.err != nil && c.err == nil {
				c.err = fmt.Errorf("wayland event %d on %s@%d: %w", ev.Opcode, o.iface, ev.Object, ev.err)
			}
		}
		c.rbuf = c.rbuf[size:]
	}
	if len(c.rbuf) == 0 {
		c.rbuf = c.rbuf[:0:0]
	}
	return got
}

func (c *Conn) iface(id uint32) string {
	if o := c.objects[id]; o != nil {
		return o.iface
	}
	return "unknown"
}

func (c *Conn) onDisplay(ev *Event) {
	switch ev.Opcode {
	case 0: // error(object_id, code, message)
		obj, code, msg := ev.Uint(), ev.Uint(), ev.String()
		c.err = &ProtocolError{Object: obj, Interface: c.iface(obj), Code: code, Message: msg}
	case 1: // delete_id(id)
		id := ev.Uint()
		delete(c.objects, id)
		c.free = append(c.free, id)
	}
}

func (c *Conn) onRegistry(ev *Event) {
	switch ev.Opcode {
	case 0: // global(name, interface, version)
		c.globals = append(c.globals, Global{Name: ev.Uint(), Interface: ev.String(), Version: ev.Uint()})
	case 1: // global_remove(name)
		name := ev.Uint()
		for i, g := range c.globals {
			if g.Name == name {
				c.globals = append(c.globals[:i], c.globals[i+1:]...)
				break
			}
		}
	}
}

// Event is one event being dispatched. Its arguments are read in order
// with the typed getters; a malformed event ends the connection.
type Event struct {
	Object uint32
	Opcode uint16
	data   []byte
	c      *Conn
	err    error
}

// Uint reads a uint (or object, or new_id) argument.
func (e *Event) Uint() uint32 {
	if len(e.data) < 4 {
		e.fail("truncated")
		return 0
	}
	v := binary.LittleEndian.Uint32(e.data)
	e.data = e.data[4:]
	return v
}

// Int reads an int argument.
func (e *Event) Int() int32 { return int32(e.Uint()) }

// Fixed reads a fixed argument.
func (e *Event) Fixed() float64 { return float64(e.Int()) / 256 }

// String reads a string argument (the empty string for a null one).
func (e *Event) String() string {
	b := e.Array()
	return strings.TrimSuffix(string(b), "\x00")
}

// Array reads an array argument; the bytes are valid during the handler.
func (e *Event) Array() []byte {
	n := int(e.Uint())
	padded := (n + 3) &^ 3
	if n < 0 || padded > len(e.data) {
		e.fail("truncated")
		return nil
	}
	b := e.data[:n]
	e.data = e.data[padded:]
	return b
}

// FD takes an fd argument; the handler owns (and must close) it.
func (e *Event) FD() int {
	if len(e.c.rfds) == 0 {
		e.fail("file descriptor missing")
		return -1
	}
	fd := e.c.rfds[0]
	e.c.rfds = e.c.rfds[1:]
	return fd
}

func (e *Event) fail(what string) {
	if e.err == nil {
		e.err = errors.New(what)
	}
}
