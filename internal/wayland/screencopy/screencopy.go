// Package screencopy captures a wlroots compositor's output into
// shared-memory buffers with wlr-screencopy-unstable-v1, producing the
// frame.Frame the X11 capture produces (BGRX pixels), so everything above
// capture takes Wayland frames unchanged.
//
// Next uses copy_with_damage, the compositor's damage tracking, the way
// the X11 capture uses XDamage: the compositor answers only once the
// output changed since the previous copy on this connection, with the
// changed rectangles, so a static screen is not re-read and a waiter is
// woken only by a change. Grab copies the output as it is now.
//
// A Capturer owns its own connection (one owner goroutine at a time) and
// one shared-memory buffer, reused while the output keeps its size and
// format. Each frame's pixels are a new buffer, or one a producer that
// recycles them hands it (Reuse).
//
// It does not decide when to capture, keep frames or share them between
// callers (the capture hub does on X11), nor read windows: a window
// target is a Sub view of the output's frame.
package screencopy

import (
	"context"
	"errors"
	"fmt"
	"image"
	"time"

	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/wayland"
)

// Capturer captures one output of one compositor.
type Capturer struct {
	conn    *wayland.Conn
	display string
	shm     uint32
	manager uint32
	version uint32
	output  *wayland.Output
	buf     *wayland.ShmBuffer
	alloc   func(n int) []byte // the frames' pixel buffers (Reuse); nil: make
}

// ErrUnsupported is returned by Open when the compositor offers no
// screencopy protocol acu speaks (GNOME and KDE: see docs/wayland.md).
var ErrUnsupported = errors.New("the compositor offers no wlr-screencopy-unstable-v1")

// Open connects to the compositor whose socket is at path and prepares to
// capture its output named output ("" for the first). display names the
// display in the frames (the WAYLAND_DISPLAY value; path when empty).
func Open(ctx context.Context, path, display, output string) (*Capturer, error) {
	if display == "" {
		display = path
	}
	conn, err := wayland.Dial(ctx, path)
	if err != nil {
		return nil, err
	}
	c := &Capturer{conn: conn, display: display}
	if err := c.setup(ctx, output); err != nil {
		conn.Close()
		return nil, fmt.Errorf("screencopy on %s: %w", display, err)
	}
	return c, nil
}

func (c *Capturer) setup(ctx context.Context, name string) error {
	g, ok := c.conn.Global("zwlr_screencopy_manager_v1")
	if !ok {
		return ErrUnsupported
	}
	shm, err := wayland.BindShm(c.conn)
	if err != nil {
		return err
	}
	c.shm = shm
	if c.manager, c.version, err = c.conn.Bind(g, 3, nil); err != nil {
		return err
	}
	outs, err := wayland.BindOutputs(ctx, c.conn)
	if err != nil {
		return err
	}
	for _, o := range outs {
		if name == "" || o.Name == name {
			c.output = o
			break
		}
	}
	if c.output == nil {
		names := make([]string, len(outs))
		for i, o := range outs {
			names[i] = o.Name
		}
		return fmt.Errorf("no output named %q: the compositor has %q", name, names)
	}
	return nil
}

// Close destroys the buffer and closes the connection.
func (c *Capturer) Close() error {
	if c.buf != nil {
		c.buf.Destroy(c.conn)
		c.buf = nil
	}
	return c.conn.Close()
}

// Reuse has the frames' pixels written into buffers from get (n bytes,
// whatever they held) instead of new ones: a capture hub that recycles
// the buffers of released frames (capture.Buffers) passes its Get.
func (c *Capturer) Reuse(get func(n int) []byte) { c.alloc = get }

// Size returns the output's size in pixels.
func (c *Capturer) Size() (w, h int) { return c.output.Width, c.output.Height }

// Version returns the screencopy version bound: copy_with_damage needs 2.
func (c *Capturer) Version() uint32 { return c.version }

