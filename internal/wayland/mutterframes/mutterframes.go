// Package mutterframes reads the screen of a GNOME (mutter) Wayland
// display for the engines that only read frames (smart waits, the live
// view, recordings, screenshots): mutter offers no wlroots capture
// protocol, so a screen cast of its monitor, made over mutter's own D-Bus
// API (org.gnome.Mutter.ScreenCast) on the session bus, is read as a
// PipeWire stream by a long-lived GStreamer pipeline (gst-launch-1.0
// pipewiresrc ! videoconvert ! BGRx ! fdsink) writing raw frames to a
// pipe: acu is built without cgo and links no libpipewire. mutter sends
// a buffer only when the screen changed, so a static screen costs
// nothing. docs/wayland.md, "GNOME and KDE".
//
// Frames count their holds (frame.Frame.Release): the source holds its
// current frame and Capture gives each caller a hold of its own. A frame
// whose last hold is dropped gives its pixel buffer back, and the next
// frame the pipeline writes is read into it (capture.Buffers), so a
// screen that keeps changing does not cost a new buffer a frame; a frame
// still held keeps its pixels.
package mutterframes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/wayland"
)

const (
	screenCastName = "org.gnome.Mutter.ScreenCast"
	screenCastPath = "/org/gnome/Mutter/ScreenCast"
	scSession      = "org.gnome.Mutter.ScreenCast.Session"
	scStream       = "org.gnome.Mutter.ScreenCast.Stream"
)

// IsMutter reports whether a compositor with these globals is GNOME's
// mutter: it offers no zwlr_virtual_pointer_manager_v1 and advertises
// gtk_shell1, which only mutter does (the gate tells it the same way).
func IsMutter(globals []wayland.Global) bool {
	gtk := false
	for _, g := range globals {
		switch g.Interface {
		case "zwlr_virtual_pointer_manager_v1", "zwlr_screencopy_manager_v1":
			return false
		case "gtk_shell1":
			gtk = true
		}
	}
	return gtk
}

// Probe dials the Wayland socket at path and reports whether its
// compositor is mutter, and its first output's size.
func Probe(ctx context.Context, path string) (bool, int, int, error) {
	c, err := wayland.Dial(ctx, path)
	if err != nil {
		return false, 0, 0, err
	}
	defer c.Close()
	if !IsMutter(c.Globals()) {
		return false, 0, 0, nil
	}
	outs, err := wayland.BindOutputs(ctx, c)
	if err == nil && len(outs) == 0 {
		err = errors.New("the compositor has no output")
	}
	if err != nil {
		return true, 0, 0, err
	}
	return true, outs[0].Width, outs[0].Height, nil
}

// Options configure a Hub.
type Options struct {
	// Bus returns the GNOME session's D-Bus address
	// (DBUS_SESSION_BUS_ADDRESS) mutter's ScreenCast is on, when a
	// display is first read.
	Bus func() string
	// Exclude is ACU_EXCLUDE_WINDOWS: GNOME tells no program where
	// windows are, so acu cannot black them out and refuses to capture
	// a GNOME display while any are set.
	Exclude []string
	// Idle stops a display's screen cast and pipeline after this long
	// with nothing reading or watching it (a busy screen nobody looks at
	// is not converted); the next read opens them again. 10 s when zero.
	Idle time.Duration
	// HideCursor leaves the pointer out of the frames (cursor-mode 0),
	// for a watch of the applications' repaints only (the gate's
	// ordering proof); frames show it by default, as a person sees them.
	HideCursor bool
	Logger     *slog.Logger
}

// Hub keeps one screen cast per mutter display, opened on first use.
type Hub struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	family  map[string]bool // display -> is mutter
	sources map[string]*source
	closed  bool
}

// New returns a Hub.
func New(o Options) *Hub {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Idle <= 0 {
		o.Idle = 10 * time.Second
	}
	return &Hub{opts: o, log: o.Logger, family: map[string]bool{}, sources: map[string]*source{}}
}

