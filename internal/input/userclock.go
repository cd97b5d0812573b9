package input

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
)

// UserClock follows the user's input by the X server's own record of it:
// the XInput2 raw events of every device, each stamped with the server's
// time, read on a connection of its own. acu brackets each of its effects
// with two markers (property changes on a private window, sent on the
// connection that carries the XTest input, so the server orders them
// around that input): raw events from an XTEST device between a Begin and
// its End are acu's own; every other raw event (a real device, or XTEST
// input outside acu's brackets: xdotool, another program) is the user's,
// and its server time is the user's last input. A Read sends a third
// marker and waits for it, so it sees every event the server generated
// before it, and the marker's time is the server's clock to age them by.
//
// The clock reads each slave device's own raw events (the XTEST device's
// among them), never the master devices' copies: the server sends a
// slave's raw event while it processes the XTest request that made it, in
// order with the markers, whereas a master's copy is held back for as long
// as a client's synchronous grab freezes the pointer. A window manager's
// click-to-focus grab does that on every press in a client window
// (openbox replays the press once it has focused the window, late on a
// loaded machine), so by the masters acu's own release arrived after its
// End and was taken for the user's.
//
// It is safe for concurrent use; Close it to drop its connection.
type UserClock struct {
	c   *display.Conn // acu's connection: the markers go out on it
	rc  *display.RawConn
	win xproto.Window // the private marker window (made on rc)
	log *slog.Logger
	gap uint32 // ms of stillness that end a spell of user input

	begin, end, check xproto.Atom

	sendMu sync.Mutex // orders check tickets with their markers
	sent   uint64

	mu       sync.Mutex
	cond     *sync.Cond
	xtest    map[uint16]bool // XTEST slave devices
	inAcu    int             // open brackets
	seen     bool            // any user input seen
	last     uint32          // server time of the user's last input
	spell    uint32          // server time the current spell of input began
	held     map[uint32]bool // buttons (detail) and keys (detail|1<<31) the user holds
	what     string          // the last user input, for messages
	checks   uint64          // check markers received
	checkAt  uint32          // server time of the last check marker
	closed   bool
	readErr  error
	readDone chan struct{}
}

// XInput2 numbers.
const (
	xiQueryVersion  = 47
	xiSelectEvents  = 46
	xiQueryDevice   = 48
	xiRawKeyPress   = 13
	xiRawKeyRelease = 14
	xiRawButtonPr   = 15
	xiRawButtonRel  = 16
	xiRawMotion     = 17
	xiRawTouchBegin = 22
	xiRawTouchEnd   = 24
	xiAllDevices    = 0
	geEvent         = 35
	propertyNotify  = 28
)

// readTimeout bounds one Read.
const readTimeout = 5 * time.Second

// ErrNoXInput2 is returned by NewUserClock when the server lacks XInput 2.2.
var ErrNoXInput2 = errors.New("the X server lacks XInput 2.2 (raw events)")

// NewUserClock opens the user clock of c's display. gap is how long the
// user must be still for the next input to start a new spell (the
// user-first quiet period).
func NewUserClock(ctx context.Context, c *display.Conn, gap time.Duration, log *slog.Logger) (*UserClock, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rc, err := display.OpenRaw(ctx, c.Name, display.Options{})
	if err != nil {
		return nil, fmt.Errorf("user clock on %s: %w", c.Name, err)
	}
	u := &UserClock{c: c, rc: rc, log: log, gap: uint32(max(gap, time.Millisecond).Milliseconds()),
		xtest: map[uint16]bool{}, held: map[uint32]bool{}, readDone: make(chan struct{})}
	u.cond = sync.NewCond(&u.mu)
	if dl, ok := ctx.Deadline(); ok {
		_ = rc.Socket.SetDeadline(dl)
	}
	r := bufio.NewReaderSize(rc.Socket, 64<<10)
	if err := u.setup(r); err != nil {
		rc.Socket.Close()
		return nil, fmt.Errorf("user clock on %s: %w", c.Name, err)
	}
	_ = rc.Socket.SetDeadline(time.Time{})
	for name, a := range map[string]*xproto.Atom{"_ACU_INPUT_BEGIN": &u.begin, "_ACU_INPUT_END": &u.end, "_ACU_INPUT_CHECK": &u.check} {
		if *a, err = c.Atom(name); err != nil {
			rc.Socket.Close()
			return nil, fmt.Errorf("user clock on %s: %w", c.Name, err)
		}
	}
	go u.read(r)
	return u, nil
}

