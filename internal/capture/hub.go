package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jezek/xgb/shm"
	"github.com/jezek/xgb/xproto"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/privacy"
)

// Options configures a Hub.
type Options struct {
	// Logger receives connection lifecycle logs (Info) and per-capture
	// details (Debug); nil discards.
	Logger *slog.Logger
	// Exclude lists privacy exclusions: windows whose title, class or
	// instance contains one of these (case-insensitive) are blacked out in
	// every frame before it is published.
	Exclude []string
	// NoSHM forces plain GetImage even where MIT-SHM works.
	NoSHM bool
	// NoCache makes every Capture read the screen and publish a new frame
	// (benchmarks of the whole pipeline); calls in flight are still joined.
	NoCache bool
	// Resample is the resize mode of published frames (frame.Exact, the
	// zero value, matches Pillow bit for bit; frame.Fast is quicker).
	Resample frame.Mode
	// MaxBackoff caps the delay between reconnection attempts to a display
	// whose server is gone; default 2s.
	MaxBackoff time.Duration
	// Registerer, when set, receives the hub's metrics (acu_capture_*).
	Registerer prometheus.Registerer
	// AllowRemote lets display names of the form HOST:N reach remote X
	// servers over TCP (ACU_ALLOW_REMOTE_X); off, they are refused.
	AllowRemote bool
}

// Hub owns connections to displays and serves frames and change
// notifications for targets on them. Safe for concurrent use.
type Hub struct {
	opts    Options
	log     *slog.Logger
	exclude *privacy.Filter

	mu      sync.Mutex
	sources map[string]*source
	closed  bool

	closing chan struct{}
	wg      sync.WaitGroup

	latency *prometheus.HistogramVec // nil without a Registerer
}

// ErrClosed is returned by a Hub after Close.
var ErrClosed = errors.New("capture hub closed")

// NewHub returns a Hub. Displays are connected on first use.
func NewHub(opts Options) (*Hub, error) {
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 2 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Hub{opts: opts, log: log, sources: map[string]*source{}, closing: make(chan struct{}),
		exclude: privacy.New(opts.Exclude)}
	if opts.Registerer != nil {
		h.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "acu_capture_read_duration_seconds",
			Help:    "Time to read a display's screen (with the privacy mask and hash), by method.",
			Buckets: []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25},
		}, []string{"display", "method"})
		for _, c := range []prometheus.Collector{&collector{h: h}, h.latency} {
			if err := opts.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("register capture metrics: %w", err)
			}
		}
	}
	return h, nil
}

// Close disconnects every display, closes every Watch channel and waits for
// the hub's goroutines.
func (h *Hub) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	close(h.closing)
	srcs := make([]*source, 0, len(h.sources))
	for _, s := range h.sources {
		srcs = append(srcs, s)
	}
	h.mu.Unlock()
	for _, s := range srcs {
		s.closeWatchers()
		s.mu.Lock()
		s.teardown()
		s.mu.Unlock()
		s.pix.close()
	}
	h.wg.Wait()
	return nil
}

func (h *Hub) source(name string) (*source, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, fmt.Errorf("%w: no display given: pass --display or set DISPLAY; %s", display.ErrNoDisplay, display.HowToStart)
	}
	// Checked before a source (and its goroutine) exists for the name.
	if _, err := display.ParseName(name, h.opts.AllowRemote); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	s, ok := h.sources[name]
	if !ok {
		s = &source{hub: h, name: name, log: h.log.With("display", name), ids: map[string]uint32{}, pix: new(pixPool),
			watchers: map[*watcher]struct{}{}, markers: map[uint32]chan struct{}{}, refresh: make(chan struct{}, 1)}
		h.sources[name] = s
		h.wg.Add(1)
		go s.refresher()
	}
	return s, nil
}

// Capture returns the frame for target t on display: the shared full frame
// for screen (and pty) targets, a Sub view of it for window and crop
// targets. Frames are immutable and may be shared with other callers; an
// unchanged screen returns the same *frame.Frame again (its At is when that
// content was captured).
//
// The caller holds the frame it gets (frame.Frame.Release): a caller done
// with it for good, as a live view is when it has sent the frame's JPEG,
// may release it, and its pixel buffer comes back to this display's next
// captures at once; one that does not leaves it to the collector.
func (h *Hub) Capture(ctx context.Context, dpy string, t Target) (*frame.Frame, error) {
	s, err := h.source(dpy)
	if err != nil {
		return nil, err
	}
	full, err := s.full(ctx)
	if err != nil {
		return nil, err
	}
	var r Resolved
	switch t.Kind {
	case Screen, PTY:
		return full, nil
	case Crop:
		r = Resolved{Rect: CropRect(t.Crop, full.W, full.H), Label: t.String()}
	default:
		if r, err = s.resolve(ctx, t); err != nil {
			full.Release()
			return nil, err
		}
	}
	v := full.Sub(r.Rect, r.Label) // the caller's hold moves to the view
	full.Release()
	return v, nil
}