// Grab captures the output as it is now.
func (c *Capturer) Grab(ctx context.Context) (*frame.Frame, error) {
	f, _, err := c.capture(ctx, false, image.Rectangle{}, "screen")
	return f, err
}

// GrabRegion captures only r of the output (a window's rectangle), as a
// frame of r's size named target; the compositor copies just that region
// (capture_output_region). r is clipped to the output.
func (c *Capturer) GrabRegion(ctx context.Context, r image.Rectangle, target string) (*frame.Frame, error) {
	r = r.Intersect(image.Rect(0, 0, c.output.Width, c.output.Height))
	if r.Empty() {
		return nil, fmt.Errorf("screencopy on %s: region %v lies outside the %dx%d output", c.display, r, c.output.Width, c.output.Height)
	}
	f, _, err := c.capture(ctx, false, r, target)
	return f, err
}

// Next captures the output once it has changed since the previous capture
// on this Capturer (the first call returns at once, all damaged), and
// returns the changed rectangles with it. It blocks while the screen is
// static, until ctx ends.
func (c *Capturer) Next(ctx context.Context) (*frame.Frame, []image.Rectangle, error) {
	if c.version < 2 {
		return nil, nil, fmt.Errorf("screencopy on %s: the compositor offers version %d, copy_with_damage needs 2", c.display, c.version)
	}
	return c.capture(ctx, true, image.Rectangle{}, "screen")
}

type frameState struct {
	format, width, height, stride uint32
	haveBuffer, bufferDone        bool
	flags                         uint32
	damage                        []image.Rectangle
	ready, failed                 bool
	sec                           uint64
	nsec                          uint32
}

func (c *Capturer) capture(ctx context.Context, withDamage bool, region image.Rectangle, target string) (*frame.Frame, []image.Rectangle, error) {
	var st frameState
	id := c.conn.NewObject("zwlr_screencopy_frame_v1", func(ev *wayland.Event) {
		switch ev.Opcode {
		case wayland.FrameEvBuffer:
			st.format, st.width, st.height, st.stride = ev.Uint(), ev.Uint(), ev.Uint(), ev.Uint()
			st.haveBuffer = true
		case wayland.FrameEvFlags:
			st.flags = ev.Uint()
		case wayland.FrameEvReady:
			hi, lo, ns := ev.Uint(), ev.Uint(), ev.Uint()
			st.sec, st.nsec, st.ready = uint64(hi)<<32|uint64(lo), ns, true
		case wayland.FrameEvFailed:
			st.failed = true
		case wayland.FrameEvDamage:
			x, y, w, h := ev.Uint(), ev.Uint(), ev.Uint(), ev.Uint()
			st.damage = append(st.damage, image.Rect(int(x), int(y), int(x+w), int(y+h)))
		case wayland.FrameEvBufferDone:
			st.bufferDone = true
		}
	})
	destroy := func() {
		_ = c.conn.Request(id, wayland.FrameReqDestroy)
		c.conn.Destroyed(id)
	}
	var err error
	if region.Empty() {
		err = c.conn.Request(c.manager, wayland.ScreencopyReqCaptureOutput, id, int32(0), c.output.ID)
	} else {
		err = c.conn.Request(c.manager, wayland.ScreencopyReqCaptureOutputRegion, id, int32(0), c.output.ID,
			int32(region.Min.X), int32(region.Min.Y), int32(region.Dx()), int32(region.Dy()))
	}
	if err != nil {
		return nil, nil, err
	}
	// The buffer's description ends with buffer_done from version 3 on,
	// with the one buffer event before.
	for !st.failed && !(st.haveBuffer && (c.version < 3 || st.bufferDone)) {
		if err := c.conn.Dispatch(ctx); err != nil {
			destroy()
			return nil, nil, c.fail(err)
		}
	}
	if st.failed {
		destroy()
		return nil, nil, fmt.Errorf("screencopy on %s: the compositor failed the capture", c.display)
	}
	if err := c.ensureBuffer(int(st.width), int(st.height), int(st.stride), st.format); err != nil {
		destroy()
		return nil, nil, err
	}
	op := uint16(wayland.FrameReqCopy)
	if withDamage {
		op = wayland.FrameReqCopyWithDamage
	}
	if err := c.conn.Request(id, op, c.buf.ID); err != nil {
		return nil, nil, err
	}
	for !st.ready && !st.failed {
		if err := c.conn.Dispatch(ctx); err != nil {
			destroy()
			return nil, nil, c.fail(err)
		}
	}
	destroy()
	if st.failed {
		return nil, nil, fmt.Errorf("screencopy on %s: the compositor failed the copy (the output may have changed size)", c.display)
	}
	at := time.Now()
	w, h := int(st.width), int(st.height)
	var dst []byte
	if c.alloc != nil {
		dst = c.alloc(w * h * 4)
	}
	pix, err := toBGRX(dst, c.buf.Data, int(st.width), int(st.height), int(st.stride), st.format, st.flags&wayland.FrameFlagYInvert != 0)
	if err != nil {
		return nil, nil, fmt.Errorf("screencopy on %s: %w", c.display, err)
	}
	return frame.New(pix, w, h, w*4, c.display, target, at), clipRects(st.damage, w, h, st.flags&wayland.FrameFlagYInvert != 0), nil
}

