package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/input"
)

// Hold is a take-over's hold: who holds a display, since when and until
// when. While it is in force every acu process acting on the display
// pauses (the agent loop before its turns, the gate's user-first check);
// Until bounds a hold whose owner died: the owner renews it while the
// human drives, and a hold past Until counts for nothing.
//
// Where it lives depends on the display, so that every acu process on
// the machine that talks to it sees it without talking to the daemon: on
// X11 the root window's _ACU_TAKEOVER property (input.HoldAtom), on
// Wayland, which has no shared root, a JSON file beside the compositor's
// socket (HoldFile).
type Hold = input.Hold

// HoldDetail says who holds the display and since when.
func HoldDetail(h Hold) string { return input.HoldDetail(h) }

// HoldFile is the file that holds the take-over hold of the Wayland
// display whose socket is at socket: "acu-takeover.NAME.json" in the
// socket's directory (the compositor's XDG_RUNTIME_DIR), one per socket.
func HoldFile(socket string) string {
	return filepath.Join(filepath.Dir(socket), "acu-takeover."+filepath.Base(socket)+".json")
}

// SetHold writes h as dpy's take-over hold (the default display when dpy
// is empty), replacing any: the root property on X11, HoldFile on
// Wayland (written whole to a temporary file and renamed over it, so a
// reader never sees half of it).
func (g *Gate) SetHold(ctx context.Context, dpy string, h Hold) error {
	c, dpy, err := g.conn(ctx, dpy)
	if err != nil {
		return err
	}
	if c.wl == nil {
		return input.SetHold(ctx, c.c, h)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writeHoldFile(HoldFile(c.wl.path), h); err != nil {
		return fmt.Errorf("set the take-over hold on %s: %w", dpy, err)
	}
	return nil
}

// ClearHold removes dpy's take-over hold; a display without one is not
// an error.
func (g *Gate) ClearHold(ctx context.Context, dpy string) error {
	c, dpy, err := g.conn(ctx, dpy)
	if err != nil {
		return err
	}
	if c.wl == nil {
		return input.ClearHold(ctx, c.c)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Remove(HoldFile(c.wl.path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear the take-over hold on %s: %w", dpy, err)
	}
	return nil
}

// HoldWatch returns a watch of dpy's take-over hold, for loops that pause
// while a human holds the display. It reads through g (the X connection
// on X11, which g reopens when the server restarts; on Wayland the hold
// file, read again only when it changed).
func (g *Gate) HoldWatch(ctx context.Context, dpy string) (*HoldWatch, error) {
	c, dpy, err := g.conn(ctx, dpy)
	if err != nil {
		return nil, err
	}
	w := &HoldWatch{g: g, dpy: dpy}
	if c.wl != nil {
		w.file = &holdReader{path: HoldFile(c.wl.path)}
	}
	return w, nil
}

// HoldWatch reports a display's take-over hold; it is what the agent
// loop checks before each turn. Safe for concurrent use.
type HoldWatch struct {
	g    *Gate
	dpy  string
	file *holdReader // Wayland; nil on X11
}

// Held reports whether a human holds the display, and who.
func (w *HoldWatch) Held(ctx context.Context) (bool, string, error) {
	var (
		h   Hold
		ok  bool
		err error
	)
	if w.file != nil {
		if err := ctx.Err(); err != nil {
			return false, "", err
		}
		h, ok, err = w.file.read(w.g.opts.Now())
	} else {
		var c *conn
		if c, _, err = w.g.conn(ctx, w.dpy); err == nil {
			h, ok, err = input.ReadHold(ctx, c.c, w.g.opts.Now())
		}
	}
	if err != nil || !ok {
		return false, "", err
	}
	return true, HoldDetail(h), nil
}

// writeHoldFile writes h to path atomically: a temporary file in the same
// directory, renamed over path.
func writeHoldFile(path string, h Hold) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".acu-takeover-*.tmp")
	if err != nil {
		return fmt.Errorf("%w: acu keeps a Wayland display's take-over hold beside its socket: run acu as the compositor's user, or give it write access to %s", err, dir)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		// Every acu process that can reach the socket reads it.
		err = f.Chmod(0o644)
	}
	if cErr := f.Close(); err == nil {
		err = cErr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// holdReader reads a Wayland display's hold file, parsing it again only
// when a stat says it changed (a rename gives it a new inode), so a loop
// polling it costs one stat a look.
type holdReader struct {
	path string

	mu   sync.Mutex
	stat os.FileInfo // of the file last parsed; nil: none
	hold Hold
	ok   bool // hold parsed well
}

// read returns the hold and whether it is in force at now (present,
// well-formed and not past Until).
func (r *holdReader) read(now time.Time) (Hold, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, err := os.Stat(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		r.stat = nil
		return Hold{}, false, nil
	}
	if err != nil {
		return Hold{}, false, fmt.Errorf("read the take-over hold %s: %w", r.path, err)
	}
	if r.stat == nil || !os.SameFile(r.stat, st) || !st.ModTime().Equal(r.stat.ModTime()) || st.Size() != r.stat.Size() {
		b, err := os.ReadFile(r.path)
		if errors.Is(err, fs.ErrNotExist) { // cleared between the stat and the read
			r.stat = nil
			return Hold{}, false, nil
		}
		if err != nil {
			return Hold{}, false, fmt.Errorf("read the take-over hold %s: %w", r.path, err)
		}
		var h Hold
		r.ok = json.Unmarshal(b, &h) == nil // a malformed hold holds nothing
		r.hold = h
		r.stat = st
	}
	if !r.ok {
		return Hold{}, false, nil
	}
	return r.hold, now.Before(r.hold.Until), nil
}
