package elements

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/privacy"
)

// Defaults for zero Options fields.
const (
	DefaultMax            = 200
	DefaultSettleInterval = 120 * time.Millisecond
	DefaultSettleMax      = 800 * time.Millisecond
	DefaultMinOCRConf     = 40
)

// Frames captures a display's screen.
type Frames interface {
	Capture(ctx context.Context, dpy string, t capture.Target) (*frame.Frame, error)
	ScreenSize(ctx context.Context, dpy string) (int, int, error)
}

// Options configures an Extractor. At least one of Tree and Capture with
// OCR must be set.
type Options struct {
	// Display is the display the maps are of: an X display (":99") or a
	// Wayland socket.
	Display string
	// Capture provides the frames for the settle check and OCR (a
	// *capture.Hub for X11 displays; cmd/acu passes one that reads
	// Wayland displays too); nil skips both.
	Capture Frames
	// Tree is the display's accessibility bus; nil gives OCR-only maps.
	Tree *atspi.Client
	// Windows, for a Wayland display, lists its windows as the compositor
	// placed them (SwayWindows): its toolkits report accessible extents
	// relative to their own window, and each accessible window's elements
	// are moved by its window's content origin. nil on X11, where the
	// extents are screen pixels already.
	Windows Windows
	// OCR reads the text the tree lacks; nil gives tree-only maps.
	OCR *ocr.Engine
	// Input executes pointer and keyboard fallbacks of steps (see Execute):
	// the gate's hands.
	Input Device
	// Effect runs each accessibility effect of a step (an action, text set
	// into an element, the focus) under the gate's policy and audit
	// (gate.Hands.Element); nil runs them directly (tests).
	Effect func(ctx context.Context, el *Element, kind string, fn func(context.Context) error) error
	// Max caps the elements of a map; default 200.
	Max int
	// SettleInterval and SettleMax: before extracting, frames are captured
	// SettleInterval apart until two consecutive ones are identical, for at
	// most SettleMax. Defaults 120 ms and 800 ms; a negative SettleMax
	// disables the wait.
	SettleInterval, SettleMax time.Duration
	// MinOCRConf drops OCR lines below this confidence (0..100); default 40.
	MinOCRConf float64
	// Exclude are the windows never shown (ACU_EXCLUDE_WINDOWS): their
	// accessible elements, by application or window name, are left out of
	// every map (their pixels are already black to OCR).
	Exclude []string
	// Logger receives per-extraction Debug logs; nil discards.
	Logger *slog.Logger
}

// Extractor builds element maps of one display, keeping ids stable across
// its maps. Extract and Execute may be called from one goroutine at a time
// (a task's loop); the ids are guarded, so concurrent calls are safe but
// interleave their iterations.
type Extractor struct {
	opts    Options
	log     *slog.Logger
	exclude *privacy.Filter // Options.Exclude, made once

	mu   sync.Mutex
	ids  *registry
	iter int
}

