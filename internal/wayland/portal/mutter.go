package portal

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/godbus/dbus/v5"
)

const (
	remoteDesktopName = "org.gnome.Mutter.RemoteDesktop"
	remoteDesktopPath = "/org/gnome/Mutter/RemoteDesktop"
	rdSession         = "org.gnome.Mutter.RemoteDesktop.Session"
	screenCastName    = "org.gnome.Mutter.ScreenCast"
	screenCastPath    = "/org/gnome/Mutter/ScreenCast"
	scSession         = "org.gnome.Mutter.ScreenCast.Session"
	scStream          = "org.gnome.Mutter.ScreenCast.Stream"
)

// Session is a mutter remote-desktop session with a screen cast of one
// monitor linked to it: input goes in through the remote-desktop session,
// frames come out as a PipeWire stream, and absolute pointer positions
// are given in the stream's (the monitor's) pixels. Mutter ends the
// session when the D-Bus connection that made it closes, so a Session
// holds its own connection.
type Session struct {
	conn     *dbus.Conn
	rd       dbus.BusObject
	sc       dbus.BusObject
	stream   dbus.ObjectPath
	node     uint32
	closeErr error
	once     sync.Once
	mods     held                      // the modifiers ModsDown left down
	clip     clip                      // the remote-desktop clipboard (clipboard.go)
	sent     atomic.Pointer[time.Time] // when the last input call was sent, for Settled

	imu        sync.Mutex
	evLo, evHi time.Time // the idle monitor's last event, as readings pinned it (idle.go)
}

// Open connects to the session bus at busAddress (a GNOME session's
// DBUS_SESSION_BUS_ADDRESS), creates a remote-desktop session, links a
// screen cast of the monitor named connector ("" for the primary one)
// to it, starts it, and returns once mutter has announced the stream's
// PipeWire node.
func Open(ctx context.Context, busAddress, connector string) (*Session, error) {
	// Not dbus.WithContext(ctx): that would close the connection, and
	// with it the session, when ctx ends.
	conn, err := dbus.Connect(busAddress)
	if err != nil {
		return nil, fmt.Errorf("mutter remote desktop: connect to the session bus %s: %w", busAddress, err)
	}
	s := &Session{conn: conn}
	fail := func(what string, err error) (*Session, error) {
		conn.Close()
		if e, ok := err.(dbus.Error); ok && e.Name == "org.freedesktop.DBus.Error.ServiceUnknown" {
			return nil, fmt.Errorf("mutter remote desktop: %s: %w (the session is not GNOME's mutter, or mutter was built without remote desktop; docs/wayland.md, \"GNOME and KDE\")", what, err)
		}
		return nil, fmt.Errorf("mutter remote desktop: %s: %w", what, err)
	}
	var rdPath dbus.ObjectPath
	if err := conn.Object(remoteDesktopName, remoteDesktopPath).CallWithContext(ctx, remoteDesktopName+".CreateSession", 0).Store(&rdPath); err != nil {
		return fail("create the remote-desktop session", err)
	}
	s.rd = conn.Object(remoteDesktopName, rdPath)
	id, err := s.rd.GetProperty(rdSession + ".SessionId")
	if err != nil {
		return fail("read the session id", err)
	}
	var scPath dbus.ObjectPath
	props := map[string]dbus.Variant{"remote-desktop-session-id": id}
	if err := conn.Object(screenCastName, screenCastPath).CallWithContext(ctx, screenCastName+".CreateSession", 0, props).Store(&scPath); err != nil {
		return fail("create the screen-cast session", err)
	}
	s.sc = conn.Object(screenCastName, scPath)
	// cursor-mode 1: the pointer is drawn into the frames, as a person sees it.
	if err := s.sc.CallWithContext(ctx, scSession+".RecordMonitor", 0, connector,
		map[string]dbus.Variant{"cursor-mode": dbus.MakeVariant(uint32(1))}).Store(&s.stream); err != nil {
		return fail(fmt.Sprintf("record the monitor %q", connector), err)
	}
	if err := conn.AddMatchSignalContext(ctx, dbus.WithMatchObjectPath(s.stream), dbus.WithMatchInterface(scStream),
		dbus.WithMatchMember("PipeWireStreamAdded")); err != nil {
		return fail("watch the stream", err)
	}
	signals := make(chan *dbus.Signal, 8)
	conn.Signal(signals)
	defer conn.RemoveSignal(signals)
	// A screen cast linked to a remote-desktop session starts with it.
	if err := s.rd.CallWithContext(ctx, rdSession+".Start", 0).Err; err != nil {
		return fail("start the session", err)
	}
	for {
		select {
		case sig := <-signals:
			if sig.Path == s.stream && sig.Name == scStream+".PipeWireStreamAdded" && len(sig.Body) == 1 {
				if n, ok := sig.Body[0].(uint32); ok {
					s.node = n
					// mutter drops the first key and pointer events of
					// a session (seen on a headless mutter 43, whose
					// seat has no other devices), for longer when the
					// machine is loaded (under -race, the first one to
					// nine characters typed right after Open were lost):
					// Shift taps and pointer nudges there and back take
					// their place until mutter has settled the devices.
					err := s.settle(ctx)
					if err != nil {
						s.Close()
						return nil, err
					}
					return s, nil
				}
			}
		case <-ctx.Done():
			s.Close()
			return nil, fmt.Errorf("mutter remote desktop: waiting for the stream's PipeWire node: %w", ctx.Err())
		}
	}
}

