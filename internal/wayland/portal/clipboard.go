package portal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/godbus/dbus/v5"
)

// TextTypes are the MIME types acu offers text under, and asks for when
// it reads text: what GTK, Qt and browsers ask a Wayland clipboard for.
var TextTypes = []string{"text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "STRING", "TEXT"}

// ErrNoText is Clipboard's answer when the clipboard is empty or offers
// no text type.
var ErrNoText = errors.New("the clipboard holds no text")

// clip is a Session's side of mutter's remote-desktop clipboard
// (EnableClipboard, SetSelection, SelectionTransfer, SelectionWrite,
// SelectionRead, SelectionOwnerChanged): the last owner mutter announced
// and, while the session owns the clipboard, what it offers.
type clip struct {
	mu      sync.Mutex
	enabled bool
	owned   bool              // the session owns the clipboard
	mimes   []string          // the current owner's types, as mutter announced them
	offer   map[string][]byte // what the session serves while it owns it
	gen     uint64            // SetSelection calls: a transfer serves the offer of its generation
	served  map[uint64]int    // completed transfers by generation
	cond    *sync.Cond
}

// enableClipboard turns the session's clipboard on (once) and starts
// serving and following it.
func (s *Session) enableClipboard(ctx context.Context) error {
	c := &s.clip
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.enabled {
		return nil
	}
	if c.cond == nil {
		c.cond = sync.NewCond(&c.mu)
		c.served = map[uint64]int{}
	}
	for _, m := range []string{"SelectionTransfer", "SelectionOwnerChanged"} {
		if err := s.conn.AddMatchSignalContext(ctx, dbus.WithMatchObjectPath(s.rd.Path()), dbus.WithMatchInterface(rdSession),
			dbus.WithMatchMember(m)); err != nil {
			return fmt.Errorf("mutter remote desktop: watch the clipboard: %w", err)
		}
	}
	signals := make(chan *dbus.Signal, 32)
	s.conn.Signal(signals)
	if err := s.call(ctx, "EnableClipboard", map[string]dbus.Variant{}); err != nil {
		s.conn.RemoveSignal(signals)
		return err
	}
	c.enabled = true
	go s.follow(signals)
	return nil
}

// follow handles the clipboard's signals until the connection closes.
func (s *Session) follow(signals chan *dbus.Signal) {
	for sig := range signals {
		if sig.Path != s.rd.Path() {
			continue
		}
		switch sig.Name {
		case rdSession + ".SelectionTransfer":
			if len(sig.Body) != 2 {
				continue
			}
			mime, _ := sig.Body[0].(string)
			serial, _ := sig.Body[1].(uint32)
			s.clip.mu.Lock()
			data, ok := s.clip.offer[mime]
			gen := s.clip.gen
			s.clip.mu.Unlock()
			go s.serve(serial, data, ok, gen)
		case rdSession + ".SelectionOwnerChanged":
			if len(sig.Body) != 1 {
				continue
			}
			opts, _ := sig.Body[0].(map[string]dbus.Variant)
			var mimes []string
			var own bool
			if v, ok := opts["mime-types"]; ok {
				mimes, _ = v.Value().([]string)
			}
			if v, ok := opts["session-is-owner"]; ok {
				own, _ = v.Value().(bool)
			}
			// The offer stays: mutter asks the session for transfers only
			// while it owns the clipboard, and an announcement read after
			// a newer SetSelection must not drop that one's content.
			s.clip.mu.Lock()
			s.clip.owned, s.clip.mimes = own, mimes
			s.clip.cond.Broadcast()
			s.clip.mu.Unlock()
		}
	}
}

// serveTimeout bounds the write of one transfer to a reader that stopped
// reading.
const serveTimeout = 5 * time.Second

// serve writes data into the pipe mutter gives for transfer serial.
func (s *Session) serve(serial uint32, data []byte, ok bool, gen uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), serveTimeout)
	defer cancel()
	if !ok {
		_ = s.rd.CallWithContext(ctx, rdSession+".SelectionWriteDone", 0, serial, false).Err
		return
	}
	var fd dbus.UnixFD
	if err := s.rd.CallWithContext(ctx, rdSession+".SelectionWrite", 0, serial).Store(&fd); err != nil {
		return
	}
	// Non-blocking, so the write has a deadline.
	_ = syscall.SetNonblock(int(fd), true)
	f := os.NewFile(uintptr(fd), "selection-write")
	_ = f.SetWriteDeadline(time.Now().Add(serveTimeout))
	_, err := f.Write(data)
	if cErr := f.Close(); err == nil {
		err = cErr
	}
	_ = s.rd.CallWithContext(ctx, rdSession+".SelectionWriteDone", 0, serial, err == nil).Err
	if err == nil {
		s.clip.mu.Lock()
		s.clip.served[gen]++
		s.clip.cond.Broadcast()
		s.clip.mu.Unlock()
	}
}

