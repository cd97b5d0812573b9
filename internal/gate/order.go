package gate

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/damage"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
)

// Defaults of the order barrier.
const (
	// DefaultOrderTimeout bounds one barrier.
	DefaultOrderTimeout = time.Second
	// orderRepaint: after the client answered the ping, a repaint of its
	// window followed by this much stillness proves it handled the input.
	orderRepaint = 10 * time.Millisecond
	// orderStill: a client that repainted after the input began and was
	// then still this long after answering the ping has handled it.
	orderStill = 50 * time.Millisecond
	// orderPing is how long a client may take to answer the ping before
	// the repaints alone decide.
	orderPing = 300 * time.Millisecond
	// orderTick is how often stillness is looked at.
	orderTick = 2 * time.Millisecond
)

// Mechanisms that carry effects. Input by one mechanism can overtake input
// by another on its way into an application (XTest input waits in the
// client's X queue while an AT-SPI call arrives on D-Bus), so a change of
// mechanism within a request waits for Order.
const (
	MechXTest  = "xtest"
	MechAction = "atspi_action"
	MechText   = "atspi_text"
	MechNone   = "" // no effect (a wait)
)

const (
	orderHistory = 512        // repaints kept
	firstPingID  = 0x40000000 // ping ids, apart from any timestamp
)

// OrderResult says whether the input before a change of mechanism was
// proved handled by its application before the next effect.
type OrderResult struct {
	Proved bool
	// Note says how it was proved, or why it could not be.
	Note string
	Took time.Duration
}

// orderer watches, on a connection of its own, what proves an application
// handled its input: its answers to _NET_WM_PING and the repaints of the
// screen (XDamage on the root).
type orderer struct {
	c                   *display.Conn
	protocols, pingAtom xproto.Atom
	hasDamage           bool
	mu                  sync.Mutex
	cond                *sync.Cond
	next                uint32
	pongs               map[uint32]time.Time
	silent              map[uint32]bool // windows that never answered a ping
	answered            map[uint32]bool // windows that answered one
	damages             []damageAt      // the last orderHistory repaints
	dead                error
	unsubscribe         func()
}

type damageAt struct {
	at time.Time
	r  image.Rectangle
}

// newOrderer opens the orderer's connection to dpy.
func newOrderer(ctx context.Context, dpy string) (*orderer, error) {
	c, err := display.Open(ctx, dpy, display.Options{})
	if err != nil {
		return nil, err
	}
	o := &orderer{c: c, pongs: map[uint32]time.Time{}, silent: map[uint32]bool{}, answered: map[uint32]bool{}, next: firstPingID}
	o.cond = sync.NewCond(&o.mu)
	if o.protocols, err = c.Atom("WM_PROTOCOLS"); err == nil {
		o.pingAtom, err = c.Atom("_NET_WM_PING")
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("order on %s: %w", dpy, err)
	}
	o.unsubscribe = c.Subscribe(o.onEvent)
	// Pings come back to the root, sent to SubstructureNotify (GTK) or
	// StructureNotify (Qt) listeners.
	if err := xproto.ChangeWindowAttributesChecked(c.X, c.Screen.Root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskSubstructureNotify | xproto.EventMaskStructureNotify}).Check(); err != nil {
		o.close()
		return nil, fmt.Errorf("order on %s: select the root's events: %w", dpy, err)
	}
	if c.Ext.Damage {
		id, err := damage.NewDamageId(c.X)
		if err == nil {
			err = damage.CreateChecked(c.X, id, xproto.Drawable(c.Screen.Root), damage.ReportLevelRawRectangles).Check()
		}
		o.hasDamage = err == nil
	}
	go func() {
		<-c.Done()
		o.mu.Lock()
		if o.dead == nil {
			o.dead = errors.New("the order connection closed")
		}
		o.cond.Broadcast()
		o.mu.Unlock()
	}()
	return o, nil
}

func (o *orderer) close() {
	o.unsubscribe()
	o.c.Close()
}

func (o *orderer) onEvent(ev xgb.Event) {
	now := time.Now()
	switch e := ev.(type) {
	case xproto.ClientMessageEvent:
		if e.Type != o.protocols || e.Format != 32 {
			return
		}
		d := e.Data.Data32
		if len(d) < 2 || xproto.Atom(d[0]) != o.pingAtom {
			return
		}
		o.mu.Lock()
		if _, ok := o.pongs[d[1]]; ok {
			o.pongs[d[1]] = now
			o.cond.Broadcast()
		}
		o.mu.Unlock()
	case damage.NotifyEvent:
		r := image.Rect(int(e.Area.X), int(e.Area.Y), int(e.Area.X)+int(e.Area.Width), int(e.Area.Y)+int(e.Area.Height))
		o.mu.Lock()
		if len(o.damages) >= orderHistory {
			o.damages = slices.Delete(o.damages, 0, orderHistory/2)
		}
		o.damages = append(o.damages, damageAt{at: now, r: r})
		o.cond.Broadcast()
		o.mu.Unlock()
	}
}

