package a11yjudge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/privacy"
)

// Name is the judge's name in run events and explanations.
const Name = "a11y"

// ErrNoTree is wrapped when a display has no accessibility tree to read:
// no accessibility bus, or no accessible application on it. The wait
// engine then gives the structural parts to the OCR or vision judge.
var ErrNoTree = errors.New("no accessibility tree")

// appRoot is where every application's root object lives.
const appRoot = dbus.ObjectPath("/org/a11y/atspi/accessible/root")

// DefaultBackstop is Options.Backstop's default.
const DefaultBackstop = 2 * time.Second

// Options configures a Judge.
type Options struct {
	// Bus returns the accessibility bus address of a display (the
	// AT_SPI_BUS property of its root window); nil, or an error, falls
	// back to asking SessionBus.
	Bus func(ctx context.Context, display string) (string, error)
	// SessionBus is the desktop session's bus address
	// (DBUS_SESSION_BUS_ADDRESS).
	SessionBus string
	// Exclude are the windows never read (ACU_EXCLUDE_WINDOWS): nodes of
	// applications or windows whose names hold one of the words are
	// invisible to every predicate.
	Exclude []string
	// Backstop is how old the last whole read of a display's tree may be
	// before a decision reads it whole again, for toolkits that do not
	// report every change with an event (Qt's list rows); default 2 s.
	Backstop time.Duration
	// CallTimeout bounds each D-Bus call; default atspi.DefaultCallTimeout.
	CallTimeout time.Duration
	// Logger receives Debug logs of reads and events; nil discards.
	Logger *slog.Logger
}

// Judge decides predicates from the accessibility trees of displays, kept
// up to date by AT-SPI events. Safe for concurrent use; Close stops it.
type Judge struct {
	o       Options
	log     *slog.Logger
	exclude *privacy.Filter

	ctx    context.Context // the listeners'
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	desks  map[string]*desk
	closed bool
}

// New returns a Judge; it connects to a display's bus on first use.
func New(o Options) *Judge {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Backstop <= 0 {
		o.Backstop = DefaultBackstop
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Judge{o: o, log: log, exclude: privacy.New(o.Exclude), ctx: ctx, cancel: cancel, desks: map[string]*desk{}}
}

// Excludes reports whether a window or application called name is one no
// read may show (Options.Exclude).
func (j *Judge) Excludes(name string) bool { return j.exclude.Excludes(name) }

// Close stops the event listeners and closes the bus connections.
func (j *Judge) Close() {
	j.mu.Lock()
	j.closed = true
	desks := j.desks
	j.desks = map[string]*desk{}
	j.mu.Unlock()
	j.cancel()
	j.wg.Wait()
	for _, d := range desks {
		d.c.Close()
	}
}

// desk is one display's tree as last read, and what events have marked
// since.
type desk struct {
	display string
	c       *atspi.Client

	readMu sync.Mutex // one refresh and evaluation at a time

	mu        sync.Mutex
	apps      map[string]app // by the application's bus name
	all       bool           // list the applications and walk them all
	dirtyApps map[string]bool
	dirtyObjs map[atspi.Ref]bool
	listening bool
	wholeAt   time.Time // when the last whole read began
	listenErr error
	broken    bool
	subs      map[chan struct{}]struct{}
}

func (j *Judge) desk(ctx context.Context, display string) (*desk, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil, errors.New("accessibility judge closed")
	}
	if d := j.desks[display]; d != nil {
		d.mu.Lock()
		broken := d.broken
		d.mu.Unlock()
		if !broken {
			return d, nil
		}
		delete(j.desks, display)
		d.c.Close()
	}
	ao := atspi.Options{SessionBus: j.o.SessionBus, CallTimeout: j.o.CallTimeout, Logger: j.log}
	var busErr error
	if j.o.Bus != nil {
		addr, err := j.o.Bus(ctx, display)
		if err == nil && addr != "" {
			ao.Address = addr
		}
		busErr = err
	}
	if ao.Address == "" && ao.SessionBus == "" {
		if busErr != nil {
			return nil, fmt.Errorf("%w on %s: %v", ErrNoTree, display, busErr)
		}
		return nil, fmt.Errorf("%w on %s: no accessibility bus on the display and no session bus (DBUS_SESSION_BUS_ADDRESS)", ErrNoTree, display)
	}
	c, err := atspi.Connect(ctx, ao)
	if err != nil {
		return nil, fmt.Errorf("%w on %s: %v", ErrNoTree, display, err)
	}
	d := &desk{display: display, c: c, all: true, dirtyApps: map[string]bool{}, dirtyObjs: map[atspi.Ref]bool{},
		subs: map[chan struct{}]struct{}{}, apps: map[string]app{}}
	events, err := c.Listen(j.ctx)
	if err != nil {
		// Without events every decision walks the whole tree, and waits
		// poll; logged once per connection.
		j.log.Info("accessibility events unavailable: the tree is read whole on every decision", "display", display, "err", err)
		d.listenErr = err
	} else {
		d.listening = true
		j.wg.Add(1)
		go j.listen(d, events)
	}
	j.desks[display] = d
	return d, nil
}