// Is reports whether the Wayland display dpy (a socket path) is mutter,
// asking its compositor once.
func (h *Hub) Is(ctx context.Context, dpy string) bool {
	h.mu.Lock()
	is, ok := h.family[dpy]
	h.mu.Unlock()
	if ok {
		return is
	}
	path, err := wayland.SocketPath(dpy, "")
	if err != nil {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	is, _, _, err = Probe(pctx, path)
	if err != nil && !is {
		return false // not reachable now: ask again next time
	}
	h.mu.Lock()
	h.family[dpy] = is
	h.mu.Unlock()
	return is
}

// Close stops every screen cast and pipeline.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	srcs := h.sources
	h.sources = map[string]*source{}
	h.mu.Unlock()
	for _, s := range srcs {
		s.close()
	}
}

// source is one display's screen cast and pipeline.
type source struct {
	name string
	w, h int
	conn *dbus.Conn
	sc   dbus.BusObject
	cmd  *exec.Cmd
	done chan struct{}
	errb bytes.Buffer

	mu      sync.Mutex
	cur     *frame.Frame
	first   chan struct{}
	err     error
	watched map[*watcher]struct{}
	used    time.Time // the last read
	frames  int       // frames read from the pipeline
	once    sync.Once

	bufs capture.Buffers // the frames' pixel buffers, given back when released
}

type watcher struct {
	ch chan struct{}
	r  image.Rectangle
}

func (h *Hub) source(ctx context.Context, dpy string) (*source, error) {
	if len(h.opts.Exclude) > 0 {
		return nil, fmt.Errorf("capture on %s: ACU_EXCLUDE_WINDOWS is set, and GNOME's mutter tells no program where windows are, so acu cannot black them out: it does not capture GNOME displays while exclusions are set (docs/wayland.md, \"GNOME and KDE\")", dpy)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("the GNOME capture hub is closed")
	}
	if s, ok := h.sources[dpy]; ok {
		select {
		case <-s.done:
			s.close()
			delete(h.sources, dpy)
		default:
			s.touch()
			return s, nil
		}
	}
	bus := ""
	if h.opts.Bus != nil {
		bus = h.opts.Bus()
	}
	cursor := uint32(1) // embedded
	if h.opts.HideCursor {
		cursor = 0
	}
	s, err := open(ctx, bus, dpy, cursor, h.log)
	if err != nil {
		return nil, err
	}
	h.sources[dpy] = s
	s.touch()
	go h.reap(dpy, s)
	return s, nil
}

// openAttempts is how many screen casts live opens before it gives up on
// a display whose pipeline ends before its first frame.
const openAttempts = 3

// live returns dpy's source once it has a frame. A pipeline that ends
// before its first frame (seen on a mutter just started: gst-launch's
// pipewiresrc reaches the end of the stream at once, saying nothing) is
// dropped and a new screen cast opened, up to openAttempts in all.
func (h *Hub) live(ctx context.Context, dpy string) (*source, error) {
	var err error
	for range openAttempts {
		var s *source
		if s, err = h.source(ctx, dpy); err != nil {
			return nil, err
		}
		var f *frame.Frame
		if f, err = s.current(ctx); err == nil {
			f.Release()
			return s, nil
		}
		select {
		case <-s.done: // ended before a frame: open a new cast
			h.log.Info("GNOME screen cast ended before its first frame: opening it again", "display", dpy, "err", err)
		default:
			return nil, err // no frame in time, or ctx ended
		}
	}
	return nil, err
}

func (s *source) touch() {
	s.mu.Lock()
	s.used = time.Now()
	s.mu.Unlock()
}

