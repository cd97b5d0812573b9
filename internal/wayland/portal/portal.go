package portal

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/godbus/dbus/v5"
)

const (
	portalName    = "org.freedesktop.portal.Desktop"
	portalPath    = "/org/freedesktop/portal/desktop"
	portalRD      = "org.freedesktop.portal.RemoteDesktop"
	portalSC      = "org.freedesktop.portal.ScreenCast"
	portalRequest = "org.freedesktop.portal.Request"
)

// Stream is one screen-cast stream the portal granted.
type Stream struct {
	Node          uint32 // the PipeWire node id
	X, Y          int32  // the monitor's position in the desktop, when the portal says
	Width, Height int32  // its size, when the portal says
}

// PortalSession is an xdg-desktop-portal RemoteDesktop session with a
// screen cast of a monitor: the path that works in any desktop with a
// portal backend for them (GNOME's, KDE's), after the person at the
// desktop approves it in the portal's dialog.
type PortalSession struct {
	conn    *dbus.Conn
	portal  dbus.BusObject
	session dbus.ObjectPath
	streams []Stream
	devices uint32
	token   string
	once    sync.Once
}

var tokenSeq atomic.Uint64

// PortalOptions say what a portal session asks for.
type PortalOptions struct {
	// Input asks for the keyboard and the pointer too (a RemoteDesktop
	// session); without it the session is a ScreenCast only.
	Input bool
	// Persist asks the portal for a restore token that lets a later
	// session skip the dialog (persist_mode 2: until the person revokes
	// it). xdg-desktop-portal 1.16 (Debian 12) persists screen casts
	// only; remote-desktop sessions persist from 1.17 on.
	Persist bool
	// RestoreToken is the token an earlier session gave: the portal
	// restores its choice without showing the dialog.
	RestoreToken string
}

// OpenPortal asks the portal on the session bus at busAddress for a
// screen cast of one monitor, with the keyboard and pointer when
// opts.Input. Start shows the portal's dialog (unless a restore token
// stands for an earlier approval), so OpenPortal returns only once a
// person approved it (or refused: an error), or ctx ends. The portal
// must run as the same user as acu: it identifies the asking app through
// /proc.
func OpenPortal(ctx context.Context, busAddress string, opts PortalOptions) (*PortalSession, error) {
	conn, err := dbus.Connect(busAddress)
	if err != nil {
		return nil, fmt.Errorf("portal: connect to the session bus %s: %w", busAddress, err)
	}
	p := &PortalSession{conn: conn, portal: conn.Object(portalName, portalPath)}
	fail := func(err error) (*PortalSession, error) {
		p.Close()
		return nil, err
	}
	if err := conn.AddMatchSignalContext(ctx, dbus.WithMatchInterface(portalRequest), dbus.WithMatchMember("Response")); err != nil {
		return fail(fmt.Errorf("portal: watch responses: %w", err))
	}
	iface := portalSC
	if opts.Input {
		iface = portalRD
	}
	res, err := p.request(ctx, iface+".CreateSession", nil, map[string]dbus.Variant{"session_handle_token": dbus.MakeVariant(p.newToken())})
	if err != nil {
		return fail(err)
	}
	h, _ := res["session_handle"].Value().(string)
	if h == "" {
		return fail(fmt.Errorf("portal: CreateSession answered no session_handle: %v", res))
	}
	p.session = dbus.ObjectPath(h)
	if opts.Input {
		if _, err := p.request(ctx, portalRD+".SelectDevices", []any{p.session}, map[string]dbus.Variant{"types": dbus.MakeVariant(uint32(3))}); err != nil {
			return fail(err)
		}
	}
	// types 1: a monitor; cursor_mode 2 (embedded): the pointer drawn in the frames.
	sources := map[string]dbus.Variant{"types": dbus.MakeVariant(uint32(1)), "cursor_mode": dbus.MakeVariant(uint32(2))}
	if opts.Persist {
		sources["persist_mode"] = dbus.MakeVariant(uint32(2))
	}
	if opts.RestoreToken != "" {
		sources["restore_token"] = dbus.MakeVariant(opts.RestoreToken)
	}
	if _, err := p.request(ctx, portalSC+".SelectSources", []any{p.session}, sources); err != nil {
		return fail(err)
	}
	res, err = p.request(ctx, iface+".Start", []any{p.session, ""}, nil)
	if err != nil {
		return fail(err)
	}
	p.devices, _ = res["devices"].Value().(uint32)
	p.token, _ = res["restore_token"].Value().(string)
	var raw [][]any
	if v, ok := res["streams"]; ok {
		if err := dbus.Store([]any{v.Value()}, &raw); err != nil {
			return fail(fmt.Errorf("portal: Start's streams %v: %w", v, err))
		}
	}
	for _, st := range raw {
		if len(st) != 2 {
			continue
		}
		s := Stream{}
		s.Node, _ = st[0].(uint32)
		props, _ := st[1].(map[string]dbus.Variant)
		if xy, ok := props["position"].Value().([]any); ok && len(xy) == 2 {
			s.X, _ = xy[0].(int32)
			s.Y, _ = xy[1].(int32)
		}
		if wh, ok := props["size"].Value().([]any); ok && len(wh) == 2 {
			s.Width, _ = wh[0].(int32)
			s.Height, _ = wh[1].(int32)
		}
		p.streams = append(p.streams, s)
	}
	if len(p.streams) == 0 {
		return fail(fmt.Errorf("portal: Start granted no stream: %v", res))
	}
	if opts.Input && p.devices&3 != 3 {
		return fail(fmt.Errorf("portal: Start granted devices %d, not the keyboard and the pointer (1|2): the person left \"Allow remote interaction\" off", p.devices))
	}
	return p, nil
}