// setup finds XInput2, the XTEST devices, makes the marker window and
// selects the raw events of all master devices on the root.
func (u *UserClock) setup(r *bufio.Reader) error {
	var seq uint16
	send := func(b []byte) (uint16, error) {
		seq++
		_, err := u.rc.Socket.Write(b)
		return seq, err
	}
	le := binary.LittleEndian
	name := "XInputExtension"
	q := make([]byte, 8+pad4(len(name)))
	q[0] = 98 // QueryExtension
	le.PutUint16(q[2:], uint16(len(q)/4))
	le.PutUint16(q[4:], uint16(len(name)))
	copy(q[8:], name)
	s, err := send(q)
	if err != nil {
		return err
	}
	rep, err := readReply(r, s)
	if err != nil {
		return fmt.Errorf("query XInputExtension: %w", err)
	}
	if rep[8] == 0 {
		return ErrNoXInput2
	}
	major := rep[9]
	v := make([]byte, 8)
	v[0], v[1] = major, xiQueryVersion
	le.PutUint16(v[2:], 2)
	le.PutUint16(v[4:], 2)
	le.PutUint16(v[6:], 2)
	if s, err = send(v); err != nil {
		return err
	}
	if rep, err = readReply(r, s); err != nil {
		return fmt.Errorf("XIQueryVersion: %w", err)
	}
	if maj, min := le.Uint16(rep[8:]), le.Uint16(rep[10:]); maj < 2 || maj == 2 && min < 2 {
		return fmt.Errorf("%w: it offers %d.%d", ErrNoXInput2, maj, min)
	}
	d := make([]byte, 8)
	d[0], d[1] = major, xiQueryDevice
	le.PutUint16(d[2:], 2)
	le.PutUint16(d[4:], xiAllDevices)
	if s, err = send(d); err != nil {
		return err
	}
	if rep, err = readReply(r, s); err != nil {
		return fmt.Errorf("XIQueryDevice: %w", err)
	}
	u.xtest = xtestDevices(rep)
	if len(u.xtest) == 0 {
		return errors.New("XIQueryDevice lists no XTEST device")
	}
	// The marker window: input-only, unmapped, with property changes
	// selected, so only acu's markers reach this connection.
	setup := u.rc.Setup
	u.win = xproto.Window(setup.ResourceIdBase | (1 & setup.ResourceIdMask))
	w := make([]byte, 36)
	w[0] = 1 // CreateWindow, depth 0
	le.PutUint16(w[2:], 9)
	le.PutUint32(w[4:], uint32(u.win))
	le.PutUint32(w[8:], uint32(u.rc.Screen.Root))
	le.PutUint16(w[16:], 1) // width
	le.PutUint16(w[18:], 1) // height
	le.PutUint16(w[22:], xproto.WindowClassInputOnly)
	le.PutUint32(w[28:], xproto.CwEventMask)
	le.PutUint32(w[32:], xproto.EventMaskPropertyChange)
	if _, err = send(w); err != nil {
		return err
	}
	// XISelectEvents on the root: the raw events of all devices; read
	// counts the slaves' own (deviceid = sourceid), which no grab holds
	// back, and drops the masters' copies.
	m := make([]byte, 20)
	m[0], m[1] = major, xiSelectEvents
	le.PutUint16(m[2:], 5)
	le.PutUint32(m[4:], uint32(u.rc.Screen.Root))
	le.PutUint16(m[8:], 1)
	le.PutUint16(m[12:], xiAllDevices)
	le.PutUint16(m[14:], 1)
	var mask uint32
	for _, ev := range []uint{xiRawKeyPress, xiRawKeyRelease, xiRawButtonPr, xiRawButtonRel, xiRawMotion, xiRawTouchBegin, xiRawTouchBegin + 1, xiRawTouchEnd} {
		mask |= 1 << ev
	}
	le.PutUint32(m[16:], mask)
	if _, err = send(m); err != nil {
		return err
	}
	// A round trip: the two requests above were accepted.
	f := []byte{43, 0, 1, 0} // GetInputFocus
	if s, err = send(f); err != nil {
		return err
	}
	if _, err = readReply(r, s); err != nil {
		return fmt.Errorf("select raw input events: %w", err)
	}
	return nil
}

