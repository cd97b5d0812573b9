// Package datacontrol reads and writes a wlroots compositor's clipboard
// through wlr-data-control-unstable-v1, without a window or focus: text
// written is served to every app that pastes until another client sets the
// clipboard, and text read is whatever any app copied.
//
// A Clipboard owns its connection and a goroutine that dispatches it for
// as long as the Clipboard is open (a selection acu set must be served
// when an app pastes); Read and Write hand their work to it.
//
// It does not apply the act settings or audit writes: the gate does, above
// it.
package datacontrol

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/acu-dev/acu/internal/wayland"
)

// textTypes are the MIME types of text, most wanted first; a write offers
// them all.
var textTypes = []string{"text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "STRING", "TEXT"}

// ErrEmpty is Read's error when the clipboard holds nothing, or nothing
// offered as text.
var ErrEmpty = errors.New("the clipboard holds no text")

// Clipboard is the clipboard of one compositor's seat.
type Clipboard struct {
	conn    *wayland.Conn
	display string
	mgr     uint32
	device  uint32

	mu     sync.Mutex
	queue  []func()
	closed bool
	cancel context.CancelFunc
	done   chan struct{}
	err    error          // why the loop ended
	sends  sync.WaitGroup // writes of the selection to pasting apps

	// Owned by the loop goroutine:
	offers    map[uint32][]string // offer id -> MIME types
	selection uint32              // the clipboard's current offer, 0 for none
	own       *source             // acu's selection while the clipboard is acu's
}

type source struct {
	id   uint32
	text string
}

// Open connects to the compositor whose socket is at path and starts
// watching its clipboard. display names the display in errors (path when
// empty).
func Open(ctx context.Context, path, display string) (*Clipboard, error) {
	if display == "" {
		display = path
	}
	conn, err := wayland.Dial(ctx, path)
	if err != nil {
		return nil, err
	}
	c := &Clipboard{conn: conn, display: display, done: make(chan struct{}), offers: map[uint32][]string{}}
	if err := c.setup(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("clipboard on %s: %w", display, err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go c.run(lctx)
	return c, nil
}

func (c *Clipboard) setup(ctx context.Context) error {
	g, ok := c.conn.Global("zwlr_data_control_manager_v1")
	if !ok {
		return fmt.Errorf("the compositor offers no zwlr_data_control_manager_v1 (see docs/wayland.md)")
	}
	seat, err := wayland.BindSeat(c.conn)
	if err != nil {
		return err
	}
	if c.mgr, _, err = c.conn.Bind(g, 2, nil); err != nil {
		return err
	}
	c.device = c.conn.NewObject("zwlr_data_control_device_v1", c.onDevice)
	if err := c.conn.Request(c.mgr, wayland.DataControlReqGetDevice, c.device, seat); err != nil {
		return err
	}
	return c.conn.Roundtrip(ctx) // the current selection arrives now
}

func (c *Clipboard) onDevice(ev *wayland.Event) {
	switch ev.Opcode {
	case wayland.DataDeviceEvDataOffer:
		id := ev.Uint()
		c.offers[id] = nil
		c.conn.Adopt(id, "zwlr_data_control_offer_v1", func(ev *wayland.Event) {
			if ev.Opcode == wayland.DataOfferEvOffer {
				c.offers[id] = append(c.offers[id], ev.String())
			}
		})
	case wayland.DataDeviceEvSelection:
		id := ev.Uint()
		if c.selection != 0 && c.selection != id {
			c.dropOffer(c.selection)
		}
		c.selection = id
	case wayland.DataDeviceEvPrimary: // the primary selection is not acu's clipboard
		if id := ev.Uint(); id != 0 && id != c.selection {
			c.dropOffer(id)
		}
	case wayland.DataDeviceEvFinished:
		c.conn.Destroyed(c.device)
	}
}

func (c *Clipboard) dropOffer(id uint32) {
	_ = c.conn.Request(id, wayland.DataOfferReqDestroy)
	c.conn.Forget(id)
	delete(c.offers, id)
}

func (c *Clipboard) run(ctx context.Context) {
	defer close(c.done)
	for {
		c.mu.Lock()
		q := c.queue
		c.queue = nil
		c.mu.Unlock()
		for _, fn := range q {
			fn()
		}
		err := c.conn.DispatchWake(ctx)
		if err == nil || errors.Is(err, wayland.ErrWoken) {
			continue
		}
		c.mu.Lock()
		c.err = fmt.Errorf("clipboard on %s: %w", c.display, err)
		if ctx.Err() != nil {
			c.err = fmt.Errorf("clipboard on %s: closed", c.display)
		}
		c.closed = true
		c.mu.Unlock()
		return
	}
}

// do runs fn on the loop goroutine and returns its error.
func (c *Clipboard) do(ctx context.Context, fn func() error) error {
	res := make(chan error, 1)
	c.mu.Lock()
	if c.closed {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.queue = append(c.queue, func() { res <- fn() })
	c.mu.Unlock()
	c.conn.Wake()
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		select {
		case err := <-res:
			return err
		default:
		}
		return c.err
	}
}

// Close stops serving the clipboard (a selection acu set is gone for apps
// that paste later) and closes the connection.
func (c *Clipboard) Close() error {
	c.cancel()
	<-c.done
	c.sends.Wait()
	return c.conn.Close()
}

// Write sets the clipboard to text, offered under every text MIME type,
// and returns once the compositor has taken the selection.
func (c *Clipboard) Write(ctx context.Context, text string) error {
	err := c.do(ctx, func() error {
		src := &source{text: text}
		src.id = c.conn.NewObject("zwlr_data_control_source_v1", func(ev *wayland.Event) { c.onSource(src, ev) })
		if err := c.conn.Request(c.mgr, wayland.DataControlReqCreateSource, src.id); err != nil {
			return err
		}
		for _, t := range textTypes {
			if err := c.conn.Request(src.id, wayland.DataSourceReqOffer, t); err != nil {
				return err
			}
		}
		if err := c.conn.Request(c.device, wayland.DataDeviceReqSetSelection, src.id); err != nil {
			return err
		}
		c.own = src
		return c.conn.Roundtrip(ctx)
	})
	if err != nil {
		return fmt.Errorf("write the clipboard of %s: %w", c.display, err)
	}
	return nil
}

func (c *Clipboard) onSource(src *source, ev *wayland.Event) {
	switch ev.Opcode {
	case wayland.DataSourceEvSend:
		_ = ev.String()
		fd := ev.FD()
		if fd < 0 {
			return
		}
		c.sends.Add(1)
		go func() { // an app pasting: written off the loop, so a slow reader holds nothing up
			defer c.sends.Done()
			_ = unix.SetNonblock(fd, true)
			f := os.NewFile(uintptr(fd), "clipboard-send")
			defer f.Close()
			_ = f.SetWriteDeadline(time.Now().Add(30 * time.Second))
			_, _ = io.WriteString(f, src.text)
		}()
	case wayland.DataSourceEvCancelled: // another client took the clipboard
		_ = c.conn.Request(src.id, wayland.DataSourceReqDestroy)
		c.conn.Destroyed(src.id)
		if c.own == src {
			c.own = nil
		}
	}
}

// Read returns the clipboard's text: what acu wrote while it still holds
// the clipboard, else what the app that holds it sends.
func (c *Clipboard) Read(ctx context.Context) (string, error) {
	var own *string
	var r *os.File
	err := c.do(ctx, func() error {
		if c.own != nil {
			own = &c.own.text
			return nil
		}
		if c.selection == 0 {
			return ErrEmpty
		}
		types := c.offers[c.selection]
		i := slices.IndexFunc(textTypes, func(t string) bool { return slices.Contains(types, t) })
		if i < 0 {
			return fmt.Errorf("%w (offered: %q)", ErrEmpty, types)
		}
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
			return err
		}
		err := c.conn.Request(c.selection, wayland.DataOfferReqReceive, textTypes[i], wayland.FD(p[1]))
		unix.Close(p[1])
		if err != nil {
			unix.Close(p[0])
			return err
		}
		r = os.NewFile(uintptr(p[0]), "clipboard-receive")
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("read the clipboard of %s: %w", c.display, err)
	}
	if own != nil {
		return *own, nil
	}
	defer r.Close()
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(30 * time.Second)
	}
	_ = r.SetReadDeadline(dl)
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("read the clipboard of %s: the app holding it did not send its text: %w", c.display, err)
	}
	return string(b), nil
}