// reap closes s once it was neither read nor watched for the hub's Idle
// time, or when its pipeline ended.
func (h *Hub) reap(dpy string, s *source) {
	tick := time.NewTicker(h.opts.Idle / 4)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		idle := len(s.watched) == 0 && time.Since(s.used) >= h.opts.Idle
		s.mu.Unlock()
		if !idle {
			continue
		}
		h.mu.Lock()
		if h.sources[dpy] == s {
			delete(h.sources, dpy)
		}
		h.mu.Unlock()
		h.log.Info("GNOME screen cast closed: unused", "display", dpy, "idle", h.opts.Idle)
		s.close()
		return
	}
}

// open starts a screen cast of mutter's primary monitor and the pipeline
// reading it.
func open(ctx context.Context, bus, dpy string, cursor uint32, log *slog.Logger) (*source, error) {
	if bus == "" {
		return nil, fmt.Errorf("capture on %s: it is GNOME's mutter, whose screen acu reads through mutter's ScreenCast on the GNOME session's D-Bus bus, and the daemon has no DBUS_SESSION_BUS_ADDRESS: start it inside the GNOME session or set that variable (docs/wayland.md, \"GNOME and KDE\")", dpy)
	}
	gst, err := exec.LookPath("gst-launch-1.0")
	if err != nil {
		return nil, fmt.Errorf("capture on %s (GNOME): %w (install gstreamer1.0-tools and gstreamer1.0-pipewire)", dpy, err)
	}
	path, err := wayland.SocketPath(dpy, "")
	if err != nil {
		return nil, err
	}
	octx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	is, w, hgt, err := Probe(octx, path)
	if err != nil || !is {
		return nil, fmt.Errorf("capture on %s: not GNOME's mutter, or not reachable: %v", dpy, err)
	}
	conn, err := dbus.Connect(bus) // not WithContext: the cast lives as long as this connection
	if err != nil {
		return nil, fmt.Errorf("capture on %s: connect to the session bus %s: %w", dpy, bus, err)
	}
	s := &source{name: dpy, w: w, h: hgt, conn: conn, done: make(chan struct{}), first: make(chan struct{}), watched: map[*watcher]struct{}{}}
	fail := func(what string, err error) (*source, error) {
		conn.Close()
		return nil, fmt.Errorf("capture on %s: mutter screen cast: %s: %w", dpy, what, err)
	}
	var scPath dbus.ObjectPath
	if err := conn.Object(screenCastName, screenCastPath).CallWithContext(octx, screenCastName+".CreateSession", 0, map[string]dbus.Variant{}).Store(&scPath); err != nil {
		return fail("create the session (is this GNOME's mutter with screen casting?)", err)
	}
	s.sc = conn.Object(screenCastName, scPath)
	var stream dbus.ObjectPath
	if err := s.sc.CallWithContext(octx, scSession+".RecordMonitor", 0, "",
		map[string]dbus.Variant{"cursor-mode": dbus.MakeVariant(cursor)}).Store(&stream); err != nil {
		return fail("record the primary monitor", err)
	}
	if err := conn.AddMatchSignalContext(octx, dbus.WithMatchObjectPath(stream), dbus.WithMatchInterface(scStream),
		dbus.WithMatchMember("PipeWireStreamAdded")); err != nil {
		return fail("watch the stream", err)
	}
	signals := make(chan *dbus.Signal, 8)
	conn.Signal(signals)
	defer conn.RemoveSignal(signals)
	if err := s.sc.CallWithContext(octx, scSession+".Start", 0).Err; err != nil {
		return fail("start", err)
	}
	var node uint32
	for node == 0 {
		select {
		case sig := <-signals:
			if sig.Path == stream && sig.Name == scStream+".PipeWireStreamAdded" && len(sig.Body) == 1 {
				node, _ = sig.Body[0].(uint32)
			}
		case <-octx.Done():
			s.sc.Call(scSession+".Stop", 0)
			return fail("waiting for the PipeWire node", octx.Err())
		}
	}
	// The session's PipeWire daemon is the one mutter uses: pipewire-0 in
	// the runtime directory holding the Wayland socket.
	cmd := exec.Command(gst, "-q", "pipewiresrc", "path="+strconv.FormatUint(uint64(node), 10), "always-copy=true",
		"!", "videoconvert", "!", fmt.Sprintf("video/x-raw,format=BGRx,width=%d,height=%d", w, hgt), "!", "fdsink", "fd=1", "sync=false")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(),
		"XDG_RUNTIME_DIR=" + filepath.Dir(path), "PIPEWIRE_REMOTE=pipewire-0"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = &s.errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.sc.Call(scSession+".Stop", 0)
		return fail("pipe", err)
	}
	if err := cmd.Start(); err != nil {
		s.sc.Call(scSession+".Stop", 0)
		return fail("start gst-launch-1.0", err)
	}
	s.cmd = cmd
	log.Info("GNOME screen cast opened", "display", dpy, "node", node, "size", fmt.Sprintf("%dx%d", w, hgt), "gst_pid", cmd.Process.Pid)
	go s.read(out)
	return s, nil
}