// Node is the PipeWire node id of the monitor's stream.
func (s *Session) Node() uint32 { return s.node }

// Close stops the session (mutter removes its virtual devices and the
// stream) and closes the connection.
func (s *Session) Close() error {
	s.once.Do(func() {
		s.closeErr = s.rd.Call(rdSession+".Stop", 0).Err
		if err := s.conn.Close(); s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}

func (s *Session) call(ctx context.Context, method string, args ...any) error {
	if strings.HasPrefix(method, "Notify") {
		now := time.Now()
		s.sent.Store(&now)
	}
	if err := s.rd.CallWithContext(ctx, rdSession+"."+method, 0, args...).Err; err != nil {
		return fmt.Errorf("mutter remote desktop: %s: %w", method, err)
	}
	return nil
}

// Move puts the pointer at x, y in the monitor's pixels.
func (s *Session) Move(ctx context.Context, x, y float64) error {
	return s.call(ctx, "NotifyPointerMotionAbsolute", string(s.stream), x, y)
}

// evdev button codes (linux/input-event-codes.h) by X11 button number.
var buttonCodes = map[int]int32{1: 0x110, 2: 0x112, 3: 0x111, 8: 0x113, 9: 0x114}

// Button presses (down) or releases button, numbered as on X11 (1 left,
// 2 middle, 3 right, 8 back, 9 forward). Buttons 4-7 are the wheel: use
// Scroll.
func (s *Session) Button(ctx context.Context, button int, down bool) error {
	code, ok := buttonCodes[button]
	if !ok {
		if button >= 4 && button <= 7 {
			return fmt.Errorf("button %d is a wheel step: scroll instead", button)
		}
		return fmt.Errorf("button %d: use 1-3, 8 or 9", button)
	}
	return s.call(ctx, "NotifyPointerButton", code, down)
}

// Click moves to x, y and presses and releases button.
func (s *Session) Click(ctx context.Context, x, y float64, button int) error {
	if err := s.Move(ctx, x, y); err != nil {
		return err
	}
	if err := s.Button(ctx, button, true); err != nil {
		return err
	}
	return s.Button(ctx, button, false)
}

// Scroll turns the wheel by steps: dy > 0 down, dx > 0 right.
func (s *Session) Scroll(ctx context.Context, dx, dy int) error {
	if dy != 0 {
		if err := s.call(ctx, "NotifyPointerAxisDiscrete", uint32(0), int32(dy)); err != nil {
			return err
		}
	}
	if dx != 0 {
		return s.call(ctx, "NotifyPointerAxisDiscrete", uint32(1), int32(dx))
	}
	return nil
}

// key presses or releases the key that types keysym.
func (s *Session) key(ctx context.Context, ks uint32, down bool) error {
	return s.call(ctx, "NotifyKeyboardKeysym", ks, down)
}

// Type types text: the characters any Latin keyboard layout has
// (printable ASCII; newline as Return, tab as Tab) by keysyms, which
// mutter finds in the session's layout, pressing the level's modifiers
// itself (so 'A' is Shift+a); the rest of each line from its first
// other character on by a paste (splitLayout, paste), as mutter drops a
// keysym its layout lacks, 0x01000000+U ones included, and its API
// cannot upload a keymap (docs/wayland.md, "GNOME and KDE"). The
// clipboard a paste replaced is offered again afterwards.
func (s *Session) Type(ctx context.Context, text string) error {
	var saved map[string][]byte
	pasted := false
	restore := func(err error) error {
		if !pasted || saved == nil {
			return err
		}
		if _, rErr := s.offer(context.WithoutCancel(ctx), saved); err == nil && rErr != nil {
			err = fmt.Errorf("restore the clipboard after pasting: %w", rErr)
		}
		return err
	}
	runs := splitLayout(text)
	for _, r := range runs {
		if r.keys {
			if err := typeText(ctx, s.key, r.text); err != nil {
				return restore(err)
			}
			continue
		}
		if !pasted {
			var err error
			if saved, err = s.saveClipboard(ctx); err != nil {
				return err
			}
			pasted = true
		}
		if err := s.paste(ctx, r.text); err != nil {
			return restore(err)
		}
		// The app inserts what it read once the transfer has ended, from
		// its own event loop, and takes keys sent meanwhile first: give
		// it that turn before the next keys (this text's or the next
		// action's).
		if err := sleepCtx(ctx, pasteSettle); err != nil {
			return restore(err)
		}
	}
	return restore(nil)
}

// Paste key and bounds of a paste.
const (
	pasteKey     = "ctrl+v"
	pasteTimeout = 3 * time.Second
	pasteSettle  = 200 * time.Millisecond
)

// paste makes text the clipboard and presses ctrl+v, and returns once
// the focused application has read it.
func (s *Session) paste(ctx context.Context, text string) error {
	content := map[string][]byte{}
	for _, m := range TextTypes {
		content[m] = []byte(text)
	}
	gen, err := s.offer(ctx, content)
	if err != nil {
		return err
	}
	if err := s.Key(ctx, pasteKey); err != nil {
		return err
	}
	if !s.waitServed(ctx, gen, pasteTimeout) {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fmt.Errorf("typing %q on GNOME: acu types characters outside the keyboard layout by pasting them (%s), and the focused application did not read the clipboard within %s: nothing of it was typed (a terminal pastes with ctrl+shift+v: set the clipboard and press that instead; or focus a text field first)", text, pasteKey, pasteTimeout)
	}
	return nil
}

// run is a stretch of text typed one way.
type run struct {
	text string
	keys bool // by keysyms; else by a paste
}

// inLayout reports whether r is typed by its keysym: printable ASCII,
// newline and tab, which any Latin layout has.
func inLayout(r rune) bool { return r == '\n' || r == '\t' || r == '\r' || (r >= 0x20 && r < 0x7f) }

// splitLayout splits text into runs typed by keysyms and runs pasted: in
// each line (newline and tab, which are keys, end one), the characters
// before the first one outside the layout are typed, and the rest of the
// line is pasted in one piece. An application reads a paste
// asynchronously and takes keys sent meanwhile first, so a paste is
// followed by keys only where the text has a newline or tab.
func splitLayout(text string) []run {
	var out []run
	add := func(s string, keys bool) {
		if s == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].keys == keys && keys {
			out[n-1].text += s
			return
		}
		out = append(out, run{text: s, keys: keys})
	}
	for len(text) > 0 {
		end := strings.IndexAny(text, "\n\t\r")
		line, sep := text, ""
		if end >= 0 {
			line, sep, text = text[:end], text[end:end+1], text[end+1:]
		} else {
			text = ""
		}
		cut := strings.IndexFunc(line, func(r rune) bool { return !inLayout(r) })
		if cut < 0 {
			add(line, true)
		} else {
			add(line[:cut], true)
			add(line[cut:], false)
		}
		add(sep, true)
	}
	return out
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Key presses and releases space-separated key combos ("ctrl+a",
// "Return", "shift+Tab"): the modifiers go down in order, the key is
// tapped, the modifiers come up in reverse order.
func (s *Session) Key(ctx context.Context, keys string) error { return pressKeys(ctx, s.key, keys, 0) }

// settleRounds and settleGap: how long Open lets mutter settle a new
// session's devices, sending events it may drop.
const (
	settleRounds = 4
	settleGap    = 50 * time.Millisecond
)

func (s *Session) settle(ctx context.Context) error {
	for i := range settleRounds {
		if i > 0 {
			select {
			case <-time.After(settleGap):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err := s.Key(ctx, "shift")
		if err == nil {
			err = s.call(ctx, "NotifyPointerMotionRelative", -1.0, 0.0)
		}
		if err == nil {
			err = s.call(ctx, "NotifyPointerMotionRelative", 1.0, 0.0)
		}
		if err == nil {
			err = s.Sync(ctx)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