// offer makes the session the clipboard's owner with content (a MIME
// type -> bytes; none: the clipboard is cleared) and returns its
// generation, for waitServed.
func (s *Session) offer(ctx context.Context, content map[string][]byte) (uint64, error) {
	if err := s.enableClipboard(ctx); err != nil {
		return 0, err
	}
	mimes := make([]string, 0, len(content))
	for m := range content {
		mimes = append(mimes, m)
	}
	slices.Sort(mimes)
	// Offer the types in acu's order of preference for text first.
	slices.SortStableFunc(mimes, func(a, b string) int { return rank(a) - rank(b) })
	s.clip.mu.Lock()
	s.clip.gen++
	gen := s.clip.gen
	s.clip.offer = content
	s.clip.owned = true
	s.clip.mimes = mimes
	s.clip.mu.Unlock()
	if err := s.call(ctx, "SetSelection", map[string]dbus.Variant{"mime-types": dbus.MakeVariant(mimes)}); err != nil {
		return 0, err
	}
	return gen, nil
}

func rank(mime string) int {
	if i := slices.Index(TextTypes, mime); i >= 0 {
		return i
	}
	return len(TextTypes)
}

// SetClipboard makes the session the clipboard's owner with text, which
// it serves to every program that pastes until another program copies.
func (s *Session) SetClipboard(ctx context.Context, text string) error {
	content := map[string][]byte{}
	for _, m := range TextTypes {
		content[m] = []byte(text)
	}
	_, err := s.offer(ctx, content)
	return err
}

// waitServed waits until a program has read the offer of generation gen
// (a paste), ctx ends or timeout passes; it reports whether one did.
func (s *Session) waitServed(ctx context.Context, gen uint64, timeout time.Duration) bool {
	c := &s.clip
	t := time.AfterFunc(timeout, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer t.Stop()
	stop := context.AfterFunc(ctx, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer stop()
	deadline := time.Now().Add(timeout)
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.served[gen] == 0 {
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return false
		}
		c.cond.Wait()
	}
	return true
}

// maxClipboard bounds what acu reads of one clipboard type.
const maxClipboard = 16 << 20

// read reads the clipboard's content of type mime from its owner.
func (s *Session) read(ctx context.Context, mime string) ([]byte, error) {
	var fd dbus.UnixFD
	if err := s.rd.CallWithContext(ctx, rdSession+".SelectionRead", 0, mime).Store(&fd); err != nil {
		return nil, fmt.Errorf("mutter remote desktop: SelectionRead %s: %w", mime, err)
	}
	_ = syscall.SetNonblock(int(fd), true)
	f := os.NewFile(uintptr(fd), "selection-read")
	defer f.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = f.SetReadDeadline(dl)
	} else {
		_ = f.SetReadDeadline(time.Now().Add(serveTimeout))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxClipboard+1))
	if err != nil {
		return nil, fmt.Errorf("mutter remote desktop: read the clipboard's %s: %w", mime, err)
	}
	if len(b) > maxClipboard {
		return nil, fmt.Errorf("mutter remote desktop: the clipboard's %s is over %d MiB", mime, maxClipboard>>20)
	}
	return b, nil
}

// Clipboard returns the clipboard's text: what the session offers while
// it owns the clipboard, else the owner's text as mutter hands it over.
// ErrNoText: the clipboard is empty or holds no text type.
func (s *Session) Clipboard(ctx context.Context) (string, error) {
	if err := s.enableClipboard(ctx); err != nil {
		return "", err
	}
	s.clip.mu.Lock()
	owned, offer, mimes := s.clip.owned, s.clip.offer, s.clip.mimes
	s.clip.mu.Unlock()
	if owned {
		for _, m := range TextTypes {
			if b, ok := offer[m]; ok {
				return string(b), nil
			}
		}
		return "", ErrNoText
	}
	// mutter announces an owner only when it changes: one that copied
	// before the session's clipboard was on is unknown, so each text type
	// is asked for.
	var errs []error
	for _, m := range TextTypes {
		if len(mimes) > 0 && !slices.Contains(mimes, m) {
			continue
		}
		b, err := s.read(ctx, m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return string(b), nil
	}
	if len(mimes) > 0 && len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	return "", ErrNoText
}

// saveClipboard reads every type the clipboard's owner offers (what a
// paste of acu's replaces), for restoreClipboard; nil when it is empty
// or the session owns it already.
func (s *Session) saveClipboard(ctx context.Context) (map[string][]byte, error) {
	if err := s.enableClipboard(ctx); err != nil {
		return nil, err
	}
	s.clip.mu.Lock()
	owned, offer, mimes := s.clip.owned, s.clip.offer, slices.Clone(s.clip.mimes)
	s.clip.mu.Unlock()
	if owned {
		return offer, nil
	}
	if len(mimes) == 0 {
		mimes = TextTypes // an owner from before the session's clipboard was on
	}
	saved := map[string][]byte{}
	total := 0
	for _, m := range mimes {
		b, err := s.read(ctx, m)
		if err != nil {
			continue // a type its owner cannot give: not restored
		}
		if total += len(b); total > maxClipboard {
			return nil, fmt.Errorf("the clipboard holds over %d MiB, which acu would replace to paste: clear it or type text of the keyboard layout", maxClipboard>>20)
		}
		saved[m] = b
	}
	if len(saved) == 0 {
		return nil, nil
	}
	return saved, nil
}
