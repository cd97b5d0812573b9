// Package idle follows the user's input on a Wayland compositor for acu's
// user-first check, through the compositor's idle protocol:
// ext-idle-notify-v1 where offered (its input notification, version 2,
// which idle inhibitors do not silence), else KDE's org_kde_kwin_idle
// (sway 1.7 offers only this one).
//
// Wayland gives a client no view of other clients' input, so the watch
// asks for an idle notification with a timeout of 0 ms: the compositor
// makes it idle at once, and every input on the seat after that makes it
// resume (and idle again at once), so each input event is one resumed
// event, with nothing said about which device made it. acu tells its own
// input apart by bracketing it: Begin before its virtual devices send
// anything, End after the device's round trip. Both ends are markers in
// the watch's own event stream, not times: each sends a wl_display.sync
// on the watch's connection. Begin returns when its marker is answered,
// End once its marker is sent. A resumed event read between the two
// answers is acu's own (the compositor sends a client's events in order;
// acu's input went to it after the first answer, and was taken before the
// second marker was sent); every other one is the user's.
//
// The gate's user-first check needs both an up-to-date LastUser (Flush)
// and a bracket: BeginFlushed does both in Begin's one round trip. So an
// effect of acu's costs one round trip to the compositor on the watch's
// connection (docs/perf/wayland.md, "Click to the app").
//
// Its limits (docs/wayland.md, "The user first"): the user's input during
// acu's own burst is taken for acu's; the input of other clients' virtual
// devices (wtype, ydotool, another agent) counts as the user's; the time
// of the user's input is when the watch read the event, not a compositor
// timestamp (the protocols carry none), and Flush waits until what the
// compositor took so far has been read; with org_kde_kwin_idle an idle
// inhibitor silences every input, which Blind detects.
//
// It does not decide anything: the gate, above it, compares LastUser with
// the quiet period.
package idle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/wayland"
)

// Protocols are the idle protocols the watch speaks, preferred first.
var Protocols = []string{"ext_idle_notifier_v1", "org_kde_kwin_idle"}

// Offered returns the global of the idle protocol a Watch would use among
// globals, false when the compositor offers none of Protocols.
func Offered(globals []wayland.Global) (wayland.Global, bool) {
	for _, p := range Protocols {
		for _, g := range globals {
			if g.Interface == p {
				return g, true
			}
		}
	}
	return wayland.Global{}, false
}

// ErrUnsupported is Open's error when the compositor offers no idle
// protocol: the user's input cannot be seen on it.
var ErrUnsupported = errors.New("the compositor offers neither ext_idle_notifier_v1 nor org_kde_kwin_idle, so the user's input cannot be seen on it (see docs/wayland.md, \"The user first\")")

// timeoutMS is the idle timeout asked for: 0 makes the notification idle
// again right after each input, so every input is reported.
const timeoutMS = 0

// Watch follows one compositor's seat. Its methods are safe for concurrent
// use.
type Watch struct {
	conn     *wayland.Conn
	display  string
	log      *slog.Logger
	protocol string
	version  uint32
	mgr, obj uint32
	// probe is a second org_kde_kwin_idle timeout, for Blind; owned by the
	// loop, like probed (the events it sent so far).
	probe  uint32
	probed int

	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	begun   int            // Begins not yet matched by an End
	open    int            // brackets open in the event stream: Begin's marker answered, End's not yet
	opened  int            // brackets opened in the event stream so far
	queue   []func() error // requests for the loop to send
	last    time.Time      // the user's last input, as read
	lastOwn time.Time      // when the last event taken for acu's was read
	own     int            // resumed events taken for acu's
	user    int            // resumed events taken for the user's
	err     error          // why the loop ended
	closed  bool           // the loop ended
	shut    bool           // Close was called
}

// markerWait bounds the wait of Begin and End: past it (a compositor
// that stopped answering, a loop that could not send), acu goes on and
// the bracket opens or closes when the marker is answered.
const markerWait = 5 * time.Second