// supportsPing reports whether w lists _NET_WM_PING in WM_PROTOCOLS.
func (o *orderer) supportsPing(w xproto.Window) bool {
	r, err := xproto.GetProperty(o.c.X, false, w, o.protocols, xproto.AtomAtom, 0, 32).Reply()
	if err != nil || r == nil || r.Format != 32 {
		return false
	}
	for i := 0; i+4 <= len(r.Value); i += 4 {
		if xproto.Atom(xgb.Get32(r.Value[i:])) == o.pingAtom {
			return true
		}
	}
	return false
}

// ping sends _NET_WM_PING to w and returns the id its answer carries.
func (o *orderer) ping(w xproto.Window) uint32 {
	o.mu.Lock()
	o.next++
	id := o.next
	o.pongs[id] = time.Time{}
	o.mu.Unlock()
	ev := xproto.ClientMessageEvent{Format: 32, Window: w, Type: o.protocols,
		Data: xproto.ClientMessageDataUnionData32New([]uint32{uint32(o.pingAtom), id, uint32(w), 0, 0})}
	xproto.SendEvent(o.c.X, false, w, xproto.EventMaskNoEvent, string(ev.Bytes()))
	return id
}

// pingWait pings w and waits for its answer until by. A window that
// lists the ping but has never answered it is not pinged again.
func (o *orderer) pingWait(ctx context.Context, w *display.Window, by time.Time) (time.Time, error) {
	o.mu.Lock()
	silent := o.silent[w.ID]
	o.mu.Unlock()
	if silent || !o.supportsPing(xproto.Window(w.ID)) {
		return time.Time{}, fmt.Errorf("window %q does not answer pings: %w", w.Title, input.ErrNoReadProof)
	}
	pid := o.ping(xproto.Window(w.ID))
	o.mu.Lock()
	defer o.mu.Unlock()
	ok := o.wait(ctx, by, func() bool { return !o.pongs[pid].IsZero() })
	at := o.pongs[pid]
	delete(o.pongs, pid)
	if !ok {
		if err := ctx.Err(); err != nil {
			return time.Time{}, err
		}
		if !o.answered[w.ID] {
			o.silent[w.ID] = true
		}
		return time.Time{}, fmt.Errorf("window %q did not answer a ping within %s", w.Title, time.Until(by).Round(time.Millisecond))
	}
	o.answered[w.ID] = true
	return at, nil
}

// wait waits under o.mu until cond holds or deadline passes, and
// reports whether it held. cond is evaluated on every event and every
// orderTick (it may hold by time passing: stillness).
func (o *orderer) wait(ctx context.Context, deadline time.Time, cond func() bool) bool {
	return waitCond(ctx, &o.mu, o.cond, deadline, cond, func() bool { return o.dead != nil })
}

// waitCond waits, with mu held (c's lock), until cond holds; it gives up
// when failed says the orderer died, ctx ends or deadline passes, and
// reports whether cond held. c is also woken every orderTick, so cond may
// read state no one broadcasts for (the clock). The three orderers (X11,
// wlroots, GNOME) wait through it.
func waitCond(ctx context.Context, mu *sync.Mutex, c *sync.Cond, deadline time.Time, cond, failed func() bool) bool {
	wake := func() {
		mu.Lock()
		c.Broadcast()
		mu.Unlock()
	}
	t := time.AfterFunc(time.Until(deadline), wake)
	defer t.Stop()
	stop := context.AfterFunc(ctx, wake)
	defer stop()
	tick := time.NewTicker(orderTick)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				wake()
			}
		}
	}()
	defer func() {
		tick.Stop()
		close(done)
		mu.Unlock() // the ticker may need the lock to see done
		wg.Wait()
		mu.Lock()
	}()
	for !cond() {
		if failed() || ctx.Err() != nil || !time.Now().Before(deadline) {
			return false
		}
		c.Wait()
	}
	return true
}

// lastDamage returns the time of the last repaint touching r after since
// (zero: none).
func (o *orderer) lastDamage(r image.Rectangle, since time.Time) time.Time {
	for i := len(o.damages) - 1; i >= 0; i-- {
		d := o.damages[i]
		if !d.at.After(since) {
			break
		}
		if d.r.Overlaps(r) {
			return d.at
		}
	}
	return time.Time{}
}