// listen marks what each event touched and wakes the display's watchers.
// When the stream ends other than by Close (the bus went away), the desk
// is broken: the next use reconnects, and watchers' channels are closed.
func (j *Judge) listen(d *desk, events <-chan atspi.Event) {
	defer j.wg.Done()
	for ev := range events {
		d.mu.Lock()
		d.mark(ev)
		for ch := range d.subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		d.mu.Unlock()
	}
	d.mu.Lock()
	d.broken = true
	for ch := range d.subs {
		close(ch)
		delete(d.subs, ch)
	}
	d.mu.Unlock()
}

// mark records what ev may have changed; d.mu must be held.
func (d *desk) mark(ev atspi.Event) {
	kind := ev.Kind
	switch {
	case ev.Overflow, ev.Registry:
		d.all = true // applications came or went, or events were lost
	case strings.HasPrefix(kind, "window:"), strings.HasPrefix(kind, "object:children-changed"):
		d.dirtyApps[ev.Source.Bus] = true
	case strings.HasPrefix(kind, "object:state-changed:"):
		switch strings.TrimPrefix(kind, "object:state-changed:") {
		case "showing", "visible", "defunct", "iconified":
			d.dirtyApps[ev.Source.Bus] = true // a subtree appears or goes
		default:
			d.dirtyObjs[ev.Source] = true
		}
	case kind == "object:property-change:accessible-value", kind == "object:property-change:accessible-description",
		strings.HasPrefix(kind, "object:value-changed"), strings.HasPrefix(kind, "object:text-changed"),
		strings.HasPrefix(kind, "focus:"):
		d.dirtyObjs[ev.Source] = true
	default: // names (a window's title is its descendants' window), roles, parents
		d.dirtyApps[ev.Source.Bus] = true
	}
}

// Watch returns a channel that receives a value after every AT-SPI event
// on display (coalesced: one pending value at most), until ctx ends. It is
// closed when the display's bus goes away; watch again. It fails when the
// display has no accessibility bus or its events cannot be listened to.
func (j *Judge) Watch(ctx context.Context, display string) (<-chan struct{}, error) {
	d, err := j.desk(ctx, display)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.listenErr != nil {
		return nil, fmt.Errorf("listen to accessibility events on %s: %w", display, d.listenErr)
	}
	if d.broken {
		return nil, fmt.Errorf("accessibility bus of %s went away", display)
	}
	ch := make(chan struct{}, 1)
	d.subs[ch] = struct{}{}
	context.AfterFunc(ctx, func() {
		d.mu.Lock()
		delete(d.subs, ch)
		d.mu.Unlock()
	})
	return ch, nil
}

// Decision is the answer to one Decide.
type Decision struct {
	Met      bool
	Outcomes []Outcome // one per predicate, in order
	// Evidence is what decided: the outcomes' evidence when every
	// predicate holds, else the first one that does not.
	Evidence string
	// Apps and Nodes are the accessible applications and objects the
	// predicates were decided on.
	Apps, Nodes int
	// Read says what was read again for this decision: "tree" (every
	// application), "N apps" (the applications events touched), "N
	// objects" (objects whose states or values changed), or "nothing".
	Read    string
	Latency time.Duration
}

