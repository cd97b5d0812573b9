package sense

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/privacy"
	"github.com/acu-dev/acu/internal/secret"
)

// Screen is what the client needs from the capture hub; *capture.Hub
// satisfies it. Build the hub with the ignore list in its Exclude, so
// ignored windows are blacked out of every frame, not only skipped when
// focused.
type Screen interface {
	Watch(ctx context.Context, dpy string, t capture.Target) (<-chan struct{}, error)
	Capture(ctx context.Context, dpy string, t capture.Target) (*frame.Frame, error)
}

// Reader reads text in a frame; *ocr.Engine satisfies it.
type Reader interface {
	RecognizeFrame(ctx context.Context, f *frame.Frame) (ocr.Result, error)
}

// Options configure a Client.
type Options struct {
	Display  string        // X display to watch, ":0"
	RelayURL string        // the relay's base URL; events go to RelayURL + "/sense"
	Token    secret.String // the relay's token (acu's relay always requires one)
	Screen   Screen
	OCR      Reader
	// MinInterval is the shortest time between two screen events (the
	// client's rate limit); default 2 s. App switches are sent at once.
	MinInterval time.Duration
	// OCRMaxPixels caps the area read at once; a larger focused window is
	// cut to the changed part. Default 1920*1080.
	OCRMaxPixels int
	// OCRMaxChars caps the text of one event; default 4000.
	OCRMaxChars int
	// Ignore lists windows never captured: title, class or instance
	// containing an entry (case-insensitive).
	Ignore []string
	// Queue is how many events are kept while the relay is down (oldest
	// dropped); default 64.
	Queue int
	// MinChangeArea is the smallest changed area (in pixels of the changed
	// cells' bounding box) that makes an event; smaller changes, such as a
	// blinking cursor, do not. Default 1024.
	MinChangeArea int
	// FocusPoll is how often the focused window is checked; default 250 ms.
	FocusPoll time.Duration
	// RetryBase and RetryMax bound the backoff between posts while the
	// relay is down; defaults 250 ms and 10 s.
	RetryBase, RetryMax time.Duration
	HTTPClient          *http.Client
	Logger              *slog.Logger
	Now                 func() time.Time
}

// Stats counts what the client did.
type Stats struct {
	Text, Visual, Context int64 // events made, by type
	Similar               int64 // changes too small to be an event
	IgnoredSkips          int64 // captures skipped: the focused window is ignored
	Sent, Retries         int64 // posts that succeeded; failed attempts retried
	Refused               int64 // events the relay refused (dropped)
	Dropped               int64 // events dropped from a full queue
	OCRErrors             int64
}

// Client watches a display and posts sense events to the relay.
type Client struct {
	opts   Options
	ignore *privacy.Filter // opts.Ignore, privacy's rule, made once
	log    *slog.Logger
	url    string
	http   *http.Client
	now    func() time.Time
	q      *queue

	mu    sync.Mutex
	stats Stats

	// Owned by Run's goroutine.
	app       App
	appKnown  bool
	last, cur thumb
	hasLast   bool
	lastOCR   string
	lastEvent time.Time
}

// New checks opts and returns a Client.
func New(opts Options) (*Client, error) {
	if opts.Screen == nil || opts.OCR == nil {
		return nil, errors.New("sense: Screen and OCR are required")
	}
	if strings.TrimSpace(opts.Display) == "" {
		return nil, errors.New("sense: no display: set ACU_SENSE_DISPLAY or DISPLAY")
	}
	u, err := url.Parse(strings.TrimRight(opts.RelayURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sense: relay URL %q: want http://host:port (ACU_SENSE_RELAY_URL)", opts.RelayURL)
	}
	if opts.MinInterval <= 0 {
		opts.MinInterval = 2 * time.Second
	}
	if opts.OCRMaxPixels <= 0 {
		opts.OCRMaxPixels = 1920 * 1080
	}
	if opts.OCRMaxChars <= 0 {
		opts.OCRMaxChars = 4000
	}
	if opts.Queue <= 0 {
		opts.Queue = 64
	}
	if opts.MinChangeArea <= 0 {
		opts.MinChangeArea = 1024
	}
	if opts.FocusPoll <= 0 {
		opts.FocusPoll = 250 * time.Millisecond
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = 250 * time.Millisecond
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = 10 * time.Second
	}
	c := &Client{opts: opts, log: opts.Logger, url: u.String() + "/sense", http: opts.HTTPClient, now: opts.Now, q: newQueue(opts.Queue),
		ignore: privacy.New(opts.Ignore)}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// Stats returns the counters so far.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	s := c.stats
	c.mu.Unlock()
	c.q.mu.Lock()
	s.Dropped = c.q.dropped
	c.q.mu.Unlock()
	return s
}

// Pending returns how many events wait to be sent.
func (c *Client) Pending() int { return c.q.len() }

// Run watches the display until ctx ends: on damage (then a similarity
// check against the last event's screen) it reads the focused window's
// text and queues a text or visual event; on a focus change it queues a
// context event. A sender posts the queue to the relay, retrying while it
// is down.
func (c *Client) Run(ctx context.Context) error {
	conn, err := display.Open(ctx, c.opts.Display, display.Options{Logger: c.log})
	if err != nil {
		return fmt.Errorf("sense: %w", err)
	}
	defer conn.Close()
	damage, err := c.opts.Screen.Watch(ctx, c.opts.Display, capture.Target{Kind: capture.Screen})
	if err != nil {
		return fmt.Errorf("sense: watch %s: %w", c.opts.Display, err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.sender(ctx) })

	c.log.Info("sense watching", "display", c.opts.Display, "relay", c.url)
	poll := time.NewTicker(c.opts.FocusPoll)
	defer poll.Stop()
	pending := true // the screen as it is at start
	var wait *time.Timer
	var waitC <-chan time.Time
	checkFocus := true
	for {
		if checkFocus {
			// On the poll only: damage can fire many times a second.
			c.checkApp(ctx, conn, &pending)
			checkFocus = false
		}
		if pending && waitC == nil {
			if d := c.lastEvent.Add(c.opts.MinInterval).Sub(c.now()); d > 0 {
				wait = time.NewTimer(d)
				waitC = wait.C
			} else {
				c.checkApp(ctx, conn, &pending) // the text is read as the focused app's
				pending = false
				c.look(ctx)
			}
		}
		select {
		case <-ctx.Done():
			if wait != nil {
				wait.Stop()
			}
			return nil
		case _, ok := <-damage:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("sense: the capture hub stopped watching %s", c.opts.Display)
			}
			pending = true
		case <-poll.C:
			checkFocus = true
		case <-waitC:
			waitC = nil
		}
	}
}