// read reads frame-sized chunks of the pipeline's output, publishes each
// as the current frame and wakes the watchers whose rectangle changed.
// The source's hold passes from the frame before to the new one.
func (s *source) read(r io.Reader) {
	size := s.w * s.h * 4
	var err error
	for {
		pix := s.bufs.Get(size)
		if _, err = io.ReadFull(r, pix); err != nil {
			break
		}
		f := frame.New(pix, s.w, s.h, s.w*4, s.name, "screen", time.Now())
		s.bufs.Own(f)
		s.mu.Lock()
		prev := s.cur
		s.cur = f
		s.frames++
		if prev == nil {
			close(s.first)
		} else if prev.Hash != f.Hash {
			d := changed(prev, f)
			for w := range s.watched {
				if w.r.Overlaps(d) {
					select {
					case w.ch <- struct{}{}:
					default:
					}
				}
			}
		}
		s.mu.Unlock()
		if prev != nil {
			prev.Release()
		}
	}
	_ = s.cmd.Wait()
	s.mu.Lock()
	s.err = fmt.Errorf("the GStreamer pipeline reading mutter's screen cast ended (%v): %s", err, strings.TrimSpace(s.errb.String()))
	if s.cur == nil {
		close(s.first)
	}
	for w := range s.watched {
		close(w.ch)
	}
	s.watched = nil
	s.mu.Unlock()
	s.bufs.Close()
	close(s.done)
}

// changed is the bounding box of the rows and columns where a and b differ.
func changed(a, b *frame.Frame) image.Rectangle {
	var r image.Rectangle
	for y := 0; y < a.H; y++ {
		ra, rb := a.Pix[y*a.Stride:y*a.Stride+a.W*4], b.Pix[y*b.Stride:y*b.Stride+b.W*4]
		if bytes.Equal(ra, rb) {
			continue
		}
		x0, x1 := 0, a.W
		for x0 < a.W && bytes.Equal(ra[x0*4:x0*4+4], rb[x0*4:x0*4+4]) {
			x0++
		}
		for x1 > x0 && bytes.Equal(ra[(x1-1)*4:x1*4], rb[(x1-1)*4:x1*4]) {
			x1--
		}
		r = r.Union(image.Rect(x0, y, x1, y+1))
	}
	return r
}

// current returns the latest frame, once there is one; the caller holds
// it (frame.Frame.Release).
func (s *source) current(ctx context.Context) (*frame.Frame, error) {
	t := time.NewTimer(15 * time.Second)
	defer t.Stop()
	select {
	case <-s.first:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, fmt.Errorf("capture on %s: mutter's screen cast sent no frame within 15 s: %s", s.name, strings.TrimSpace(s.errb.String()))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return nil, fmt.Errorf("capture on %s: %w", s.name, s.err)
	}
	return s.cur.Retain(), nil // the source's hold keeps it alive until here
}

