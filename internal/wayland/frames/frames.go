// Package frames is the capture hub of Wayland displays: what the wait
// engine needs of capture.Hub (Resolve, Capture, Watch, with capture's
// target types), for displays named by a Wayland socket path or
// "wayland-N", so that smart waits run on a wlroots compositor unchanged.
//
// Each display has one source: a goroutine that keeps asking the
// compositor for the next changed frame (screencopy's copy_with_damage).
// A static screen costs nothing; each change publishes a new frame, with
// the windows of the privacy exclusions blacked out, and notifies the
// watchers whose rectangle the damage touches. Capture returns the latest
// frame (or its view of the target's rectangle). Window targets resolve
// against the compositor's toplevel list, with rectangles from sway's IPC
// (the IPC socket is found beside the Wayland socket).
//
// Frames count their holds (frame.Frame.Release): the source holds its
// current frame and Capture gives each caller a hold of its own. A frame
// whose last hold is dropped gives its pixel buffer back for the next
// frame the compositor sends (capture.Buffers), so a screen that keeps
// changing while a live view or a wait reads it does not cost a new
// buffer a frame; a frame still held keeps its pixels.
//
// A source whose compositor goes away closes its watchers and is dropped;
// the next call connects again. It does not send input or operate
// windows (the gate does, through internal/wayland/virtual and toplevel).
package frames

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/privacy"
	"github.com/acu-dev/acu/internal/wayland"
	"github.com/acu-dev/acu/internal/wayland/screencopy"
	"github.com/acu-dev/acu/internal/wayland/toplevel"
)

// Options configures a Hub.
type Options struct {
	// RuntimeDir resolves "wayland-N" names (XDG_RUNTIME_DIR).
	RuntimeDir string
	// Exclude names the windows never shown (ACU_EXCLUDE_WINDOWS).
	Exclude []string
	// IdleAfter pauses a display's capture loop when nothing has watched
	// or read it for this long (default 10s): a busy screen nobody looks
	// at is not copied at every change. The next read resumes it.
	IdleAfter time.Duration
	Logger    *slog.Logger
}

// Hub captures Wayland displays.
type Hub struct {
	opts    Options
	exclude *privacy.Filter
	log     *slog.Logger
	ctx     context.Context // ends when the hub closes
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu      sync.Mutex
	sources map[string]*source
}

// ErrClosed is returned after Close.
var ErrClosed = errors.New("the wayland capture hub is closed")

// New returns a hub; displays are connected on first use.
func New(o Options) *Hub {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.IdleAfter <= 0 {
		o.IdleAfter = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{opts: o, exclude: privacy.New(o.Exclude), log: log, ctx: ctx, cancel: cancel, sources: map[string]*source{}}
}

// Close stops every source and closes the watchers' channels.
func (h *Hub) Close() error {
	h.cancel()
	h.wg.Wait()
	return nil
}

type source struct {
	h    *Hub
	name string
	ipc  string

	wmu     sync.Mutex // guards wins, the toplevel connection's single owner
	wins    *toplevel.Manager
	ready   chan struct{} // closed at the first frame, or when the source dies
	wake    chan struct{} // resumes a paused loop
	gone    chan struct{} // closed when the source dies
	mu      sync.Mutex
	cur     *frame.Frame
	fresh   chan struct{} // closed and replaced at each frame published
	err     error
	watched map[*watcher]struct{}
	lastUse time.Time // the last read or watch
	paused  bool      // the loop waits on wake
	copies  int       // frames copied from the compositor

	bufs capture.Buffers // the frames' pixel buffers, given back when released
}

type watcher struct {
	ch chan struct{}
	t  capture.Target
}

// source returns dpy's source, connecting it when there is none.
func (h *Hub) source(ctx context.Context, dpy string) (*source, error) {
	if h.ctx.Err() != nil {
		return nil, ErrClosed
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.sources[dpy]; s != nil {
		return s, nil
	}
	path, err := wayland.SocketPath(dpy, h.opts.RuntimeDir)
	if err != nil {
		return nil, err
	}
	cap, err := screencopy.Open(ctx, path, dpy, "")
	if err != nil {
		return nil, err
	}
	ipc := ""
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "sway-ipc.*.sock")); len(m) > 0 {
		ipc = m[0]
	}
	wins, err := toplevel.Open(ctx, path, dpy, ipc)
	if err != nil {
		cap.Close()
		return nil, err
	}
	s := &source{h: h, name: dpy, ipc: ipc, wins: wins, ready: make(chan struct{}), wake: make(chan struct{}, 1), gone: make(chan struct{}),
		fresh: make(chan struct{}), watched: map[*watcher]struct{}{}, lastUse: time.Now()}
	cap.Reuse(s.bufs.Get)
	h.sources[dpy] = s
	h.wg.Add(1)
	go s.run(cap)
	h.log.Info("wayland display connected", "display", dpy, "socket", path, "sway_ipc", ipc)
	return s, nil
}

