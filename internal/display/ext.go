package display

import (
	"fmt"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// xgb decodes events and errors through process-wide tables
// (xgb.NewEventFuncs, xgb.NewErrorFuncs) that its extension Init functions
// (shm.Init, damage.Init, ...) write with the numbers one server assigned,
// while every connection's reader goroutine reads them without a lock. That
// is a data race when a display is opened while another receives events,
// and it is wrong when two servers number an extension's events differently
// (an Xvfb without MIT-SHM numbers DAMAGE events one lower).
//
// So acu never calls those Init functions. At package init, every
// extension event number gets a raw constructor and every extension error
// number a generic error; each Conn decodes raw events with its own
// server's numbering, and InitExtensions only fills the connection's own
// (locked) opcode table, which is all xgb's request functions need.
func init() {
	for n := 64; n < 128; n++ {
		if _, ok := xgb.NewEventFuncs[n]; !ok {
			xgb.NewEventFuncs[n] = func(buf []byte) xgb.Event { return rawEvent(append([]byte(nil), buf[:32]...)) }
		}
	}
	for n := 128; n < 256; n++ {
		if _, ok := xgb.NewErrorFuncs[n]; !ok {
			xgb.NewErrorFuncs[n] = func(buf []byte) xgb.Error { return newExtError(buf) }
		}
	}
}

// rawEvent is an extension event not yet decoded for its connection.
type rawEvent []byte

func (e rawEvent) Bytes() []byte  { return e }
func (e rawEvent) String() string { return fmt.Sprintf("extension event %d", e[0]&127) }

// ExtError is an X error raised by an extension request.
type ExtError struct {
	Code     byte
	Sequence uint16
	Bad      uint32
	Major    byte
	Minor    uint16
}

func newExtError(buf []byte) ExtError {
	return ExtError{Code: buf[1], Sequence: xgb.Get16(buf[2:]), Bad: xgb.Get32(buf[4:]),
		Minor: xgb.Get16(buf[8:]), Major: buf[10]}
}

// SequenceId implements xgb.Error.
func (e ExtError) SequenceId() uint16 { return e.Sequence }

// BadId implements xgb.Error.
func (e ExtError) BadId() uint32 { return e.Bad }

func (e ExtError) Error() string {
	return fmt.Sprintf("X extension error %d (request %d.%d, resource %#x)", e.Code, e.Major, e.Minor, e.Bad)
}

// extNames are the extensions acu uses.
var extNames = []string{"MIT-SHM", "DAMAGE", "XFIXES", "XTEST", "XC-MISC", "MIT-SCREEN-SAVER"}

// extInfo is one connection's numbering of its extensions.
type extInfo struct {
	ext        Extensions
	firstEvent map[string]byte
}

// InitExtensions enables on c the extensions acu uses that the server
// offers (MIT-SHM, DAMAGE, XFIXES, XTEST, XC-MISC, MIT-SCREEN-SAVER) and
// reports which. Use it instead of xgb's shm.Init, damage.Init, xfixes.Init,
// screensaver.Init on any connection in an acu process (see the package
// comment in ext.go); it does not negotiate versions. Extension events on a bare xgb connection arrive undecoded;
// Conn decodes them.
func InitExtensions(c *xgb.Conn) (Extensions, error) {
	info, err := initExtensions(c)
	return info.ext, err
}

func initExtensions(c *xgb.Conn) (extInfo, error) {
	info := extInfo{firstEvent: map[string]byte{}}
	cookies := make([]xproto.QueryExtensionCookie, len(extNames))
	for i, n := range extNames {
		cookies[i] = xproto.QueryExtension(c, uint16(len(n)), n)
	}
	for i, ck := range cookies {
		r, err := ck.Reply()
		if err != nil {
			return info, fmt.Errorf("query extension %s: %w", extNames[i], err)
		}
		if !r.Present {
			continue
		}
		name := extNames[i]
		c.ExtLock.Lock()
		c.Extensions[name] = r.MajorOpcode
		c.ExtLock.Unlock()
		if name != "MIT-SCREEN-SAVER" { // its events are never selected
			info.firstEvent[name] = r.FirstEvent
		}
		switch name {
		case "MIT-SHM":
			info.ext.SHM = true
		case "DAMAGE":
			info.ext.Damage = true
		case "XFIXES":
			info.ext.XFixes = true
		case "XTEST":
			info.ext.XTest = true
		case "XC-MISC":
			info.ext.XCMisc = true
		case "MIT-SCREEN-SAVER":
			info.ext.ScreenSaver = true
		}
	}
	return info, nil
}

// decode turns an extension event into its typed form (damage.NotifyEvent,
// ...) using this connection's numbering.
func (c *Conn) decode(ev xgb.Event) xgb.Event {
	raw, ok := ev.(rawEvent)
	if !ok {
		return ev
	}
	n := raw[0] & 127
	for name, first := range c.firstEvent {
		if n < first {
			continue
		}
		if fn, ok := xgb.NewExtEventFuncs[name][int(n-first)]; ok {
			return fn(raw)
		}
	}
	return ev
}