func (s *source) close() {
	s.once.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		s.sc.Call(scSession+".Stop", 0)
		s.conn.Close()
	})
}

func (s *source) resolveOn(t capture.Target, w, h int) (capture.Resolved, error) {
	res := capture.Resolved{Target: t, Display: s.name, Label: t.String(), Rect: image.Rect(0, 0, w, h)}
	switch t.Kind {
	case capture.Screen:
		return res, nil
	case capture.Crop:
		res.Rect = frame.CropRect(t.Crop, w, h)
		return res, nil
	}
	return capture.Resolved{}, fmt.Errorf("target %s on %s: a GNOME (mutter) display takes screen or crop:x1,y1,x2,y2: mutter tells no program where windows are, so window targets are not available on GNOME", t, s.name)
}

// Resolve resolves t on dpy: the screen or a crop of it.
func (h *Hub) Resolve(ctx context.Context, dpy string, t capture.Target) (capture.Resolved, error) {
	s, err := h.source(ctx, dpy)
	if err != nil {
		return capture.Resolved{}, err
	}
	return s.resolveOn(t, s.w, s.h)
}

// Capture returns the latest frame of dpy, or its view of t's rectangle.
// The caller holds it: one done with its pixels releases it
// (frame.Frame.Release), and the hub reuses its buffer.
func (h *Hub) Capture(ctx context.Context, dpy string, t capture.Target) (*frame.Frame, error) {
	s, err := h.live(ctx, dpy)
	if err != nil {
		return nil, err
	}
	r, err := s.resolveOn(t, s.w, s.h)
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
	v := f.Sub(r.Rect, r.Label) // the view holds the buffer on its own
	f.Release()
	return v, nil
}

// Watch returns a channel that receives a value soon after anything in
// t's rectangle on dpy changes (a new frame differing there). The channel
// is closed when ctx ends, the hub closes or the pipeline ends.
func (h *Hub) Watch(ctx context.Context, dpy string, t capture.Target) (<-chan struct{}, error) {
	s, err := h.live(ctx, dpy)
	if err != nil {
		return nil, err
	}
	r, err := s.resolveOn(t, s.w, s.h)
	if err != nil {
		return nil, err
	}
	f, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	f.Release()
	w := &watcher{ch: make(chan struct{}, 1), r: r.Rect}
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

// Check reports whether mutter's RemoteDesktop and ScreenCast services
// are on the session bus at bus, and GStreamer's gst-launch-1.0 is
// installed: what acu needs to act on and read a GNOME display.
func Check(ctx context.Context, bus string) error {
	if bus == "" {
		return errors.New("no DBUS_SESSION_BUS_ADDRESS: give the daemon the GNOME session's bus (start it inside the session)")
	}
	if _, err := exec.LookPath("gst-launch-1.0"); err != nil {
		return fmt.Errorf("%w: install gstreamer1.0-tools and gstreamer1.0-pipewire (acu reads mutter's screen cast with it)", err)
	}
	conn, err := dbus.Connect(bus, dbus.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("connect to the session bus %s: %w", bus, err)
	}
	defer conn.Close()
	for _, name := range []string{"org.gnome.Mutter.RemoteDesktop", screenCastName} {
		var owned bool
		if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, name).Store(&owned); err != nil {
			return fmt.Errorf("ask the session bus %s for %s: %w", bus, name, err)
		}
		if !owned {
			return fmt.Errorf("%s is not on the session bus %s: is that GNOME's session bus, and mutter built with remote desktop?", name, bus)
		}
	}
	return nil
}

// ScreenSize is the size in pixels of dpy's monitor (the screen cast's).
func (h *Hub) ScreenSize(ctx context.Context, dpy string) (int, int, error) {
	s, err := h.source(ctx, dpy)
	if err != nil {
		return 0, 0, err
	}
	return s.w, s.h, nil
}