func (c *Capturer) fail(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("screencopy on %s: %w", c.display, err)
}

func (c *Capturer) ensureBuffer(w, h, stride int, format uint32) error {
	if b := c.buf; b != nil && b.Width == w && b.Height == h && b.Stride == stride && b.Format == format {
		return nil
	}
	if c.buf != nil {
		c.buf.Destroy(c.conn)
		c.buf = nil
	}
	b, err := wayland.NewShmBuffer(c.conn, c.shm, w, h, stride, format)
	if err != nil {
		return fmt.Errorf("screencopy on %s: %w", c.display, err)
	}
	c.buf = b
	return nil
}

// toBGRX copies h rows of src (in a 32-bit wl_shm format) into dst (a new
// buffer when dst is not w*h*4 bytes), tightly packed BGRX, flipping rows
// when yInvert.
func toBGRX(dst, src []byte, w, h, stride int, format uint32, yInvert bool) ([]byte, error) {
	var swap bool
	switch format {
	case wayland.FormatXRGB8888, wayland.FormatARGB8888: // little-endian: B, G, R, X in memory
	case wayland.FormatXBGR8888, wayland.FormatABGR8888: // R, G, B, X in memory
		swap = true
	default:
		return nil, fmt.Errorf("buffer format %#x is not a 32-bit RGB format acu reads", format)
	}
	if stride < w*4 || len(src) < (h-1)*stride+w*4 {
		return nil, fmt.Errorf("buffer of %d bytes is too short for %dx%d at stride %d", len(src), w, h, stride)
	}
	if len(dst) != w*h*4 {
		dst = make([]byte, w*h*4)
	}
	for y := 0; y < h; y++ {
		sy := y
		if yInvert {
			sy = h - 1 - y
		}
		d := dst[y*w*4 : (y+1)*w*4]
		copy(d, src[sy*stride:sy*stride+w*4])
		if swap {
			for i := 0; i < len(d); i += 4 {
				d[i], d[i+2] = d[i+2], d[i]
			}
		}
	}
	return dst, nil
}

// clipRects clips damage to the frame and turns it upright with the frame.
func clipRects(rs []image.Rectangle, w, h int, yInvert bool) []image.Rectangle {
	b := image.Rect(0, 0, w, h)
	out := rs[:0]
	for _, r := range rs {
		if yInvert {
			r = image.Rect(r.Min.X, h-r.Max.Y, r.Max.X, h-r.Min.Y)
		}
		if r = r.Intersect(b); !r.Empty() {
			out = append(out, r)
		}
	}
	return out
}
