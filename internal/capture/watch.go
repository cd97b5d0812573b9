package capture

import (
	"context"
	"errors"
	"fmt"
	"image"

	"github.com/acu-dev/acu/internal/display"
)

// watcher is one Watch subscription. rect and removed are guarded by the
// source's emu.
type watcher struct {
	ch      chan struct{}
	t       Target
	id      uint32
	rect    image.Rectangle
	removed bool
	stop    func() bool
}

// notify sends without blocking; a pending notification covers this one.
func (w *watcher) notify() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// Watch returns a channel that receives a value soon after anything in
// t's rectangle on display changes (XDamage; a single pixel is enough).
// Notifications are coalesced: the channel holds at most one. An unchanged
// screen sends nothing. A window target follows its window when it moves.
// After a reconnect every watcher gets one notification. The channel is
// closed when ctx ends or the hub closes.
func (h *Hub) Watch(ctx context.Context, dpy string, t Target) (<-chan struct{}, error) {
	s, err := h.source(dpy)
	if err != nil {
		return nil, err
	}
	r, err := s.resolve(ctx, t)
	var te *TargetError
	if err != nil && !(t.Kind == Window && errors.As(err, &te) && !te.Ambiguous) {
		return nil, err
	}
	// A window that is not open yet is watched too: its rectangle is
	// empty until the window maps, and the refresher (kicked by the root's
	// structure events) resolves it and notifies the moment it appears.
	s.mu.Lock()
	hasDamage := s.hasDamage
	s.mu.Unlock()
	if !hasDamage {
		return nil, fmt.Errorf("watch %s on %s: the X server has no DAMAGE extension; poll with Capture instead", t, dpy)
	}
	w := &watcher{ch: make(chan struct{}, 1), t: t, id: r.Window.ID, rect: r.Rect}
	w.stop = context.AfterFunc(ctx, func() { s.removeWatcher(w) })
	s.emu.Lock()
	defer s.emu.Unlock()
	select {
	case <-h.closing:
		w.stop()
		return nil, ErrClosed
	default:
	}
	if !w.removed {
		s.watchers[w] = struct{}{}
	}
	return w.ch, nil
}

func (s *source) removeWatcher(w *watcher) {
	s.emu.Lock()
	defer s.emu.Unlock()
	if w.removed {
		return
	}
	w.removed = true
	delete(s.watchers, w)
	close(w.ch)
}

func (s *source) closeWatchers() {
	s.emu.Lock()
	defer s.emu.Unlock()
	for w := range s.watchers {
		w.stop()
		w.removed = true
		close(w.ch)
		delete(s.watchers, w)
	}
}

// kick asks the refresher to re-resolve every watcher and notify all.
func (s *source) kick() {
	s.refreshAll.Store(true)
	s.kickWindows()
}

// kickWindows asks the refresher to update window watchers' rectangles.
func (s *source) kickWindows() {
	select {
	case s.refresh <- struct{}{}:
	default:
	}
}

// refresher keeps watcher rectangles current; owned by the hub.
// windowRects finds the current rectangle of each watched target; nil
// slices when the display is not connected. A panic in the X library is
// returned as an error, with the connection dropped so it is made anew.
func (s *source) windowRects(ws []*watcher, all bool) (rects []image.Rectangle, ids []uint32, ok []bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = display.PanicError("refresh window targets on "+s.name, r)
			s.teardown()
		}
	}()
	if s.conn == nil {
		return nil, nil, nil, nil
	}
	ctx := context.Background()
	rects = make([]image.Rectangle, len(ws))
	ids = make([]uint32, len(ws))
	ok = make([]bool, len(ws))
	for i, w := range ws {
		ids[i] = w.id
		if w.t.Kind == Window && !all && w.id != 0 {
			if win, found, err := s.conn.Window(ctx, w.id); err == nil && found && win.Mapped {
				rects[i], ok[i] = win.Rect(), true
				continue
			}
		}
		if r, err := s.resolveLocked(ctx, w.t); err == nil {
			rects[i], ids[i], ok[i] = r.Rect, r.Window.ID, true
		}
	}
	return rects, ids, ok, nil
}

func (s *source) refresher() {
	defer s.hub.wg.Done()
	for {
		select {
		case <-s.refresh:
		case <-s.hub.closing:
			return
		}
		all := s.refreshAll.Swap(false)
		s.emu.Lock()
		ws := make([]*watcher, 0, len(s.watchers))
		for w := range s.watchers {
			if all || w.t.Kind == Window {
				ws = append(ws, w)
			}
		}
		s.emu.Unlock()
		if len(ws) == 0 {
			continue
		}
		rects, ids, ok, err := s.windowRects(ws, all)
		if err != nil {
			s.log.Error("refresh window targets", "err", err)
			continue
		}
		if rects == nil {
			continue
		}
		s.emu.Lock()
		for i, w := range ws {
			if w.removed {
				continue
			}
			changed := ok[i] && rects[i] != w.rect
			if ok[i] {
				w.rect, w.id = rects[i], ids[i]
			}
			if all || changed {
				w.notify()
			}
		}
		s.emu.Unlock()
	}
}