// run publishes a frame at every change until the hub closes or the
// compositor fails, then drops the source. While nothing watches or reads
// the display it pauses; a read resumes it with a copy of the screen as
// it is then.
func (s *source) run(cap *screencopy.Capturer) {
	defer s.h.wg.Done()
	defer cap.Close()
	for {
		var f *frame.Frame
		var damage []image.Rectangle
		var err error
		if s.pause() {
			select {
			case <-s.wake:
			case <-s.h.ctx.Done():
				s.die(s.h.ctx.Err())
				return
			}
			f, err = cap.Grab(s.h.ctx) // what changed while paused is unknown: all of it
			if f != nil {
				damage = []image.Rectangle{f.Bounds()}
			}
		} else {
			f, damage, err = cap.Next(s.h.ctx)
		}
		if err == nil {
			s.bufs.Own(f)
			err = s.blackout(s.h.ctx, f)
		}
		if err != nil {
			s.die(err)
			return
		}
		s.publish(f, damage)
	}
}

// pause reports whether the loop should wait for a reader, and marks it
// paused if so (under mu, so a reader either sees it paused and wakes it,
// or has just read and keeps it running).
func (s *source) pause() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || len(s.watched) > 0 || time.Since(s.lastUse) < s.h.opts.IdleAfter {
		return false
	}
	s.paused = true
	return true
}

// publish makes f the display's frame and notifies the watchers whose
// rectangle the damage touches. The source's hold passes from the frame
// before to f.
func (s *source) publish(f *frame.Frame, damage []image.Rectangle) {
	s.mu.Lock()
	prev := s.cur
	first := prev == nil
	s.cur, s.paused = f, false
	s.copies++
	close(s.fresh)
	s.fresh = make(chan struct{})
	var ws []*watcher
	for w := range s.watched {
		ws = append(ws, w)
	}
	s.mu.Unlock()
	if first {
		close(s.ready)
	} else {
		prev.Release()
	}
	var touched []*watcher
	for _, w := range ws {
		if s.touches(w.t, f, damage) {
			touched = append(touched, w)
		}
	}
	s.mu.Lock() // a watcher's channel is closed under mu: send only to those still watching
	defer s.mu.Unlock()
	for _, w := range touched {
		if _, ok := s.watched[w]; ok {
			select {
			case w.ch <- struct{}{}:
			default: // a pending notification covers this one
			}
		}
	}
}

// Copies returns how many frames the hub has copied from dpy's compositor
// (for tests and metrics); 0 for a display it has not connected.
func (h *Hub) Copies(dpy string) int {
	h.mu.Lock()
	s := h.sources[dpy]
	h.mu.Unlock()
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.copies
}

// die ends the source: waiters get err, watchers' channels close, and the
// next call connects again.
func (s *source) die(err error) {
	if s.h.ctx.Err() != nil {
		err = ErrClosed
	} else {
		s.h.log.Warn("wayland display lost", "display", s.name, "err", err)
	}
	s.h.mu.Lock()
	if s.h.sources[s.name] == s {
		delete(s.h.sources, s.name)
	}
	s.h.mu.Unlock()
	s.mu.Lock()
	s.err = err
	for w := range s.watched {
		close(w.ch)
	}
	s.watched = nil
	select {
	case <-s.ready:
	default:
		close(s.ready)
	}
	close(s.gone)
	if s.cur != nil { // nothing reads it after s.err is set
		s.cur.Release()
		s.cur = nil
	}
	s.mu.Unlock()
	s.bufs.Close()
	s.wmu.Lock()
	s.wins.Close()
	s.wmu.Unlock()
}

// windows lists the compositor's windows.
func (s *source) windows(ctx context.Context) ([]toplevel.Window, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.wins.Windows(ctx)
}

// blackout blacks out the excluded windows in f before it is published.
func (s *source) blackout(ctx context.Context, f *frame.Frame) error {
	if s.h.exclude.Empty() {
		return nil
	}
	ws, err := s.windows(ctx)
	if err != nil {
		return err
	}
	var hide []image.Rectangle
	for _, w := range ws {
		if !s.h.exclude.Excludes(w.Title, w.AppID) {
			continue
		}
		if w.Rect.Empty() {
			return fmt.Errorf("window %q on %s is excluded (ACU_EXCLUDE_WINDOWS) but the compositor gives no geometry to black it out (needs sway's IPC)", w.Title, s.name)
		}
		hide = append(hide, w.Rect)
	}
	frame.BlackOut(f, hide...)
	return nil
}

// touches reports whether the damage reaches t's rectangle.
func (s *source) touches(t capture.Target, f *frame.Frame, damage []image.Rectangle) bool {
	r, err := s.resolveOn(context.Background(), t, f.W, f.H)
	if err != nil {
		return true // a window not resolvable now: let the waiter look
	}
	for _, d := range damage {
		if d.Overlaps(r.Rect) {
			return true
		}
	}
	return false
}