// barrier proves that the client of w handled the input sent to it since
// began: the client answered a ping sent after that input (so it has read
// it), and its window repainted after the ping and then stood still
// (orderRepaint), or had repainted since began and stood still orderStill
// after the ping. A client without the ping protocol, or that has never
// answered it (within orderPing), proves it by the repaints alone; one
// that has answered before must answer again.
func (o *orderer) barrier(ctx context.Context, w *display.Window, began time.Time, timeout time.Duration) OrderResult {
	start := time.Now()
	deadline := start.Add(timeout)
	res := func(ok bool, note string) OrderResult {
		return OrderResult{Proved: ok, Note: note, Took: time.Since(start)}
	}
	if w == nil {
		return res(false, "no application window where the previous action landed")
	}
	r := w.Rect()
	// A window that has answered a ping before is waited for until the
	// deadline: a late answer is a busy application, and its repaints
	// alone would prove nothing (it may have painted part of the input).
	o.mu.Lock()
	answered := o.answered[w.ID]
	o.mu.Unlock()
	pingBy := start.Add(orderPing)
	if answered || deadline.Before(pingBy) {
		pingBy = deadline
	}
	pongAt, err := o.pingWait(ctx, w, pingBy)
	if err != nil && ctx.Err() != nil {
		return res(false, ctx.Err().Error())
	}
	pinged := err == nil
	if !pinged && answered {
		return res(false, fmt.Sprintf("window %q did not answer a ping within %s: it may still be handling the input", w.Title, timeout))
	}
	if !pinged {
		pongAt = time.Now()
	}
	if !o.hasDamage {
		if pinged {
			return res(true, "ping")
		}
		return res(false, "the application answers no ping and the server has no XDamage: nothing proves it handled the input")
	}
	var how string
	o.mu.Lock()
	ok := o.wait(ctx, deadline, func() bool {
		now := time.Now()
		if last := o.lastDamage(r, pongAt); !last.IsZero() {
			if now.Sub(last) >= orderRepaint {
				how = "repaint after the ping"
				return true
			}
			return false
		}
		if !o.lastDamage(r, began).IsZero() && now.Sub(pongAt) >= orderStill {
			how = "repainted, then still"
			return true
		}
		return false
	})
	o.mu.Unlock()
	if !ok {
		if ctx.Err() != nil {
			return res(false, ctx.Err().Error())
		}
		return res(false, fmt.Sprintf("window %q did not repaint within %s of the input: nothing proves it handled it", w.Title, timeout))
	}
	if pinged {
		how = "ping, " + how
	}
	return res(true, how)
}

// Order waits until the application where the previous effect landed
// (the window at at, or the focused window when at is nil) has handled
// the input sent since began, at most timeout: one round trip on the
// display's connection (every earlier request processed, the input queued
// to its client), then the client's answer to a ping and its repaint
// (see orderer.barrier). It never fails: the result says whether it was
// proved.
func (h *Hands) Order(ctx context.Context, at *image.Point, began time.Time, timeout time.Duration) OrderResult {
	start := time.Now()
	if timeout <= 0 {
		timeout = DefaultOrderTimeout
	}
	if h.c.wl != nil {
		return h.wlOrder(ctx, at, began, timeout)
	}
	o, err := h.c.orderer(ctx, h.dpy)
	if err != nil {
		return OrderResult{Note: fmt.Sprintf("no order connection: %v", err), Took: time.Since(start)}
	}
	if err := h.c.c.Sync(ctx); err != nil {
		return OrderResult{Note: fmt.Sprintf("round trip: %v", err), Took: time.Since(start)}
	}
	var w *display.Window
	if at != nil {
		w, err = WindowAt(ctx, h.c.c, *at)
	} else {
		w, err = FocusedWindow(ctx, h.c.c)
	}
	if err != nil {
		return OrderResult{Note: err.Error(), Took: time.Since(start)}
	}
	r := o.barrier(ctx, w, began, timeout-time.Since(start))
	r.Took = time.Since(start)
	return r
}

// orderer returns the display's orderer, opening it on first use.
func (c *conn) orderer(ctx context.Context, dpy string) (*orderer, error) {
	c.ordMu.Lock()
	defer c.ordMu.Unlock()
	if c.ord != nil {
		select {
		case <-c.ord.c.Done():
			c.ord.close()
			c.ord = nil
		default:
			return c.ord, nil
		}
	}
	o, err := newOrderer(ctx, dpy)
	if err != nil {
		return nil, err
	}
	c.ord = o
	return o, nil
}

// readProof is the input devices' proof that the client receiving their
// keys has read every key sent so far: after a round trip (the keys are in
// its queue), the focused client answered a ping sent behind them.
func (c *conn) readProof(dpy string) func(context.Context) error {
	return func(ctx context.Context) error {
		o, err := c.orderer(ctx, dpy)
		if err != nil {
			return err
		}
		if err := c.c.Sync(ctx); err != nil {
			return err
		}
		w, err := FocusedWindow(ctx, c.c)
		if err != nil {
			return err
		}
		if w == nil {
			return fmt.Errorf("no focused window to ping: %w", input.ErrNoReadProof)
		}
		_, err = o.pingWait(ctx, w, time.Now().Add(orderPing))
		return err
	}
}
