package capture

import (
	"context"
	"errors"
	"fmt"
	"image"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/damage"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
)

// ensure makes sure s.conn is live, reconnecting with bounded backoff
// (s.mu held).
func (s *source) ensure(ctx context.Context) error {
	if s.conn != nil && s.conn.Alive() {
		return nil
	}
	if s.conn != nil {
		s.teardown()
	}
	select {
	case <-s.hub.closing:
		return ErrClosed
	default:
	}
	if now := time.Now(); now.Before(s.retryAt) {
		return fmt.Errorf("display %s unreachable, retrying in %s: %w", s.name, s.retryAt.Sub(now).Round(time.Millisecond), s.lastErr)
	}
	if err := s.connect(ctx); err != nil {
		s.failures++
		d := 50 * time.Millisecond << min(s.failures-1, 10)
		s.retryAt = time.Now().Add(min(d, s.hub.opts.MaxBackoff))
		s.lastErr = err
		return err
	}
	s.failures, s.lastErr = 0, nil
	return nil
}

func (s *source) connect(ctx context.Context) error {
	c, err := display.Open(ctx, s.name, display.Options{Logger: s.hub.log, AllowRemote: s.hub.opts.AllowRemote})
	if err != nil {
		return err
	}
	scr := c.Screen
	if err := checkFormat(s.name, scr); err != nil {
		c.Close()
		return err
	}
	atom, err := c.Atom("_ACU_CAPTURE_SYNC")
	if err != nil {
		c.Close()
		return err
	}
	s.markerAtom.Store(uint32(atom))
	s.dirty.Store(newDirtyBands(scr.Height))
	unsub := c.Subscribe(s.onEvent)
	fail := func(what string, err error) error {
		unsub()
		c.Close()
		return fmt.Errorf("set up %s on %s: %w", what, s.name, err)
	}
	marker, err := xproto.NewWindowId(c.X)
	if err != nil {
		return fail("sync window", err)
	}
	if err := xproto.CreateWindowChecked(c.X, 0, marker, scr.Root, -1, -1, 1, 1, 0,
		xproto.WindowClassInputOnly, 0, 0, nil).Check(); err != nil {
		return fail("sync window", err)
	}
	// Top-level windows moving, appearing or going: window watchers
	// refresh their rectangles.
	xproto.ChangeWindowAttributes(c.X, scr.Root, xproto.CwEventMask, []uint32{xproto.EventMaskSubstructureNotify})
	s.hasDamage = false
	if c.Ext.Damage {
		id, err := damage.NewDamageId(c.X)
		if err == nil {
			err = damage.CreateChecked(c.X, id, xproto.Drawable(scr.Root), damage.ReportLevelRawRectangles).Check()
		}
		if err != nil {
			s.log.Info("XDamage unavailable, every capture reads the screen", "err", err)
		} else {
			s.hasDamage = true
		}
	}
	s.conn, s.unsub, s.marker = c, unsub, marker
	if s.hasDamage {
		// The server reports the whole root as damaged when the damage
		// object is created; let that pass before the first capture.
		if err := s.syncEvents(ctx, c); err != nil {
			s.conn, s.unsub = nil, nil
			return fail("damage", err)
		}
	}
	s.setCached(nil)
	s.shmOff = false
	s.segOK, s.damageOff, s.exact = false, false, false
	s.seq.Add(1)
	clear(s.ids)
	s.hub.wg.Add(1)
	go s.supervise(c)
	if s.everOnline {
		s.st.reconnects.Add(1)
		s.log.Info("display reconnected")
		// Watchers registered before a reconnect: new rectangles, and
		// one notification since anything may have changed.
		s.kick()
	}
	s.everOnline = true
	return nil
}

// busyGap is the longest time between two reads of a display for which
// the second recycles frame buffers: frames at 10 per second or more.
const busyGap = 100 * time.Millisecond

// checkFormat accepts the screens capture reads: 32 bits per pixel, least
// significant byte first (BGRX), depth 24 or 32.
func checkFormat(dpy string, scr display.Screen) error {
	if scr.BitsPerPixel != 32 || !scr.LSBFirst || (scr.Depth != 24 && scr.Depth != 32) {
		return fmt.Errorf("display %s has depth %d at %d bits per pixel: capture supports 24- and 32-bit displays (start Xvfb with -screen 0 1280x720x24)",
			dpy, scr.Depth, scr.BitsPerPixel)
	}
	return nil
}

