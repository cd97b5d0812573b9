package actions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/smartwait"
)

// Settler waits until a target stops changing (*smartwait.Engine).
type Settler interface {
	Settle(ctx context.Context, s smartwait.SettleSpec) (smartwait.SettleResult, error)
}

// Options configures a Service.
type Options struct {
	// Hub captures frames for settling, screenshots and element maps
	// (required).
	Hub *capture.Hub
	// Runs records every request on a session run; nil records nothing.
	Runs Runs
	// Settle waits for the screen to settle after actions; nil refuses
	// requests that ask for it.
	Settle Settler
	// Shots is the screenshot registry, shared with GET /v1/screenshot;
	// nil makes one.
	Shots *Shots
	// DefaultDisplay is used when a request names none.
	DefaultDisplay string
	// SessionBus is the session bus address used to find a display's
	// accessibility bus when the display does not announce it.
	SessionBus string
	// Exclude are the windows never shown (ACU_EXCLUDE_WINDOWS), left out
	// of element maps (the hub already blacks out their pixels).
	Exclude []string
	// OCR adds recognized text to element maps; nil gives tree-only maps.
	OCR *ocr.Engine
	// Gate is where every effect goes (shared with the desktop routes, the
	// agents and the take-over); nil makes one with Policy and Input.
	Gate *gate.Gate
	// Policy says where acting is allowed, for the gate made when Gate is
	// nil (the given gate has its own).
	Policy Policy
	// SessionIdle ends a client's session run after this long without a
	// request; default DefaultSessionIdle.
	SessionIdle time.Duration
	// Input configures each display's XTest device, for the gate made when
	// Gate is nil.
	Input gate.InputOptions
	// FrameQuality is the default JPEG quality of screenshots (default 72).
	FrameQuality int
	// FrameMaxDim is the default width cap of JPEG screenshots (default 960).
	FrameMaxDim int
	Logger      *slog.Logger
	Now         func() time.Time
}

// DefaultClickHold is how long a click holds the button down unless
// Options.Input.ClickDelay says otherwise: toolkits read the press and the
// release, not the time between them, so the hold is short and clicks over
// the wire stay within a few milliseconds (input's own default, 10 ms, is
// the agent loop's).
const DefaultClickHold = 2 * time.Millisecond

// Service runs action requests and serves element maps. It is safe for
// concurrent use; requests on one display run one at a time.
type Service struct {
	opts  Options
	log   *slog.Logger
	shots *Shots
	sess  *sessions

	ownGate bool // the gate is the service's own: Close closes it

	mu    sync.Mutex
	desks map[string]*desktop
}

// New returns a Service.
func New(o Options) (*Service, error) {
	if o.Hub == nil {
		return nil, errors.New("actions: Options.Hub is nil: the action service needs the capture hub")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Shots == nil {
		o.Shots = NewShots()
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = DefaultSessionIdle
	}
	if o.Policy.Quiet <= 0 {
		o.Policy.Quiet = DefaultQuiet
	}
	if o.Input.ClickDelay == 0 {
		o.Input.ClickDelay = DefaultClickHold
	}
	own := o.Gate == nil
	if own {
		o.Gate = gate.New(gate.Options{DefaultDisplay: o.DefaultDisplay, Policy: o.Policy, Input: o.Input,
			Logger: o.Logger.With("component", "gate"), Now: o.Now})
	}
	if o.FrameQuality <= 0 {
		o.FrameQuality = 72
	}
	if o.FrameMaxDim <= 0 {
		o.FrameMaxDim = 960
	}
	return &Service{opts: o, log: o.Logger, shots: o.Shots, desks: make(map[string]*desktop), ownGate: own,
		sess: &sessions{runs: o.Runs, idle: o.SessionIdle, now: o.Now, live: make(map[sessionKey]*session)}}, nil
}

// Shots returns the screenshot registry.
func (s *Service) Shots() *Shots { return s.shots }

// Run ends idle session runs until ctx ends, then ends the live ones and
// closes the displays' connections.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(min(max(s.opts.SessionIdle/4, 100*time.Millisecond), time.Minute))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			s.sess.reap(fctx, true)
			cancel()
			s.Close()
			return nil
		case <-t.C:
			s.sess.reap(ctx, false)
		}
	}
}

// Close releases every display's connection, device and accessibility
// client.
func (s *Service) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, d := range s.desks {
		d.close()
		delete(s.desks, name)
	}
	if s.ownGate {
		s.opts.Gate.Close()
	}
}