// Open connects to the compositor whose socket is at path and starts
// following its seat's input. display names the display in errors (path
// when empty). A compositor without an idle protocol is ErrUnsupported.
func Open(ctx context.Context, path, display string) (*Watch, error) {
	return OpenWithLogger(ctx, path, display, nil)
}

// OpenWithLogger is Open with a logger for the watch's life (nil
// discards): when it starts and stops, and each input of the user at
// Debug.
func OpenWithLogger(ctx context.Context, path, display string, log *slog.Logger) (*Watch, error) {
	if display == "" {
		display = path
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	conn, err := wayland.Dial(ctx, path)
	if err != nil {
		return nil, err
	}
	w := &Watch{conn: conn, display: display, log: log, done: make(chan struct{})}
	if err := w.setup(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("watch the user's input on %s: %w", display, err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go w.run(lctx)
	log.Info("watching the user's input", "display", display, "protocol", w.protocol, "version", w.version)
	return w, nil
}

func (w *Watch) setup(ctx context.Context) error {
	g, ok := Offered(w.conn.Globals())
	if !ok {
		return ErrUnsupported
	}
	seat, err := wayland.BindSeat(w.conn)
	if err != nil {
		return err
	}
	w.protocol = g.Interface
	switch g.Interface {
	case "ext_idle_notifier_v1":
		if w.mgr, w.version, err = w.conn.Bind(g, 2, nil); err != nil {
			return err
		}
		w.obj = w.conn.NewObject("ext_idle_notification_v1", w.onEvent(wayland.IdleNotificationEvResumed))
		op := uint16(wayland.IdleNotifierReqGetIdleNotification)
		if w.version >= 2 { // input only: an app inhibiting idle (a video) does not hide the user
			op = wayland.IdleNotifierReqGetInputIdleNotification
		}
		err = w.conn.Request(w.mgr, op, w.obj, uint32(timeoutMS), seat)
	default: // org_kde_kwin_idle
		if w.mgr, w.version, err = w.conn.Bind(g, 1, nil); err != nil {
			return err
		}
		w.obj = w.conn.NewObject("org_kde_kwin_idle_timeout", w.onEvent(wayland.KwinIdleTimeoutEvResumed))
		if err = w.conn.Request(w.mgr, wayland.KwinIdleReqGetIdleTimeout, w.obj, seat, uint32(timeoutMS)); err != nil {
			return err
		}
		w.probe = w.conn.NewObject("org_kde_kwin_idle_timeout", func(*wayland.Event) { w.probed++ })
		err = w.conn.Request(w.mgr, wayland.KwinIdleReqGetIdleTimeout, w.probe, seat, uint32(timeoutMS))
	}
	if err != nil {
		return err
	}
	return w.conn.Roundtrip(ctx) // a refusal (a protocol error) shows now
}

// onEvent handles the notification's events: resumed is one input on the
// seat, acu's while a bracket is open, else the user's.
func (w *Watch) onEvent(resumed uint16) func(*wayland.Event) {
	return func(ev *wayland.Event) {
		if ev.Opcode != resumed {
			return // idled: the notification is ready for the next input
		}
		now := time.Now()
		w.mu.Lock()
		if w.open > 0 {
			w.own++
			w.lastOwn = now
			w.mu.Unlock()
			return
		}
		w.user++
		w.last = now
		w.mu.Unlock()
		w.log.Debug("the user's input", "display", w.display)
	}
}

func (w *Watch) run(ctx context.Context) {
	defer close(w.done)
	for {
		w.mu.Lock()
		q := w.queue
		w.queue = nil
		w.mu.Unlock()
		var err error
		for _, send := range q {
			if err = send(); err != nil {
				break
			}
		}
		if err == nil {
			err = w.conn.DispatchWake(ctx)
			if err == nil || errors.Is(err, wayland.ErrWoken) {
				continue
			}
		}
		w.mu.Lock()
		if ctx.Err() != nil {
			w.err = fmt.Errorf("the user's input on %s: watch closed", w.display)
		} else {
			w.err = fmt.Errorf("the user's input on %s: %w", w.display, err)
			w.log.Warn("stopped watching the user's input", "display", w.display, "error", err)
		}
		w.closed = true
		w.mu.Unlock()
		return
	}
}

// marker has the loop send a wl_display.sync; answered runs on the loop
// when the compositor answers it, after every event it sent before; sent
// (when not nil) is closed once the sync is written. It returns false
// when the loop has stopped.
func (w *Watch) marker(answered func(), sent chan struct{}) bool {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return false
	}
	w.queue = append(w.queue, func() error {
		err := w.conn.Sync(answered)
		if sent != nil {
			close(sent)
		}
		return err
	})
	w.mu.Unlock()
	w.conn.Wake()
	return true
}

// Begin marks the start of acu's own input: call it before the virtual
// devices send anything. It returns when the compositor has answered a
// marker on the watch's connection (one round trip), so every input it
// took before is counted as the user's and every input after as acu's.
// Brackets nest.
func (w *Watch) Begin() {
	w.mu.Lock()
	w.begun++
	w.mu.Unlock()
	done := make(chan struct{})
	if !w.marker(func() { w.openBracket(nil); close(done) }, nil) {
		return
	}
	w.await("start", done)
}

// bracket is one BeginFlushed's bracket (loop and mu).
type bracket struct {
	open   bool      // its marker was answered: open counts it
	void   bool      // cancelled: it will not open, or no longer counts
	alone  bool      // no other bracket was open when it opened
	opened int       // w.opened once it opened
	ownAt  int       // w.own when it opened
	last   time.Time // w.last when it opened
}

// openBracket opens a bracket in the event stream (Begin's marker was
// answered); b is BeginFlushed's, nil for Begin's. Called on the loop.
func (w *Watch) openBracket(b *bracket) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b != nil {
		b.last = w.last
		if b.void {
			return
		}
		b.open, b.alone, b.ownAt = true, w.open == 0, w.own
	}
	w.open++
	w.opened++
	if b != nil {
		b.opened = w.opened
	}
}

// BeginFlushed is Begin and Flush in Begin's one round trip: when it
// returns, the bracket is open and every input the compositor took before
// the call has been read. It returns LastUser as it was then (acu's input
// in the bracket does not move it), and cancel, which ends the bracket
// at once, without a round trip, when acu then sends nothing in it (the
// gate refused the effect): the input read in the bracket was not acu's,
// so it is taken for the user's (when no other bracket was open with
// it). Otherwise End ends the bracket, as Begin's. On an error (ctx
// ended, the watch stopped) there is no bracket to end (cancel does
// nothing).
func (w *Watch) BeginFlushed(ctx context.Context) (last time.Time, cancel func(), err error) {
	b := &bracket{}
	w.mu.Lock()
	w.begun++
	w.mu.Unlock()
	cancel = func() { w.cancelBracket(b) }
	done := make(chan struct{})
	if !w.marker(func() { w.openBracket(b); close(done) }, nil) {
		cancel()
		w.mu.Lock()
		defer w.mu.Unlock()
		return time.Time{}, cancel, w.err // set with closed, which marker saw
	}
	select {
	case <-done:
		return b.last, cancel, nil
	case <-w.done:
		cancel()
		return time.Time{}, cancel, w.Err()
	case <-ctx.Done():
		cancel()
		return time.Time{}, cancel, fmt.Errorf("read the user's input on %s: %w", w.display, ctx.Err())
	}
}

// cancelBracket ends b, a bracket in which acu sent nothing.
func (w *Watch) cancelBracket(b *bracket) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b.void {
		return
	}
	b.void = true
	w.begun--
	if !b.open {
		return // its marker is not answered yet: it will not open
	}
	w.open--
	// The events read in b were the user's, if no other bracket was open
	// in that time.
	if n := w.own - b.ownAt; n > 0 && b.alone && w.open == 0 && w.opened == b.opened {
		w.own -= n
		w.user += n
		if w.lastOwn.After(w.last) {
			w.last = w.lastOwn
		}
	}
}