// resolve is resolveLocked under s.mu.
func (s *source) resolve(ctx context.Context, t Target) (_ Resolved, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.recoverX(&err, "resolve target")
	return s.resolveLocked(ctx, t)
}

// recoverX, deferred with s.mu held, turns a panic in the X library into
// an error and drops the connection, so the next call connects anew
// instead of the process dying.
func (s *source) recoverX(err *error, what string) {
	if r := recover(); r != nil {
		*err = display.PanicError(what+" on "+s.name, r)
		s.log.Error("recovered from a panic in X code", "err", *err)
		s.teardown()
	}
}

// Resolve checks that t can be captured on display now (for validation
// when a job is created). Window targets matching no window or several fail
// with a *TargetError listing the candidates.
func (h *Hub) Resolve(ctx context.Context, dpy string, t Target) (_ Resolved, err error) {
	s, err := h.source(dpy)
	if err != nil {
		return Resolved{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.recoverX(&err, "resolve target")
	if err := s.ensure(ctx); err != nil {
		return Resolved{}, err
	}
	return s.resolveLocked(ctx, t)
}

// Windows lists the display's top-level client windows.
func (h *Hub) Windows(ctx context.Context, dpy string) (_ []display.Window, err error) {
	s, err := h.source(dpy)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.recoverX(&err, "list windows")
	if err := s.ensure(ctx); err != nil {
		return nil, err
	}
	return s.conn.Windows(ctx)
}

// ScreenSize returns the display's size in pixels.
func (h *Hub) ScreenSize(ctx context.Context, dpy string) (w, hgt int, err error) {
	s, err := h.source(dpy)
	if err != nil {
		return 0, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.recoverX(&err, "read screen size")
	if err := s.ensure(ctx); err != nil {
		return 0, 0, err
	}
	return s.conn.Screen.Width, s.conn.Screen.Height, nil
}

// source is one display's connection, cache and watchers.
type source struct {
	hub  *Hub
	name string
	log  *slog.Logger

	// mu serializes connection management, capture and window lookups.
	// The event reader never takes it.
	mu        sync.Mutex
	conn      *display.Conn
	unsub     func()
	sh        *shmSeg
	shmOff    bool
	hasDamage bool
	marker    xproto.Window
	failures  int
	retryAt   time.Time
	lastErr   error
	cached    *frame.Frame
	cachedSeq uint64
	pix       *pixPool // buffers of this display's frames
	// lastUnchanged: the last read's pixels equalled the cached frame's.
	lastUnchanged bool
	// Reads of damaged rows only (readDamaged): segOK says the segment
	// holds the whole screen and bands its bands' hashes; sinceVerify
	// counts such reads since the last whole one; damageOff is set once
	// damage was caught missing a change. taken and prevBands are scratch.
	segOK bool
	bands []uint64
	// exact: bands are the hashes of the cached frame's pixels, each
	// computed from them (a whole read), not kept on damage's word; a
	// whole read then rehashes only the bands whose bytes differ from the
	// cached frame's (readFull). diff is scratch.
	exact bool
	diff  []uint64
	// gen numbers the segment's contents (each read that changed it);
	// hist keeps the bands of the last histLen reads, for frameBuf.
	gen         uint64
	hist        [histLen]genBands
	changed     []uint64
	sinceVerify int
	damageOff   bool
	taken       []uint64
	prevBands   []uint64
	lastRead    time.Time         // start of the last read
	ids         map[string]uint32 // window query -> last matched id
	everOnline  bool

	flightMu sync.Mutex
	flight   *flight

	// seq counts changes seen (damage events, reconnects); a cached frame
	// is valid while seq has not moved since it was taken.
	seq        atomic.Uint64
	markerAtom atomic.Uint32
	// dirty records the bands damage reported since they were read; the
	// event reader marks it, a capture takes it.
	dirty atomic.Pointer[dirtyBands]

	// emu guards the event side; held only briefly, never across X calls.
	emu        sync.Mutex
	watchers   map[*watcher]struct{}
	markers    map[uint32]chan struct{}
	nextMarker uint32
	refresh    chan struct{}
	refreshAll atomic.Bool // next refresh re-resolves and notifies every watcher

	st stats
}

type flight struct {
	done    chan struct{}
	frame   *frame.Frame
	err     error
	joiners int // callers waiting for it, each given a hold on frame (flightMu)
}

// full returns the display's full frame, joining a capture in flight. The
// caller holds the frame (frame.Frame.Retain).
func (s *source) full(ctx context.Context) (*frame.Frame, error) {
	s.flightMu.Lock()
	if f := s.flight; f != nil {
		f.joiners++
		s.flightMu.Unlock()
		s.st.joined.Add(1)
		select {
		case <-f.done:
			return f.frame, f.err
		case <-ctx.Done():
			s.flightMu.Lock()
			counted := s.flight != f // the leader took a hold for us
			if !counted {
				f.joiners--
			}
			s.flightMu.Unlock()
			if counted {
				<-f.done
				if f.err == nil {
					f.frame.Release()
				}
			}
			return nil, fmt.Errorf("capture %s: %w", s.name, ctx.Err())
		}
	}
	f := &flight{done: make(chan struct{})}
	s.flight = f
	s.flightMu.Unlock()

	// Callers joining this capture must not fail because the first caller
	// gave up: the capture runs on its own bounded context.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	f.frame, f.err = s.captureFull(cctx)
	cancel()

	s.flightMu.Lock()
	s.flight = nil
	n := f.joiners
	s.flightMu.Unlock()
	if f.err == nil {
		for range n { // the leader still holds it: its holders can pass it on
			f.frame.Retain()
		}
	}
	close(f.done)
	return f.frame, f.err
}

// captureFull returns the display's current full frame, read anew if it
// may have changed, with a hold for the caller (s.mu taken).
func (s *source) captureFull(ctx context.Context) (*frame.Frame, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.captureLocked(ctx)
	if err != nil {
		return nil, err
	}
	return f.Retain(), nil // the source's own hold keeps it alive until here
}

func (s *source) captureLocked(ctx context.Context) (_ *frame.Frame, err error) {
	defer s.recoverX(&err, "capture")
	if err := s.ensure(ctx); err != nil {
		return nil, err
	}
	c := s.conn
	w, h := c.Screen.Width, c.Screen.Height
	// Damage events for changes made before this call may still be on
	// their way: a marker round trip flushes them through. Then an
	// unchanged seq proves the cached frame current, and the damaged bands
	// are known in full, so only they need reading.
	synced := false
	if !s.hub.opts.NoCache && s.hasDamage && s.cached != nil && (s.seq.Load() == s.cachedSeq || s.damageReads(w, h)) {
		synced = s.syncEvents(ctx, c) == nil
		if synced && s.seq.Load() == s.cachedSeq {
			s.st.reused.Add(1)
			return s.cached, nil
		}
	}
	seq := s.seq.Load()
	start := time.Now()
	// A display read in quick succession (a live view) also recycles the
	// buffers of earlier frames that nobody released, through the
	// collector (pixpool.go); one read now and then does not: its few
	// frames are left to the collector, so they do not hold memory a
	// daemon under its soft limit needs. Buffers of released frames are
	// reused either way.
	busy := start.Sub(s.lastRead) < busyGap
	s.lastRead = start
	if synced && s.damageReads(w, h) && s.sinceVerify < verifyEvery {
		f, err := s.readDamaged(c, w, h, seq, start, busy)
		if err == nil || !c.Alive() {
			return f, err
		}
		s.log.Info("reading the damaged rows failed, reading the whole screen", "err", err)
	}
	return s.readFull(ctx, c, w, h, seq, start, busy, synced)
}

// readFull reads the whole screen, and publishes it as a new frame unless
// its pixels equal the cached frame's (s.mu held). synced says damage
// events were flushed just before: then a read of a segment whose bands
// were kept by damage (damageReads) checks that damage missed nothing.
func (s *source) readFull(ctx context.Context, c *display.Conn, w, h int, seq uint64, start time.Time, busy, synced bool) (*frame.Frame, error) {
	// The rows this read covers are no longer dirty; damage from here on
	// is for the next read.
	taken := s.takeDirty()
	verify := synced && s.damageReads(w, h)
	hadBands := s.keepPrevBands(h)
	s.segOK, s.sinceVerify = false, 0
	// pix is the SHM segment itself (not ours to publish) or a GetImage
	// reply (a fresh buffer).
	pix, viaSHM, err := s.grab(c, w, h)
	if err != nil {
		if !c.Alive() {
			s.teardown()
		}
		return nil, fmt.Errorf("capture %s: %w", s.name, err)
	}
	exact := s.exact
	s.exact = false
	if !s.hub.exclude.Empty() {
		if err := s.blackout(ctx, c, pix, w, h); err != nil {
			// Never publish a frame whose private windows may show.
			return nil, fmt.Errorf("capture %s: privacy mask: %w", s.name, err)
		}
	}
	var changed []uint64
	if viaSHM {
		changed = s.wholeReadGen(pix, w, h, exact)
	}
	own, recycled, hash := s.hashRead(pix, w, h, viaSHM, busy, changed)
	s.afterWholeRead(ctx, c, viaSHM, hadBands, changed, verify, taken)
	if old := s.cached; !s.hub.opts.NoCache && old != nil && old.Hash == hash && old.W == w && old.H == h {
		// Unchanged content: same frame, no new buffer.
		if viaSHM {
			s.pix.put(own, s.gen)
		}
		return s.keepCached(old, viaSHM, seq, start), nil
	}
	if viaSHM && own == nil {
		own, recycled = s.frameBuf(pix, w*4, busy)
	}
	return s.publish(pix, own, recycled, busy, viaSHM, w, h, hash, seq, start), nil
}

// keepPrevBands keeps s.bands, the hashes of the segment's bands as it is
// now, in s.prevBands, to tell after a whole read which bands it changed;
// false when they are not the segment's (s.mu held).
func (s *source) keepPrevBands(h int) bool {
	if (s.segOK || s.exact) && len(s.bands) == frame.Bands(h) {
		s.prevBands = append(s.prevBands[:0], s.bands...)
		return true
	}
	return false
}

// wholeReadGen starts the buffer generation of a whole read of the segment
// pix and returns the bands whose bytes differ from the cached frame's,
// when the kept band hashes are that frame's, computed from its pixels
// (exact): the others keep their hashes, byte for byte the same. Without
// it (damage reads since, a new connection), it returns nil: every band
// is hashed. With the vectorised hash, hashing every band costs less than
// comparing it, and the bands whose hash moved are found after
// (refineGen). s.mu held.
func (s *source) wholeReadGen(pix []byte, w, h int, exact bool) []uint64 {
	var changed []uint64
	if old := s.cached; exact && !frame.FastHash() && old != nil && old.W == w && old.H == h && old.Stride == w*4 &&
		len(old.Pix) == len(pix) && len(s.bands) == frame.Bands(h) {
		changed = s.diffBands(pix, old.Pix, w*4)
	}
	nb := uint64(frame.Bands(h))
	s.st.wholeBands.Add(nb)
	if changed != nil {
		s.st.keptBands.Add(nb - uint64(ones(changed)))
	}
	s.readGen(changed) // nil: every band, narrowed after (refineGen)
	return changed
}

// hashRead hashes a whole read's pixels into the band sums and returns
// the frame's hash and own, the buffer a new frame would keep: the
// GetImage reply, or a copy out of the segment (which the next read
// overwrites) made while hashing, or nil when the copy is left for after
// (frameBuf). s.mu held.
func (s *source) hashRead(pix []byte, w, h int, viaSHM, busy bool, changed []uint64) (own []byte, recycled bool, hash uint64) {
	sums := s.bandSums(h)
	if !viaSHM {
		return pix, false, frame.Hash(pix, w, h, w*4)
	}
	switch {
	case changed != nil:
		own, recycled = s.hashChangedBands(pix, w, h, sums, changed, busy)
	case !s.lastUnchanged && !frame.FastHash():
		own, recycled = s.hashCopyAll(pix, w, h, sums, busy)
	default:
		// The last read changed nothing (likely this one neither), or
		// the hash is the vectorised one: hash in the segment, copy
		// after if it changed (into a recycled buffer, only the bands
		// changed since it was last written: refineGen).
		frame.HashBands(sums, pix, w, h, w*4, 0, len(sums))
	}
	return own, recycled, frame.FoldBands(sums, w, h)
}

// hashChangedBands hashes the bands in changed, copying them into a
// recycled buffer brought up to date when the last read changed something
// and one is free (s.mu held).
func (s *source) hashChangedBands(pix []byte, w, h int, sums, changed []uint64, busy bool) (own []byte, recycled bool) {
	var buf [maxRuns]bandRun
	rs := runs(changed, len(sums), &buf)
	if !s.lastUnchanged && len(rs) > 0 {
		if own, gen := s.pix.get(len(pix), busy); own != nil {
			s.catchUp(own, pix, w*4, gen, changed)
			for _, r := range rs {
				frame.HashCopyBands(own, pix, w, h, w*4, sums, r.b0, r.b1)
			}
			return own, true
		}
	}
	for _, r := range rs {
		frame.HashBands(sums, pix, w, h, w*4, r.b0, r.b1)
	}
	return nil, false
}

// hashCopyAll hashes every band and, when a buffer is free, copies them in
// the same pass (with the Go hash, HashCopyBands costs what Hash alone
// does); an unchanged screen hands the buffer back (s.mu held).
func (s *source) hashCopyAll(pix []byte, w, h int, sums []uint64, busy bool) (own []byte, recycled bool) {
	if own, _ := s.pix.get(len(pix), busy); own != nil {
		frame.HashCopyBands(own, pix, w, h, w*4, sums, 0, len(sums))
		return own, true
	}
	frame.HashBands(sums, pix, w, h, w*4, 0, len(sums))
	return nil, false
}

// afterWholeRead records what a whole read leaves for the next reads
// (s.mu held): whether the segment can be built on by reads of damaged
// rows, which bands this generation changed, whether damage missed a
// change (verify), and that every band's hash is now this read's.
func (s *source) afterWholeRead(ctx context.Context, c *display.Conn, viaSHM, hadBands bool, changed []uint64, verify bool, taken []uint64) {
	// A segment that holds the whole screen unmasked, with its bands'
	// hashes, is what later reads of damaged rows build on.
	s.segOK = viaSHM && s.hub.exclude.Empty() && s.hasDamage && !s.hub.opts.NoCache
	if hadBands && viaSHM && changed == nil {
		// This generation changed only the bands whose hash moved (the
		// same trust in the hash as an unchanged frame's): recycled
		// buffers of earlier generations need only those (frameBuf).
		// (Bands compared by their bytes were recorded exactly above.)
		moved := s.refineGen(s.prevBands, s.bands)
		s.st.keptBands.Add(uint64(len(s.bands) - moved))
	}
	if verify && s.segOK {
		s.verifyDamage(ctx, c, taken)
	}
	// Every band's hash is now computed from this read's pixels, which
	// the frame returned holds (a copy, or the cached frame's equal ones).
	s.exact = viaSHM
}

// diffBands returns the set of bands (frame.HashBand rows each) whose
// bytes differ between a and b, two screens of the same size at stride
// (s.mu held; the set is s.diff, reused). It reads both copies but does
// no arithmetic: cheaper than the Go hash, dearer than the vectorised one
// (docs/perf/capture.md).
func (s *source) diffBands(a, b []byte, stride int) []uint64 {
	band := frame.HashBand * stride
	nb := (len(a) + band - 1) / band
	n := (nb + 63) / 64
	if cap(s.diff) < n {
		s.diff = make([]uint64, n)
	}
	set := s.diff[:n]
	clear(set)
	for i := range nb {
		lo, hi := i*band, min((i+1)*band, len(a))
		if !bytes.Equal(a[lo:hi], b[lo:hi]) {
			set[i/64] |= 1 << (i % 64)
		}
	}
	return set
}

// keepCached records a read whose pixels equal the cached frame's and
// returns that frame (s.mu held).
func (s *source) keepCached(old *frame.Frame, viaSHM bool, seq uint64, start time.Time) *frame.Frame {
	s.lastUnchanged = true
	s.observe(viaSHM, time.Since(start))
	s.cachedSeq = seq
	s.st.unchanged.Add(1)
	return old
}

// frameBuf returns a buffer holding a copy of the segment's pixels for a
// new frame: a recycled one when one is free (pixPool.get), else a new one
// (s.mu held).
func (s *source) frameBuf(pix []byte, stride int, busy bool) (own []byte, recycled bool) {
	own, gen := s.pix.get(len(pix), busy)
	if own == nil {
		return append([]byte(nil), pix...), false // append does not zero what it copies over
	}
	s.catchUp(own, pix, stride, gen, nil)
	return own, true
}

// publish makes the new cached frame of pixels own (pix, the read, was
// copied or hashed into it) (s.mu held).
func (s *source) publish(pix, own []byte, recycled, busy, viaSHM bool, w, h int, hash, seq uint64, start time.Time) *frame.Frame {
	s.lastUnchanged = false
	f := &frame.Frame{Pix: own, Stride: w * 4, W: w, H: h, Display: s.name, Target: "screen", At: start,
		Hash: hash, Resample: s.hub.opts.Resample}
	if viaSHM {
		if recycled {
			s.st.recycled.Add(1)
		}
		// The buffer comes back when every holder has released the
		// frame, or else when the collector finds it unreferenced (a
		// finalizer, on a busy display within the budget).
		tracked := busy && s.pix.publish(own, s.gen)
		gen := s.gen
		f.Own(func() { s.pix.release(own, gen, tracked) })
	} else {
		f.Pix = pix
	}
	s.observe(viaSHM, time.Since(start))
	s.setCached(f)
	s.cachedSeq = seq
	s.log.Debug("captured", "frame_hash", f.Hash, "shm", viaSHM)
	return f
}

// setCached makes f (nil for none) the source's current frame, dropping
// its hold on the one before (s.mu held).
func (s *source) setCached(f *frame.Frame) {
	if old := s.cached; old != nil {
		old.Release()
	}
	s.cached = f
}

func (s *source) observe(viaSHM bool, d time.Duration) {
	s.st.observe(viaSHM, d)
	if s.hub.latency != nil {
		method := "getimage"
		if viaSHM {
			method = "shm"
		}
		s.hub.latency.WithLabelValues(s.name, method).Observe(d.Seconds())
	}
}

// grab reads the whole root window: w*h BGRX pixels, in the SHM segment
// (valid until the next grab) or in a fresh GetImage reply buffer.
func (s *source) grab(c *display.Conn, w, h int) ([]byte, bool, error) {
	n := w * h * 4
	if c.Ext.SHM && !s.shmOff && !s.hub.opts.NoSHM {
		if s.sh == nil {
			sh, err := newSHM(c, n)
			if err != nil {
				s.shmOff = true
				s.log.Info("MIT-SHM unavailable, capturing with GetImage", "err", err)
			} else {
				s.sh = sh
			}
		}
		if s.sh != nil {
			_, err := shm.GetImage(c.X, xproto.Drawable(c.Screen.Root), 0, 0, uint16(w), uint16(h),
				0xffffffff, xproto.ImageFormatZPixmap, s.sh.seg, 0).Reply()
			if err == nil {
				return s.sh.data[:n:n], true, nil
			}
			if !c.Alive() {
				return nil, false, err
			}
			s.shmOff = true
			s.log.Info("MIT-SHM capture failed, falling back to GetImage", "err", err)
		}
	}
	r, err := xproto.GetImage(c.X, xproto.ImageFormatZPixmap, xproto.Drawable(c.Screen.Root), 0, 0,
		uint16(w), uint16(h), 0xffffffff).Reply()
	if err != nil {
		return nil, false, err
	}
	if len(r.Data) < n {
		return nil, false, fmt.Errorf("GetImage returned %d bytes for %dx%d", len(r.Data), w, h)
	}
	return r.Data[:n:n], false, nil
}

// blackout clears the rectangles of excluded windows in buf.
func (s *source) blackout(ctx context.Context, c *display.Conn, buf []byte, w, h int) error {
	return blackout(ctx, c, s.hub.exclude, buf, image.Rect(0, 0, w, h))
}

// blackout clears, in buf, the pixels of the mapped windows matching
// exclude; buf holds the screen's rectangle area, 4 bytes a pixel, rows
// area.Dx()*4 bytes apart.
func blackout(ctx context.Context, c *display.Conn, exclude *privacy.Filter, buf []byte, area image.Rectangle) error {
	ws, err := c.Windows(ctx)
	if err != nil {
		return err
	}
	stride := area.Dx() * 4
	for _, win := range ws {
		if !win.Mapped || !excluded(exclude, win) {
			continue
		}
		r := win.Rect().Intersect(area).Sub(area.Min)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			clear(buf[y*stride+r.Min.X*4 : y*stride+r.Max.X*4])
		}
	}
	return nil
}

// excluded reports whether w is one of the excluded windows (privacy's
// rule, which every read of the desktop shares).
func excluded(exclude *privacy.Filter, w display.Window) bool {
	return exclude.Excludes(w.Title, w.Class, w.Instance)
}