// desktop is what the service holds per display: the gate's connection
// (for reads) and hands (for every effect), and its own accessibility
// client and element extractor.
type desktop struct {
	name  string
	conn  *display.Conn // nil on a Wayland display (gate.IsWayland)
	w, h  int           // the screen's size in pixels
	hands *gate.Hands   // nil when the policy lets nothing act here: hErr says why
	hErr  error
	tree  *atspi.Client
	ex    *elements.Extractor // nil when the display has neither a tree nor OCR
	exE   error               // why ex is nil

	mu   sync.Mutex // one request at a time
	last *elements.Map
}

func (d *desktop) close() {
	if d.tree != nil {
		d.tree.Close()
	}
}

// acting returns d's hands, or why nothing may act on d.
func (d *desktop) acting() (*gate.Hands, error) {
	if d.hands == nil {
		return nil, d.hErr
	}
	return d.hands, nil
}

func (s *Service) display(dpy string) string {
	if dpy == "" {
		return s.opts.DefaultDisplay
	}
	return dpy
}

// desktop returns the open parts of dpy, opening them on first use or when
// the connection died.
func (s *Service) desktop(ctx context.Context, dpy string) (*desktop, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var conn *display.Conn
	if !gate.IsWayland(dpy) { // a Wayland display has no X connection: the gate's hands and reads serve it
		c, err := s.opts.Gate.Conn(ctx, dpy)
		if err != nil {
			return nil, err
		}
		conn = c
	}
	sw, sh, err := s.opts.Gate.ScreenSize(ctx, dpy)
	if err != nil {
		return nil, err
	}
	if d := s.desks[dpy]; d != nil {
		if d.conn == conn {
			return d, nil
		}
		d.close() // the gate reconnected: so does the tree
		delete(s.desks, dpy)
	}
	d := &desktop{name: dpy, conn: conn, w: sw, h: sh}
	d.hands, d.hErr = s.opts.Gate.Hands(ctx, dpy)
	if d.hErr != nil {
		if _, refused := gate.IsRefused(d.hErr); !refused {
			return nil, d.hErr
		}
	}
	ao := atspi.Options{SessionBus: s.opts.SessionBus, Logger: s.log.With("component", "atspi")}
	if conn != nil {
		if addr, err := atspi.DisplayBusAddress(ctx, conn); err == nil && addr != "" {
			ao.Address = addr
		}
	}
	if tree, err := atspi.Connect(ctx, ao); err != nil {
		s.log.Info("no accessibility bus: element maps hold OCR text only", "display", dpy, "err", err)
		d.exE = fmt.Errorf("no accessibility bus on %s (%v)", dpy, err)
	} else {
		d.tree = tree
	}
	eo := elements.Options{Display: dpy, Capture: s.opts.Hub, Exclude: s.opts.Exclude, Logger: s.log.With("component", "elements")}
	if d.hands != nil {
		eo.Input = d.hands.Device()
		eo.Effect = elementEffect(d.hands)
	}
	if d.tree != nil {
		eo.Tree = d.tree
	}
	if s.opts.OCR != nil {
		eo.OCR = s.opts.OCR
	}
	if ex, err := elements.New(eo); err == nil {
		d.ex = ex
	} else if d.exE == nil {
		d.exE = err
	}
	s.desks[dpy] = d
	return d, nil
}

// extract reads a fresh element map of d.
func (d *desktop) extract(ctx context.Context) (*elements.Map, error) {
	if d.ex == nil {
		return nil, &Error{Code: api.CodeUnavailable, Message: fmt.Sprintf("the element map is not available: %v: start applications with accessibility on, or enable OCR", d.exE)}
	}
	m, err := d.ex.Extract(ctx)
	if err != nil {
		return nil, fmt.Errorf("element map of %s: %w", d.name, err)
	}
	d.last = m
	return m, nil
}

// elementEffect runs the element extractor's accessibility effects through
// the gate (its deny-list by application and window, the user-first pause,
// the audit).
func elementEffect(h *gate.Hands) func(context.Context, *elements.Element, string, func(context.Context) error) error {
	return func(ctx context.Context, el *elements.Element, kind string, fn func(context.Context) error) error {
		return h.Element(ctx, el.ID, el.App, el.Window, kind, fn)
	}
}