// End marks the end of acu's own input: call it after the device's round
// trip returned. It returns once a second marker is sent on the watch's
// connection (without waiting for its answer, which comes after every
// event acu's input caused): input the compositor takes from then on is
// the user's, as it reads its clients' requests in the order they
// arrive. An End without a Begin does nothing.
func (w *Watch) End() {
	w.mu.Lock()
	if w.begun == 0 {
		w.mu.Unlock()
		return
	}
	w.begun--
	w.mu.Unlock()
	sent := make(chan struct{})
	if !w.marker(func() {
		w.mu.Lock()
		w.open--
		w.mu.Unlock()
	}, sent) {
		return
	}
	w.await("end", sent)
}

// await waits for done, a marker's answer or its sending, at most
// markerWait.
func (w *Watch) await(what string, done chan struct{}) {
	t := time.NewTimer(markerWait)
	defer t.Stop()
	select {
	case <-done:
	case <-w.done:
	case <-t.C:
		w.log.Warn("the watch's marker was not answered (or sent) in time: the bracket of acu's input moves when it is", "display", w.display, "marker", what, "waited", markerWait)
	}
}

// Flush returns once every input the compositor took before the call has
// been read, so LastUser after it is up to date.
func (w *Watch) Flush(ctx context.Context) error {
	answered := make(chan struct{})
	if !w.marker(func() { close(answered) }, nil) {
		return w.Err()
	}
	select {
	case <-answered:
		return nil
	case <-w.done:
		return w.Err()
	case <-ctx.Done():
		return fmt.Errorf("read the user's input on %s: %w", w.display, ctx.Err())
	}
}

