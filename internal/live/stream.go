package live

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
)

// Capturer is what the stream needs from the capture hub (*capture.Hub).
type Capturer interface {
	Watch(ctx context.Context, dpy string, t capture.Target) (<-chan struct{}, error)
	Capture(ctx context.Context, dpy string, t capture.Target) (*frame.Frame, error)
}

// StreamOptions configure one viewer's stream.
type StreamOptions struct {
	Display string
	// MaxW and MaxH bound the JPEG's size (the browser window's, in device
	// pixels); the screen is scaled down to fit, never up. 0: no bound.
	MaxW, MaxH int
	// Quality is the JPEG quality, 1..100; 0 means DefaultQuality.
	Quality int
	// MaxFPS caps the frames a second while the screen keeps changing
	// (changes in between coalesce); 0 means DefaultMaxFPS. The first
	// change after a still spell is sent at once.
	MaxFPS int
}

// DefaultMaxFPS is StreamOptions.MaxFPS's default.
const DefaultMaxFPS = 30

// DefaultQuality is the JPEG quality of live frames.
const DefaultQuality = 70

// Frame is one frame of a stream.
type Frame struct {
	Seq              uint64
	At               time.Time // when it was captured
	W, H             int       // the JPEG's size
	ScreenW, ScreenH int
	Hash             uint64
	JPEG, Base64     []byte // shared with other consumers of the frame: read only
}

// HashString is the frame's hash as the rest of acu writes it.
func (f Frame) HashString() string { return strconv.FormatUint(f.Hash, 16) }

// Stream sends the display's screen to send: once at the start, then after
// each change XDamage reports, never for an unchanged screen (its content
// hash decides). send runs in Stream's goroutine, so a slow viewer holds
// the next capture back instead of queueing frames: changes that happen
// while send blocks coalesce into one notification, and the frame sent
// next is the screen as it is then. Stale frames are never sent. Stream
// returns nil when ctx ends, and send's error as it is.
func Stream(ctx context.Context, c Capturer, o StreamOptions, send func(Frame) error) error {
	q := o.Quality
	if q == 0 {
		q = DefaultQuality
	}
	if q < 1 || q > 100 {
		return fmt.Errorf("live stream of %s: quality %d: use 1..100", o.Display, q)
	}
	changes, err := c.Watch(ctx, o.Display, capture.Target{Kind: capture.Screen})
	if err != nil {
		return fmt.Errorf("live stream of %s: %w", o.Display, err)
	}
	if o.MaxFPS <= 0 {
		o.MaxFPS = DefaultMaxFPS
	}
	gap := time.Second / time.Duration(o.MaxFPS)
	var seq uint64
	var last uint64
	var sentAt time.Time
	sent := false
	for {
		f, err := c.Capture(ctx, o.Display, capture.Target{Kind: capture.Screen})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("live stream of %s: %w", o.Display, err)
		}
		if !sent || f.Hash != last {
			dim := fitDim(f.W, f.H, o.MaxW, o.MaxH)
			jpg, b64, err := f.JPEGBase64(dim, q)
			// The JPEG is all the stream needs of the frame: the hub may
			// reuse its pixels' buffer for the next change.
			f.Release()
			if err != nil {
				return fmt.Errorf("live stream of %s: %w", o.Display, err)
			}
			w, h := f.W, f.H
			if dim > 0 {
				w, h = frame.TargetSize(f.W, f.H, dim)
			}
			seq++
			if err := send(Frame{Seq: seq, At: f.At, W: w, H: h, ScreenW: f.W, ScreenH: f.H, Hash: f.Hash, JPEG: jpg, Base64: b64}); err != nil {
				return err
			}
			sent, last, sentAt = true, f.Hash, time.Now()
		} else {
			f.Release()
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-changes:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return errors.New("live stream of " + o.Display + ": the capture hub closed")
			}
		}
		if wait := time.Until(sentAt.Add(gap)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	}
}

// fitDim is the long-side bound (frame.TargetSize's maxDim) that fits a
// w*h screen into maxW*maxH; 0 when it fits already.
func fitDim(w, h, maxW, maxH int) int {
	s := 1.0
	if maxW > 0 {
		s = min(s, float64(maxW)/float64(w))
	}
	if maxH > 0 {
		s = min(s, float64(maxH)/float64(h))
	}
	if s >= 1 {
		return 0
	}
	return max(1, int(math.Floor(float64(max(w, h))*s)))
}