// readReply reads until the reply to request seq, skipping events; an X
// error for any request up to seq fails it.
func readReply(r *bufio.Reader, seq uint16) ([]byte, error) {
	for {
		b, err := readPacket(r)
		if err != nil {
			return nil, err
		}
		switch b[0] {
		case 0:
			return nil, fmt.Errorf("an X error %d (request %d.%d)", b[1], b[10], binary.LittleEndian.Uint16(b[8:]))
		case 1:
			if binary.LittleEndian.Uint16(b[2:]) == seq {
				return b, nil
			}
		}
	}
}

// readPacket reads one reply, error or event, with its extra bytes.
func readPacket(r *bufio.Reader) ([]byte, error) {
	head := make([]byte, 32)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, err
	}
	if head[0] == 1 || head[0]&0x7f == geEvent {
		if n := binary.LittleEndian.Uint32(head[4:]); n > 0 {
			if n > 1<<20 {
				return nil, fmt.Errorf("an X packet of %d words: the stream is out of step", n)
			}
			b := make([]byte, 32+4*int(n))
			copy(b, head)
			if _, err := io.ReadFull(r, b[32:]); err != nil {
				return nil, err
			}
			return b, nil
		}
	}
	return head, nil
}

// xtestDevices returns the ids of the XTEST slave devices in an
// XIQueryDevice reply.
func xtestDevices(rep []byte) map[uint16]bool {
	le := binary.LittleEndian
	out := map[uint16]bool{}
	n := int(le.Uint16(rep[8:]))
	b := rep[32:]
	for range n {
		if len(b) < 12 {
			break
		}
		id, classes, nameLen := le.Uint16(b), int(le.Uint16(b[6:])), int(le.Uint16(b[8:]))
		if len(b) < 12+pad4(nameLen) {
			break
		}
		name := string(b[12 : 12+nameLen])
		b = b[12+pad4(nameLen):]
		for range classes {
			if len(b) < 4 {
				break
			}
			l := 4 * int(le.Uint16(b[2:]))
			if l < 4 || l > len(b) {
				return out
			}
			b = b[l:]
		}
		if strings.Contains(name, "XTEST") {
			out[id] = true
		}
	}
	return out
}

func pad4(n int) int { return (n + 3) &^ 3 }

// read follows the raw events and markers until the connection ends.
func (u *UserClock) read(r *bufio.Reader) {
	defer close(u.readDone)
	le := binary.LittleEndian
	for {
		b, err := readPacket(r)
		if err != nil {
			u.mu.Lock()
			if !u.closed {
				u.readErr = fmt.Errorf("user clock on %s: read: %w", u.rc.Name, err)
			} else {
				u.readErr = errors.New("user clock closed")
			}
			u.cond.Broadcast()
			u.mu.Unlock()
			return
		}
		switch {
		case b[0]&0x7f == propertyNotify && xproto.Window(le.Uint32(b[4:])) == u.win:
			u.marker(xproto.Atom(le.Uint32(b[8:])), le.Uint32(b[12:]))
		case b[0]&0x7f == geEvent && len(b) >= 32 && le.Uint16(b[10:]) == le.Uint16(b[20:]):
			// A slave device's own raw event (deviceid = sourceid); a
			// master's copy (deviceid the master) is dropped.
			u.raw(le.Uint16(b[8:]), le.Uint32(b[12:]), le.Uint32(b[16:]), le.Uint16(b[20:]))
		case b[0] == 0:
			u.log.Debug("user clock: X error", "display", u.rc.Name, "code", b[1])
		}
	}
}

