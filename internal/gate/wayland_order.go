package gate

import (
	"context"
	"fmt"
	"image"
	"slices"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/wayland/screencopy"
)

// wlOrderIdle: the order's damage loop stops copying after this long
// without an Order (a busy screen nobody orders against is not copied).
const wlOrderIdle = 10 * time.Second

// wlOrderer records the compositor's damage of the screen, as the X11
// orderer records XDamage: a screencopy loop (copy_with_damage, which
// answers only when the output changed) on a connection of its own,
// stamping each damaged rectangle with when it arrived.
type wlOrderer struct {
	cap     *screencopy.Capturer
	mu      sync.Mutex
	cond    *sync.Cond
	damages []damageAt
	used    time.Time
	running bool
	primed  bool // the loop's first copy (the baseline) is taken
	dead    error
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// touchOrder keeps the order's damage loop running (or restarts it)
// when an Order was asked on the display before: effects call it so the
// repaints their input causes are recorded for the next Order.
func (w *wlConn) touchOrder(ctx context.Context) {
	if g := w.gnome; g != nil {
		g.ordMu.Lock()
		has := g.ord != nil
		g.ordMu.Unlock()
		if has {
			_, _ = g.orderer(ctx)
		}
		return
	}
	w.ordMu.Lock()
	has := w.ord != nil
	w.ordMu.Unlock()
	if has {
		_, _ = w.orderer(ctx)
	}
}

func (w *wlConn) orderer(ctx context.Context) (*wlOrderer, error) {
	w.ordMu.Lock()
	defer w.ordMu.Unlock()
	if w.ord == nil {
		c, err := screencopy.Open(ctx, w.path, w.name, "")
		if err != nil {
			return nil, err
		}
		o := &wlOrderer{cap: c}
		o.cond = sync.NewCond(&o.mu)
		w.ord = o
	}
	o := w.ord
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dead != nil {
		return nil, o.dead
	}
	o.used = time.Now()
	if !o.running {
		lctx, cancel := context.WithCancel(context.Background())
		o.running, o.primed, o.stop = true, false, cancel
		o.wg.Add(1)
		go o.loop(lctx)
	}
	// Damage is recorded from the loop's first copy on: wait for it (a
	// copy of a static screen returns at once).
	o.wait(ctx, time.Now().Add(2*time.Second), func() bool { return o.primed || !o.running })
	return o, nil
}

// waitRepaint waits, at most timeout, until the compositor repaints part
// of r after since; it reports whether it did.
func (o *wlOrderer) waitRepaint(ctx context.Context, r image.Rectangle, since time.Time, timeout time.Duration) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.wait(ctx, time.Now().Add(timeout), func() bool { return !o.lastDamage(r, since).IsZero() })
}

// loop copies the screen whenever it changed and records the damage,
// until it was unused for wlOrderIdle or the orderer closes.
func (o *wlOrderer) loop(ctx context.Context) {
	defer o.wg.Done()
	// The first copy after a (re)start reports the whole screen damaged:
	// it stands for no repaint and is not recorded.
	first := true
	for {
		nctx, cancel := context.WithTimeout(ctx, time.Second)
		_, rects, err := o.cap.Next(nctx)
		cancel()
		now := time.Now()
		o.mu.Lock()
		switch {
		case err == nil && first:
			first, o.primed = false, true
			o.cond.Broadcast()
		case err == nil:
			if len(o.damages)+len(rects) > orderHistory {
				o.damages = slices.Delete(o.damages, 0, min(len(o.damages), orderHistory/2+len(rects)))
			}
			for _, r := range rects {
				o.damages = append(o.damages, damageAt{at: now, r: r})
			}
			o.cond.Broadcast()
		case ctx.Err() != nil:
			o.running = false
			o.cond.Broadcast()
			o.mu.Unlock()
			return
		case nctx.Err() == nil: // the capture failed, not the timeout
			o.dead = fmt.Errorf("order: screencopy: %w", err)
			o.running = false
			o.cond.Broadcast()
			o.mu.Unlock()
			return
		}
		if now.Sub(o.used) > wlOrderIdle {
			o.running = false
			o.mu.Unlock()
			return
		}
		o.mu.Unlock()
	}
}