// teardown drops the connection and everything tied to it (s.mu held).
func (s *source) teardown() {
	c := s.conn
	if c == nil {
		return
	}
	if s.sh != nil {
		s.sh.close(c)
		s.sh = nil
	}
	s.unsub()
	c.Close()
	s.conn, s.unsub = nil, nil
	s.setCached(nil)
	s.segOK = false
	s.emu.Lock()
	for id, ch := range s.markers {
		close(ch)
		delete(s.markers, id)
	}
	s.emu.Unlock()
}

// supervise waits for c to be lost and, while someone watches the display,
// reconnects without waiting for the next Capture.
func (s *source) supervise(c *display.Conn) {
	defer s.hub.wg.Done()
	select {
	case <-c.Done():
	case <-s.hub.closing:
		return
	}
	s.log.Info("display connection lost")
	s.mu.Lock()
	if s.conn == c {
		s.teardown()
	}
	s.mu.Unlock()
	for {
		s.emu.Lock()
		n := len(s.watchers)
		s.emu.Unlock()
		if n == 0 {
			return
		}
		wait, err := s.reconnect()
		if err == nil {
			return
		}
		select {
		case <-time.After(max(wait, 10*time.Millisecond)):
		case <-s.hub.closing:
			return
		}
	}
}

// reconnect connects the source unless it is connected; wait is how long
// until the next attempt is allowed after a failure.
func (s *source) reconnect() (wait time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.recoverX(&err, "reconnect")
	if s.conn != nil {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = s.ensure(ctx)
	return time.Until(s.retryAt), err
}

// syncEvents returns once every event the server generated before this
// call has been dispatched: it sends itself a marker event and waits for it.
func (s *source) syncEvents(ctx context.Context, c *display.Conn) error {
	s.emu.Lock()
	s.nextMarker++
	id := s.nextMarker
	ch := make(chan struct{})
	s.markers[id] = ch
	s.emu.Unlock()
	ev := xproto.ClientMessageEvent{Format: 32, Window: s.marker, Type: xproto.Atom(s.markerAtom.Load()),
		Data: xproto.ClientMessageDataUnionData32New([]uint32{id, 0, 0, 0, 0})}
	xproto.SendEvent(c.X, false, s.marker, 0, string(ev.Bytes()))
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	var err error
	select {
	case <-ch:
		if !c.Alive() {
			err = errors.New("connection lost")
		}
		return err
	case <-c.Done():
		err = errors.New("connection lost")
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = errors.New("no marker event within 5s")
	}
	s.emu.Lock()
	delete(s.markers, id)
	s.emu.Unlock()
	return err
}

// onEvent runs on the connection's reader goroutine: no blocking, no X
// round trips.
func (s *source) onEvent(ev xgb.Event) {
	switch e := ev.(type) {
	case damage.NotifyEvent:
		s.seq.Add(1)
		s.st.damage.Add(1)
		r := image.Rect(int(e.Area.X), int(e.Area.Y), int(e.Area.X)+int(e.Area.Width), int(e.Area.Y)+int(e.Area.Height))
		if d := s.dirty.Load(); d != nil {
			d.mark(r.Min.Y, r.Max.Y)
		}
		s.emu.Lock()
		for w := range s.watchers {
			if w.rect.Overlaps(r) {
				w.notify()
			}
		}
		s.emu.Unlock()
	case xproto.ClientMessageEvent:
		if uint32(e.Type) != s.markerAtom.Load() {
			return
		}
		id := e.Data.Data32[0]
		s.emu.Lock()
		if ch, ok := s.markers[id]; ok {
			close(ch)
			delete(s.markers, id)
		}
		s.emu.Unlock()
	case xproto.ConfigureNotifyEvent, xproto.MapNotifyEvent, xproto.UnmapNotifyEvent,
		xproto.ReparentNotifyEvent, xproto.DestroyNotifyEvent:
		s.kickWindows()
	}
}