func (u *UserClock) marker(a xproto.Atom, t uint32) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch a {
	case u.begin:
		u.inAcu++
	case u.end:
		if u.inAcu > 0 {
			u.inAcu--
		}
	case u.check:
		u.checks++
		u.checkAt = t
		u.cond.Broadcast()
	}
}

// raw records one raw event: acu's own when it comes from an XTEST device
// inside a bracket, the user's otherwise.
func (u *UserClock) raw(evtype uint16, t, detail uint32, source uint16) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.inAcu > 0 && u.xtest[source] {
		return
	}
	if !u.seen || int32(t-u.last) >= int32(u.gap) {
		u.spell = t
	}
	if !u.seen || int32(t-u.last) >= 0 {
		u.last = t
	}
	u.seen = true
	dev := "a device"
	if u.xtest[source] {
		dev = "another program's XTEST input"
	}
	switch evtype {
	case xiRawButtonPr:
		if detail < 4 || detail > 7 { // wheel clicks are not held
			u.held[detail] = true
		}
		u.what = fmt.Sprintf("button %d pressed by %s", detail, dev)
	case xiRawButtonRel:
		delete(u.held, detail)
		u.what = fmt.Sprintf("button %d released by %s", detail, dev)
	case xiRawKeyPress:
		u.held[detail|1<<31] = true
		u.what = "a key pressed by " + dev
	case xiRawKeyRelease:
		delete(u.held, detail|1<<31)
		u.what = "a key released by " + dev
	case xiRawMotion:
		u.what = "the pointer moved by " + dev
	default:
		u.what = "touch input from " + dev
	}
}

// Begin marks the start of acu's input: call it before sending any, on
// c's connection (it sends a request, no round trip).
func (u *UserClock) Begin() { u.mark(u.begin) }

// End marks the end of acu's input, after its requests were sent.
func (u *UserClock) End() { u.mark(u.end) }

func (u *UserClock) mark(a xproto.Atom) {
	xproto.ChangeProperty(u.c.X, xproto.PropModeReplace, u.win, a, xproto.AtomInteger, 32, 0, nil)
}

// UserInput is what a Read found: the user's last input by the server's
// clock.
type UserInput struct {
	Seen   bool          // the user made input since the clock started
	Age    time.Duration // since the user's last input
	Spell  time.Duration // how long the current spell of input lasted (first to last input)
	Held   bool          // the user holds a button or key down now
	Detail string        // what the last input was
}

// Read returns the user's input as the server has recorded it up to now.
func (u *UserClock) Read(ctx context.Context) (UserInput, error) {
	// The marker comes back within a round trip; a server that does not
	// answer in readTimeout is an error, not a wait without end.
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	u.sendMu.Lock()
	u.sent++
	ticket := u.sent
	u.mark(u.check)
	u.sendMu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		u.mu.Lock()
		u.cond.Broadcast()
		u.mu.Unlock()
	})
	defer stop()
	u.mu.Lock()
	defer u.mu.Unlock()
	for u.checks < ticket {
		if u.readErr != nil {
			return UserInput{}, u.readErr
		}
		if err := ctx.Err(); err != nil {
			return UserInput{}, fmt.Errorf("read the user's last input on %s: %w", u.rc.Name, err)
		}
		u.cond.Wait()
	}
	if !u.seen {
		return UserInput{}, nil
	}
	age := max(int32(u.checkAt-u.last), 0)
	return UserInput{Seen: true, Age: time.Duration(age) * time.Millisecond,
		Spell: time.Duration(max(int32(u.last-u.spell), 0)) * time.Millisecond,
		Held:  len(u.held) > 0, Detail: u.what}, nil
}

// Close drops the clock's connection and waits for its reader.
func (u *UserClock) Close() {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return
	}
	u.closed = true
	u.mu.Unlock()
	u.rc.Socket.Close()
	<-u.readDone
}