func (o *wlOrderer) close() {
	o.mu.Lock()
	stop := o.stop
	o.mu.Unlock()
	if stop != nil {
		stop()
	}
	o.wg.Wait()
	o.cap.Close()
}

func (o *wlOrderer) lastDamage(r image.Rectangle, since time.Time) time.Time {
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

// wait waits under o.mu until cond holds or deadline passes.
func (o *wlOrderer) wait(ctx context.Context, deadline time.Time, cond func() bool) bool {
	return waitCond(ctx, &o.mu, o.cond, deadline, cond, func() bool { return o.dead != nil })
}

// wlOrder is Order on Wayland, where no client can ping another's
// window: a wl_display.sync round trip on the input device's connection
// (the compositor has taken every event sent and delivered it to the
// focused client), then a repaint of the landing window's rectangle,
// seen in the compositor's screencopy damage since the input began and
// followed by orderRepaint of stillness, within the timeout.
func (h *Hands) wlOrder(ctx context.Context, at *image.Point, began time.Time, timeout time.Duration) OrderResult {
	if h.c.wl.gnome != nil {
		return h.gnomeOrder(ctx, began, timeout)
	}
	start := time.Now()
	res := func(ok bool, note string) OrderResult {
		return OrderResult{Proved: ok, Note: note, Took: time.Since(start)}
	}
	o, err := h.c.wl.orderer(ctx)
	if err != nil {
		return res(false, fmt.Sprintf("no screencopy to see repaints: %v", err))
	}
	dev, ok := h.dev.(*wlDevice)
	if !ok {
		return res(false, "no Wayland input device on this display")
	}
	if err := dev.sync(ctx); err != nil {
		return res(false, fmt.Sprintf("round trip: %v", err))
	}
	var w *display.Window
	if at != nil {
		w, err = h.c.windowAt(ctx, *at)
	} else {
		w, err = h.c.focused(ctx)
	}
	if err != nil {
		return res(false, err.Error())
	}
	if w == nil && h.c.wl.ipc != "" {
		return res(false, "no application window where the previous action landed")
	}
	var r image.Rectangle
	if w != nil {
		r = w.Rect()
		if n, ok, err := h.c.wl.node(ctx, w.ID); err == nil && ok {
			r = n.Rect // the window with its decorations: a focus change repaints the title bar
		}
	} else {
		w = &display.Window{Title: "the screen"}
	}
	if r.Empty() { // a compositor with no window geometry (no sway IPC): any repaint of the screen
		r = image.Rect(0, 0, h.c.wl.w, h.c.wl.h)
	}
	deadline := start.Add(timeout)
	o.mu.Lock()
	ok = o.wait(ctx, deadline, func() bool {
		last := o.lastDamage(r, began)
		return !last.IsZero() && time.Since(last) >= orderRepaint
	})
	dead := o.dead
	o.mu.Unlock()
	return res(verdict(ctx, ok, dead,
		"compositor round trip, then a repaint of the window (Wayland has no ping to another client)",
		fmt.Sprintf("window %q did not repaint within %s of the input (the compositor took it; Wayland has no ping to another client): nothing proves the app handled it", w.Title, timeout)))
}

// verdict is a repaint proof's answer once its wait has ended: proved
// (with what proved it), or why not: the context ended, the orderer died,
// or missed (no repaint in time).
func verdict(ctx context.Context, ok bool, dead error, proved, missed string) (bool, string) {
	switch {
	case ok:
		return true, proved
	case ctx.Err() != nil:
		return false, ctx.Err().Error()
	case dead != nil:
		return false, dead.Error()
	}
	return false, missed
}
