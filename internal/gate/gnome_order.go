package gate

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/wayland/mutterframes"
)

// gnomeOrderer records when mutter's screen changed, for the ordering
// proof on GNOME, as wlOrderer records screencopy damage on wlroots: a
// screen cast of its own (the pointer left out, so moving it is no
// repaint) read by mutterframes, whose watch fires on every frame that
// differs from the one before. Effects keep it running (touchOrder); it
// stops after wlOrderIdle without an Order.
type gnomeOrderer struct {
	dpy  string
	hub  *mutterframes.Hub
	mu   sync.Mutex
	cond *sync.Cond
	// changes: when frames differing from the one before arrived.
	changes []time.Time
	used    time.Time
	running bool
	dead    error
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

func (g *gnomeConn) orderer(ctx context.Context) (*gnomeOrderer, error) {
	g.ordMu.Lock()
	defer g.ordMu.Unlock()
	if g.ord == nil {
		bus := g.bus
		o := &gnomeOrderer{dpy: g.dpy, hub: mutterframes.New(mutterframes.Options{Bus: func() string { return bus }, HideCursor: true, Idle: wlOrderIdle})}
		o.cond = sync.NewCond(&o.mu)
		g.ord = o
	}
	o := g.ord
	o.mu.Lock()
	defer o.mu.Unlock()
	o.used = time.Now()
	if o.running {
		return o, nil
	}
	o.dead = nil
	lctx, cancel := context.WithCancel(context.Background())
	// The watch lives as long as the loop, not the asking request.
	ch, err := o.hub.Watch(lctx, g.dpy, capture.Target{Kind: capture.Screen})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("a screen cast to see repaints: %w", err)
	}
	o.running, o.stop = true, cancel
	o.wg.Add(1)
	go o.loop(lctx, cancel, ch)
	return o, nil
}

// loop records each change until it was unused for wlOrderIdle.
func (o *gnomeOrderer) loop(ctx context.Context, cancel context.CancelFunc, ch <-chan struct{}) {
	defer o.wg.Done()
	defer cancel() // ends the hub's watch; the hub closes the cast once idle
	tick := time.NewTicker(wlOrderIdle / 4)
	defer tick.Stop()
	for {
		select {
		case _, ok := <-ch:
			o.mu.Lock()
			if !ok {
				o.running, o.dead = false, fmt.Errorf("mutter's screen cast ended")
				o.cond.Broadcast()
				o.mu.Unlock()
				return
			}
			if len(o.changes) >= orderHistory {
				o.changes = o.changes[orderHistory/2:]
			}
			o.changes = append(o.changes, time.Now())
			o.cond.Broadcast()
			o.mu.Unlock()
		case <-tick.C:
			o.mu.Lock()
			idle := time.Since(o.used) > wlOrderIdle
			if idle {
				o.running = false
			}
			o.mu.Unlock()
			if idle {
				return
			}
		case <-ctx.Done():
			o.mu.Lock()
			o.running = false
			o.cond.Broadcast()
			o.mu.Unlock()
			return
		}
	}
}

func (o *gnomeOrderer) lastChange(since time.Time) time.Time {
	if n := len(o.changes); n > 0 && o.changes[n-1].After(since) {
		return o.changes[n-1]
	}
	return time.Time{}
}

func (o *gnomeOrderer) close() {
	o.mu.Lock()
	stop := o.stop
	o.mu.Unlock()
	if stop != nil {
		stop()
	}
	o.wg.Wait()
	o.hub.Close()
}

// waitFor waits under o.mu until cond holds, ctx ends or deadline passes.
func (o *gnomeOrderer) waitFor(ctx context.Context, deadline time.Time, cond func() bool) bool {
	return waitCond(ctx, &o.mu, o.cond, deadline, cond, func() bool { return o.dead != nil })
}

// gnomeOrder is Order on GNOME: mutter's idle monitor shows it has
// handled the last input event (dispatched it to the focused client:
// portal.Session.Settled), then the screen repaints after the input
// began and is still for orderRepaint. mutter tells no client which
// window is where, so any repaint of the screen counts: a weaker proof
// than on sway, as on wlroots compositors without sway's IPC.
func (h *Hands) gnomeOrder(ctx context.Context, began time.Time, timeout time.Duration) OrderResult {
	start := time.Now()
	res := func(ok bool, note string) OrderResult {
		return OrderResult{Proved: ok, Note: note, Took: time.Since(start)}
	}
	o, err := h.c.wl.gnome.orderer(ctx)
	if err != nil {
		return res(false, err.Error())
	}
	dev, ok := h.dev.(*wlDevice)
	if !ok {
		return res(false, "no input device on this display")
	}
	if err := dev.sync(ctx); err != nil {
		return res(false, fmt.Sprintf("mutter has not handled the input: %v", err))
	}
	o.mu.Lock()
	ok = o.waitFor(ctx, start.Add(timeout), func() bool {
		last := o.lastChange(began)
		return !last.IsZero() && time.Since(last) >= orderRepaint
	})
	dead := o.dead
	o.mu.Unlock()
	return res(verdict(ctx, ok, dead,
		"mutter handled the input (its idle monitor), then the screen repainted (GNOME tells no client its windows)",
		fmt.Sprintf("the screen did not repaint within %s of the input (mutter handled it): nothing proves the app did", timeout)))
}