// New returns an Extractor.
func New(o Options) (*Extractor, error) {
	if o.Tree == nil && (o.Capture == nil || o.OCR == nil) {
		return nil, errors.New("element map needs an accessibility bus or a capture hub with OCR: set Options.Tree or Options.Capture and Options.OCR")
	}
	if o.Capture != nil && o.Display == "" {
		return nil, errors.New("element map: Options.Display is empty: name the display to capture")
	}
	if o.Max <= 0 {
		o.Max = DefaultMax
	}
	if o.SettleInterval <= 0 {
		o.SettleInterval = DefaultSettleInterval
	}
	if o.SettleMax == 0 {
		o.SettleMax = DefaultSettleMax
	}
	if o.MinOCRConf == 0 {
		o.MinOCRConf = DefaultMinOCRConf
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Extractor{opts: o, log: log, ids: newRegistry(), exclude: privacy.New(o.Exclude)}, nil
}

// Settle waits until the screen stops changing: frames SettleInterval
// apart until two consecutive ones hash the same, for at most SettleMax.
// It returns the last frame and whether the screen settled.
func (x *Extractor) Settle(ctx context.Context) (*frame.Frame, bool, error) {
	if x.opts.Capture == nil {
		return nil, false, nil
	}
	f, err := x.opts.Capture.Capture(ctx, x.opts.Display, capture.Target{Kind: capture.Screen})
	if err != nil {
		return nil, false, fmt.Errorf("capture %s to settle: %w", x.opts.Display, err)
	}
	if x.opts.SettleMax < 0 {
		return f, false, nil
	}
	deadline := time.Now().Add(x.opts.SettleMax)
	t := time.NewTimer(x.opts.SettleInterval)
	defer t.Stop()
	for {
		if time.Until(deadline) < 0 {
			return f, false, nil
		}
		select {
		case <-ctx.Done():
			return nil, false, fmt.Errorf("settle %s: %w", x.opts.Display, ctx.Err())
		case <-t.C:
		}
		g, err := x.opts.Capture.Capture(ctx, x.opts.Display, capture.Target{Kind: capture.Screen})
		if err != nil {
			return nil, false, fmt.Errorf("capture %s to settle: %w", x.opts.Display, err)
		}
		if g.Hash == f.Hash {
			return g, true, nil
		}
		f = g
		t.Reset(x.opts.SettleInterval)
	}
}

// place moves the accessible objects of a display whose toolkits report
// extents relative to their window (Options.Windows) to screen pixels.
func (x *Extractor) place(ctx context.Context, nodes []atspi.Node) error {
	wins, err := x.opts.Windows(ctx)
	if err != nil {
		return fmt.Errorf("place accessible elements on %s: %w", x.opts.Display, err)
	}
	placed, unplaced := place(nodes, wins)
	x.log.Debug("accessible windows placed", "display", x.opts.Display, "placed", placed, "unplaced", unplaced, "windows", len(wins))
	return nil
}

// Extract waits for the screen to settle, reads the accessibility tree and
// the OCR text of the settled frame concurrently, merges them, ranks
// (showing and on-screen first), caps at Options.Max and assigns stable ids.
func (x *Extractor) Extract(ctx context.Context) (*Map, error) {
	start := time.Now()
	m := &Map{At: start}
	f, settled, err := x.Settle(ctx)
	if err != nil {
		return nil, err
	}
	m.Frame, m.Settled = f, settled
	m.Timings.Settle = time.Since(start)
	if f != nil {
		m.Screen = image.Rect(0, 0, f.W, f.H)
	}

	var (
		nodes []atspi.Node
		res   ocr.Result
	)
	g, gctx := errgroup.WithContext(ctx)
	if x.opts.Tree != nil {
		g.Go(func() error {
			t0 := time.Now()
			var err error
			nodes, err = x.opts.Tree.Tree(gctx)
			if err == nil && x.opts.Windows != nil {
				err = x.place(gctx, nodes)
			}
			m.Timings.Tree = time.Since(t0)
			if err != nil && x.opts.OCR != nil && f != nil && ctx.Err() == nil {
				nodes = nil
				// OCR still sees the screen: degrade instead of failing.
				m.TreeErr = err
				x.log.Warn("accessibility tree unavailable, map from OCR only", "display", x.opts.Display, "err", err)
				return nil
			}
			return err
		})
	}
	if x.opts.OCR != nil && f != nil {
		g.Go(func() error {
			t0 := time.Now()
			var err error
			res, err = x.opts.OCR.RecognizeFrame(gctx, f)
			m.Timings.OCR = time.Since(t0)
			if err != nil {
				return fmt.Errorf("read screen text on %s: %w", x.opts.Display, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("extract element map: %w", err)
	}
	m.Timings.TreeNodes = len(nodes)

	els := make([]Element, 0, min(len(nodes), x.opts.Max)+len(res.Lines))
	for i := range nodes {
		if x.exclude.Excludes(nodes[i].App, nodes[i].Window) {
			continue
		}
		if e, ok := fromNode(&nodes[i]); ok {
			els = append(els, e)
		}
	}
	els = Merge(els, res, x.opts.MinOCRConf)
	screen := m.Screen
	if screen.Empty() {
		screen = image.Rect(-1<<20, -1<<20, 1<<20, 1<<20)
	}
	m.Elements, m.Dropped = rank(els, screen, x.opts.Max)

	x.mu.Lock()
	x.iter++
	m.Iteration = x.iter
	x.ids.assign(m.Elements, x.iter)
	x.mu.Unlock()
	m.reindex()
	m.Timings.Total = time.Since(start)
	x.log.Debug("element map", "display", x.opts.Display, "iteration", m.Iteration, "elements", len(m.Elements),
		"dropped", m.Dropped, "tree_nodes", len(nodes), "ocr_lines", len(res.Lines), "settled", settled,
		"duration", m.Timings.Total)
	return m, nil
}