// LastUser returns when the watch last read input that was not acu's own:
// the zero time when there has been none since Open.
func (w *Watch) LastUser() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// Blind reports whether the compositor reports no input now, so the
// user's input goes unseen: with org_kde_kwin_idle, while an idle
// inhibitor is active (a video player's, a window's under sway's
// inhibit_idle), wlroots disables every timer. The watch asks a second
// timeout of its own to simulate activity: an enabled timer answers with
// an event before a marker's answer, a disabled one does not. It is
// false with ext-idle-notify-v1 (version 2's input notification ignores
// inhibitors; version 1 gives no way to tell).
func (w *Watch) Blind(ctx context.Context) (bool, error) {
	if w.probe == 0 {
		return false, w.Err()
	}
	answer := make(chan bool, 1)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return false, w.Err()
	}
	w.queue = append(w.queue, func() error {
		before := w.probed
		if err := w.conn.Request(w.probe, wayland.KwinIdleTimeoutReqSimulateActivity); err != nil {
			return err
		}
		return w.conn.Sync(func() { answer <- w.probed == before })
	})
	w.mu.Unlock()
	w.conn.Wake()
	select {
	case blind := <-answer:
		return blind, nil
	case <-w.done:
		return false, w.Err()
	case <-ctx.Done():
		return false, fmt.Errorf("ask whether %s reports input: %w", w.display, ctx.Err())
	}
}

// Protocol returns the idle protocol the watch uses and its version.
func (w *Watch) Protocol() (string, uint32) { return w.protocol, w.version }

// Err returns why the watch stopped following the seat (the compositor
// went away), nil while it follows it: a stopped watch sees no input.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}

// Close stops the watch and closes its connection.
func (w *Watch) Close() error {
	w.mu.Lock()
	if w.shut {
		w.mu.Unlock()
		return nil
	}
	w.shut = true
	w.mu.Unlock()
	w.cancel()
	<-w.done
	if w.protocol == "ext_idle_notifier_v1" {
		_ = w.conn.Request(w.obj, wayland.IdleNotificationReqDestroy)
		_ = w.conn.Request(w.mgr, wayland.IdleNotifierReqDestroy)
	} else {
		_ = w.conn.Request(w.obj, wayland.KwinIdleTimeoutReqRelease)
		_ = w.conn.Request(w.probe, wayland.KwinIdleTimeoutReqRelease)
	}
	return w.conn.Close()
}