func (p *PortalSession) newToken() string {
	return fmt.Sprintf("acu%d_%d", os.Getpid(), tokenSeq.Add(1))
}

// request calls a portal method that answers through a Request object's
// Response signal, and returns its results.
func (p *PortalSession) request(ctx context.Context, method string, args []any, opts map[string]dbus.Variant) (map[string]dbus.Variant, error) {
	if opts == nil {
		opts = map[string]dbus.Variant{}
	}
	token := p.newToken()
	opts["handle_token"] = dbus.MakeVariant(token)
	// The Request's path is known before the call, so a Response that
	// comes before the call returns is not missed.
	sender := strings.ReplaceAll(strings.TrimPrefix(p.conn.Names()[0], ":"), ".", "_")
	want := dbus.ObjectPath(portalPath + "/request/" + sender + "/" + token)
	signals := make(chan *dbus.Signal, 16)
	p.conn.Signal(signals)
	defer p.conn.RemoveSignal(signals)
	var handle dbus.ObjectPath
	if err := p.portal.CallWithContext(ctx, method, 0, append(args, opts)...).Store(&handle); err != nil {
		return nil, fmt.Errorf("portal: %s: %w", method, err)
	}
	if handle != want {
		return nil, fmt.Errorf("portal: %s answered request %s, want %s", method, handle, want)
	}
	for {
		select {
		case sig := <-signals:
			if sig.Path != want || sig.Name != portalRequest+".Response" || len(sig.Body) != 2 {
				continue
			}
			code, _ := sig.Body[0].(uint32)
			res, _ := sig.Body[1].(map[string]dbus.Variant)
			switch code {
			case 0:
				return res, nil
			case 1:
				return nil, fmt.Errorf("portal: %s: the person at the desktop cancelled the request", method)
			default:
				return nil, fmt.Errorf("portal: %s: the request failed (response %d): %v", method, code, res)
			}
		case <-ctx.Done():
			p.conn.Object(portalName, want).Call(portalRequest+".Close", 0)
			return nil, fmt.Errorf("portal: %s: no answer (is the dialog waiting for a person?): %w", method, ctx.Err())
		}
	}
}

// Streams are the granted screen-cast streams.
func (p *PortalSession) Streams() []Stream { return p.streams }

// RestoreToken is the token the portal gave to skip the dialog next time
// ("" when it gave none: xdg-desktop-portal before 1.17 cannot persist a
// remote-desktop session).
func (p *PortalSession) RestoreToken() string { return p.token }

// PipeWireRemote opens the PipeWire connection that may read the granted
// streams (the portal restricts it to them).
func (p *PortalSession) PipeWireRemote(ctx context.Context) (*os.File, error) {
	var fd dbus.UnixFD
	if err := p.portal.CallWithContext(ctx, portalSC+".OpenPipeWireRemote", 0, p.session, map[string]dbus.Variant{}).Store(&fd); err != nil {
		return nil, fmt.Errorf("portal: OpenPipeWireRemote: %w", err)
	}
	return os.NewFile(uintptr(fd), "pipewire-remote"), nil
}

// Close ends the session (the portal stops the stream and the devices).
func (p *PortalSession) Close() error {
	var err error
	p.once.Do(func() {
		if p.session != "" {
			err = p.conn.Object(portalName, p.session).Call("org.freedesktop.portal.Session.Close", 0).Err
		}
		if e := p.conn.Close(); err == nil {
			err = e
		}
	})
	return err
}

func (p *PortalSession) call(ctx context.Context, method string, args ...any) error {
	args = append([]any{p.session, map[string]dbus.Variant{}}, args...)
	if err := p.portal.CallWithContext(ctx, portalRD+"."+method, 0, args...).Err; err != nil {
		return fmt.Errorf("portal: %s: %w", method, err)
	}
	return nil
}

// Move puts the pointer at x, y in the first stream's pixels.
func (p *PortalSession) Move(ctx context.Context, x, y float64) error {
	return p.call(ctx, "NotifyPointerMotionAbsolute", p.streams[0].Node, x, y)
}

// Button presses or releases a button numbered as on X11 (1-3, 8, 9).
func (p *PortalSession) Button(ctx context.Context, button int, down bool) error {
	code, ok := buttonCodes[button]
	if !ok {
		return fmt.Errorf("button %d: use 1-3, 8 or 9", button)
	}
	return p.call(ctx, "NotifyPointerButton", code, boolState(down))
}

// Click moves to x, y and presses and releases button.
func (p *PortalSession) Click(ctx context.Context, x, y float64, button int) error {
	if err := p.Move(ctx, x, y); err != nil {
		return err
	}
	if err := p.Button(ctx, button, true); err != nil {
		return err
	}
	return p.Button(ctx, button, false)
}

func (p *PortalSession) key(ctx context.Context, ks uint32, down bool) error {
	return p.call(ctx, "NotifyKeyboardKeysym", int32(ks), boolState(down))
}

// Type types text by keysyms, as Session.Type.
func (p *PortalSession) Type(ctx context.Context, text string) error {
	return typeText(ctx, p.key, text)
}

// Key presses key combos, as Session.Key.
func (p *PortalSession) Key(ctx context.Context, keys string) error {
	return pressKeys(ctx, p.key, keys, 0)
}

func boolState(down bool) uint32 {
	if down {
		return 1
	}
	return 0
}