// Decide reads what events marked since the last decision on display (the
// whole tree the first time, when events are unavailable, or when fresh
// is set) and decides every predicate. A new wait asks fresh: events of a
// change made just before it may still be on their way, and the tree as
// last read would answer for the state before that change. An error
// wrapping ErrNoTree means there is no tree to decide on: no bus, or no
// accessible application when something must be gone.
func (j *Judge) Decide(ctx context.Context, display string, preds []Predicate, fresh bool) (Decision, error) {
	start := time.Now()
	d, err := j.desk(ctx, display)
	if err != nil {
		return Decision{}, err
	}
	asked := time.Now()
	d.readMu.Lock()
	defer d.readMu.Unlock()
	d.mu.Lock()
	if fresh && !d.wholeAt.After(asked) {
		// Not if a whole read began after the question: waits created
		// together share one.
		d.all = true
	}
	d.mu.Unlock()
	read, err := d.refresh(ctx, j.o.Backstop)
	if err != nil {
		if ctx.Err() == nil {
			d.mu.Lock()
			d.broken, d.all = true, true
			d.mu.Unlock()
		}
		return Decision{}, fmt.Errorf("read the accessibility tree of %s: %w", display, err)
	}
	dec := Decision{Read: read}
	apps := make([]app, 0, len(d.apps))
	for _, a := range d.apps {
		if len(a) > 0 && j.exclude.Excludes(a[0].Name) {
			continue
		}
		apps = append(apps, a)
		dec.Nodes += len(a)
	}
	dec.Apps = len(apps)
	if len(apps) == 0 {
		// Nothing is open yet, or nothing open is accessible: "open" is
		// not yet, but "gone" cannot be told from an empty tree.
		for _, p := range preds {
			if p.Check == Gone {
				return dec, fmt.Errorf("%w on %s: no accessible application is running, so whether %s is gone cannot be read from the tree (start applications with accessibility on)", ErrNoTree, display, p.what())
			}
		}
	}
	if !j.exclude.Empty() {
		apps = j.visible(apps)
	}
	dec.Met = true
	var met []string
	for _, p := range preds {
		o := evaluate(p, apps)
		dec.Outcomes = append(dec.Outcomes, o)
		if o.Met {
			met = append(met, o.Evidence)
		} else if dec.Met {
			dec.Met = false
			dec.Evidence = o.Evidence
		}
	}
	if dec.Met {
		dec.Evidence = strings.Join(met, "; ")
	}
	dec.Latency = time.Since(start)
	return dec, nil
}

// visible hides the nodes of excluded windows: their role is blanked, so
// no predicate finds them, and indices stay valid.
func (j *Judge) visible(apps []app) []app {
	out := make([]app, len(apps))
	for i, a := range apps {
		c := make(app, len(a))
		copy(c, a)
		for k := range c {
			if j.exclude.Excludes(c[k].App, c[k].Window) {
				c[k] = atspi.Node{Parent: c[k].Parent}
			}
		}
		out[i] = c
	}
	return out
}

// refresh reads again what events marked; d.readMu must be held.
func (d *desk) refresh(ctx context.Context, backstop time.Duration) (string, error) {
	d.mu.Lock()
	all := d.all || !d.listening || time.Since(d.wholeAt) > backstop
	dirtyApps, dirtyObjs := d.dirtyApps, d.dirtyObjs
	d.all, d.dirtyApps, d.dirtyObjs = false, map[string]bool{}, map[atspi.Ref]bool{}
	d.mu.Unlock()
	restore := func() {
		d.mu.Lock()
		d.all = true
		d.mu.Unlock()
	}
	if all {
		began := time.Now()
		refs, err := d.c.Applications(ctx)
		if err != nil {
			restore()
			return "", err
		}
		apps := make(map[string]app, len(refs))
		for _, r := range refs {
			nodes, err := d.c.TreeOf(ctx, []atspi.Ref{r})
			if err != nil {
				if ctx.Err() != nil {
					restore()
					return "", err
				}
				continue
			}
			if len(nodes) > 0 {
				apps[r.Bus] = nodes
			}
		}
		d.apps = apps
		d.mu.Lock()
		d.wholeAt = began
		d.mu.Unlock()
		return "tree", nil
	}
	for bus := range dirtyApps {
		nodes, err := d.c.TreeOf(ctx, []atspi.Ref{{Bus: bus, Path: appRoot}})
		if ctx.Err() != nil {
			restore()
			return "", ctx.Err()
		}
		if err != nil || len(nodes) == 0 {
			delete(d.apps, bus) // gone (or never an application)
			continue
		}
		d.apps[bus] = nodes
	}
	objs := 0
	for ref := range dirtyObjs {
		if dirtyApps[ref.Bus] {
			continue
		}
		a := d.apps[ref.Bus]
		i := indexOf(a, ref)
		if i < 0 {
			continue // not in the tree as read (under a hidden object)
		}
		n, err := d.c.Read(ctx, ref)
		if err != nil {
			if ctx.Err() != nil {
				restore()
				return "", ctx.Err()
			}
			continue // it went away: its parent's children-changed follows
		}
		old := a[i]
		n.Parent, n.Depth, n.App, n.Window = old.Parent, old.Depth, old.App, old.Window
		a[i] = n
		objs++
	}
	switch {
	case len(dirtyApps) > 0:
		return fmt.Sprintf("%d apps, %d objects", len(dirtyApps), objs), nil
	case objs > 0:
		return fmt.Sprintf("%d objects", objs), nil
	}
	return "nothing", nil
}

func indexOf(a app, ref atspi.Ref) int {
	for i := range a {
		if a[i].Ref == ref {
			return i
		}
	}
	return -1
}