// current returns the display's frame as it is now: the latest published
// while the loop runs (it is blocked on an unchanged screen, or about to
// publish a change), a fresh copy when the loop was paused. The caller
// holds it (frame.Frame.Release).
func (s *source) current(ctx context.Context) (*frame.Frame, error) {
	s.mu.Lock()
	s.lastUse = time.Now()
	wait := s.ready
	if s.paused {
		wait = s.fresh
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	s.mu.Unlock()
	select {
	case <-wait:
	case <-s.dead():
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, fmt.Errorf("capture on %s: %w", s.name, s.err)
	}
	return s.cur.Retain(), nil // the source's hold keeps it alive until here
}

func (s *source) dead() <-chan struct{} { return s.gone }

// Resolve resolves t on dpy now: its rectangle and label. A window target
// ScreenSize is the size in pixels of dpy's output, as its frames have it.
func (h *Hub) ScreenSize(ctx context.Context, dpy string) (int, int, error) {
	r, err := h.Resolve(ctx, dpy, capture.Target{Kind: capture.Screen})
	if err != nil {
		return 0, 0, err
	}
	return r.Rect.Dx(), r.Rect.Dy(), nil
}

// matching no window or several is a *capture.TargetError.
func (h *Hub) Resolve(ctx context.Context, dpy string, t capture.Target) (capture.Resolved, error) {
	s, err := h.source(ctx, dpy)
	if err != nil {
		return capture.Resolved{}, err
	}
	f, err := s.current(ctx)
	if err != nil {
		return capture.Resolved{}, err
	}
	f.Release()
	return s.resolveOn(ctx, t, f.W, f.H)
}

func (s *source) resolveOn(ctx context.Context, t capture.Target, w, h int) (capture.Resolved, error) {
	res := capture.Resolved{Target: t, Display: s.name, Label: t.String(), Rect: image.Rect(0, 0, w, h)}
	switch t.Kind {
	case capture.Screen:
		return res, nil
	case capture.Crop:
		res.Rect = frame.CropRect(t.Crop, w, h)
		return res, nil
	case capture.Window:
	default:
		return capture.Resolved{}, fmt.Errorf("target %s on %s: a Wayland display takes screen, window:<title> or crop:x1,y1,x2,y2", t, s.name)
	}
	ws, err := s.windows(ctx)
	if err != nil {
		return capture.Resolved{}, err
	}
	var shown []toplevel.Window
	for _, win := range ws {
		if !s.h.exclude.Excludes(win.Title, win.AppID) {
			shown = append(shown, win)
		}
	}
	win, ambiguous, ok := toplevel.Find(shown, t.Query)
	if !ok {
		e := &capture.TargetError{Display: s.name, Target: t.String(), Ambiguous: len(ambiguous) > 0}
		cands := ambiguous
		if !e.Ambiguous {
			cands = shown
		}
		for _, c := range cands {
			e.Candidates = append(e.Candidates, display.Window{Title: c.Title, Class: c.AppID, Mapped: true,
				X: c.Rect.Min.X, Y: c.Rect.Min.Y, W: c.Rect.Dx(), H: c.Rect.Dy()})
		}
		return capture.Resolved{}, e
	}
	if win.Rect.Empty() {
		return capture.Resolved{}, fmt.Errorf("target %s on %s: the compositor gives no window geometry (window targets need sway's IPC)", t, s.name)
	}
	res.Rect = win.Rect.Intersect(res.Rect)
	res.Label = "window:" + win.Title
	return res, nil
}

// Capture returns the latest frame of dpy, or its view of t's rectangle.
// The caller holds it: one done with its pixels releases it
// (frame.Frame.Release), and the hub reuses its buffer.
func (h *Hub) Capture(ctx context.Context, dpy string, t capture.Target) (*frame.Frame, error) {
	s, err := h.source(ctx, dpy)
	if err != nil {
		return nil, err
	}
	f, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	if t.Kind == capture.Screen {
		return f, nil
	}
	r, err := s.resolveOn(ctx, t, f.W, f.H)
	if err != nil {
		f.Release()
		return nil, err
	}
	v := f.Sub(r.Rect, r.Label) // the view holds the buffer on its own
	f.Release()
	return v, nil
}

// Watch returns a channel that receives a value soon after anything in
// t's rectangle on dpy changes (the compositor's damage). Notifications
// are coalesced; an unchanged screen sends nothing. The channel is closed
// when ctx ends, the hub closes or the compositor goes away.
func (h *Hub) Watch(ctx context.Context, dpy string, t capture.Target) (<-chan struct{}, error) {
	s, err := h.source(ctx, dpy)
	if err != nil {
		return nil, err
	}
	f, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	f.Release()
	w := &watcher{ch: make(chan struct{}, 1), t: t}
	s.mu.Lock()
	if s.watched == nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("watch on %s: %w", dpy, s.err)
	}
	s.watched[w] = struct{}{}
	s.mu.Unlock()
	context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.watched[w]; ok {
			delete(s.watched, w)
			close(w.ch)
		}
	})
	return w.ch, nil
}