// checkApp queues a context event when the focused window changed.
func (c *Client) checkApp(ctx context.Context, conn *display.Conn, pending *bool) {
	w, ok, err := activeWindow(ctx, conn)
	if err != nil {
		c.log.Debug("read the focused window", "err", err)
		return
	}
	if !ok {
		return
	}
	if c.appKnown && w.ID == c.app.Window.ID && w.Class == c.app.Window.Class {
		c.app.Window = w // geometry may have changed
		return
	}
	c.app, c.appKnown = App{Window: w, Name: appName(w)}, true
	*pending = true
	if ignored(w, c.ignore) {
		return // not even the switch is reported
	}
	c.log.Debug("focus changed", "app", c.app.Name)
	c.emit(Event{Type: "context", TS: c.now().UnixMilli(), Meta: Meta{App: c.app.Name}})
}

func (c *Client) emit(e Event) {
	c.mu.Lock()
	switch e.Type {
	case "text":
		c.stats.Text++
	case "visual":
		c.stats.Visual++
	case "context":
		c.stats.Context++
	}
	c.mu.Unlock()
	c.q.push(e)
}

// look captures the screen and, when it changed enough since the last
// event, reads the focused window and queues a text or visual event.
func (c *Client) look(ctx context.Context) {
	if c.appKnown && ignored(c.app.Window, c.ignore) {
		c.mu.Lock()
		c.stats.IgnoredSkips++
		c.mu.Unlock()
		return
	}
	f, err := c.opts.Screen.Capture(ctx, c.opts.Display, capture.Target{Kind: capture.Screen})
	if err != nil {
		c.log.Warn("capture the screen", "display", c.opts.Display, "err", err)
		return
	}
	makeThumb(&c.cur, f)
	var prev *thumb
	if c.hasLast {
		prev = &c.last
	}
	ch := compare(prev, &c.cur, f.Bounds())
	if c.hasLast && ch.Box.Dx()*ch.Box.Dy() < c.opts.MinChangeArea {
		c.mu.Lock()
		c.stats.Similar++
		c.mu.Unlock()
		return
	}
	region := f.Bounds()
	if c.appKnown {
		if r := c.app.Window.Rect().Intersect(region); !r.Empty() {
			region = r
		}
	}
	region = capArea(region, ch.Box, c.opts.OCRMaxPixels)
	text := ""
	res, err := c.opts.OCR.RecognizeFrame(ctx, f.Sub(region, "sense"))
	if err != nil {
		c.mu.Lock()
		c.stats.OCRErrors++
		c.mu.Unlock()
		c.log.Warn("read the screen's text", "err", err)
	} else {
		text = clipText(Redact(res.Text()), c.opts.OCRMaxChars)
	}
	ssim := float64(int64(ch.SSIM*1000+0.5)) / 1000
	e := Event{Type: "text", TS: c.now().UnixMilli(), OCR: text, Meta: Meta{App: "unknown", SSIM: &ssim}}
	if c.appKnown {
		e.Meta.App = c.app.Name
	}
	if text == "" || text == c.lastOCR {
		e.Type, e.OCR = "visual", ""
	} else {
		c.lastOCR = text
	}
	c.last, c.cur = c.cur, c.last
	c.hasLast = true
	c.lastEvent = c.now()
	c.emit(e)
}

// capArea keeps region within max pixels: first by cutting it to the
// changed box (grown by a margin), then by cutting rows.
func capArea(region, changed image.Rectangle, max int) image.Rectangle {
	if region.Dx()*region.Dy() <= max {
		return region
	}
	if r := changed.Inset(-4 * cell).Intersect(region); !r.Empty() {
		region = r
	}
	if region.Dx()*region.Dy() > max && region.Dx() > 0 {
		region.Max.Y = region.Min.Y + max/region.Dx()
	}
	return region
}

// clipText cuts s to at most n bytes at a rune boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
