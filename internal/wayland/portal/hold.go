package portal

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// held is the modifier keys ModsDown left down on a Session.
type held struct {
	mu   sync.Mutex
	keys []uint32
}

func (s *Session) held() *held { return &s.mods }

// KeyHold presses space-separated combos as Key does, each combo's key
// held down for hold before it is released (mutter's own key repeat
// applies while it is down). The key is released even when ctx ends.
func (s *Session) KeyHold(ctx context.Context, keys string, hold time.Duration) error {
	return pressKeys(ctx, s.key, keys, hold)
}

// ModsDown presses modifier keys ("shift", "ctrl+alt") and leaves them
// down, so the clicks, scrolls and keys that follow carry them, until
// ModsUp.
func (s *Session) ModsDown(ctx context.Context, mods string) error {
	fields := strings.FieldsFunc(mods, func(r rune) bool { return r == '+' || r == ' ' || r == ',' })
	if len(fields) == 0 {
		return fmt.Errorf("modifiers %q: name at least one of shift, ctrl, alt, super", mods)
	}
	var syms []uint32
	for _, f := range fields {
		ks, ok := modifierKeys[strings.ToLower(f)]
		if !ok {
			return fmt.Errorf("modifiers %q: %q is not a modifier (shift, ctrl, alt, super)", mods, f)
		}
		syms = append(syms, ks)
	}
	h := s.held()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ks := range syms {
		if slices.Contains(h.keys, ks) {
			continue
		}
		if err := s.key(ctx, ks, true); err != nil {
			return err
		}
		h.keys = append(h.keys, ks)
	}
	return nil
}

// ModsUp releases what ModsDown pressed, last first.
func (s *Session) ModsUp(ctx context.Context) error {
	h := s.held()
	h.mu.Lock()
	defer h.mu.Unlock()
	for len(h.keys) > 0 {
		ks := h.keys[len(h.keys)-1]
		if err := s.key(ctx, ks, false); err != nil {
			return err
		}
		h.keys = h.keys[:len(h.keys)-1]
	}
	return nil
}

// Sync returns once mutter has received every call sent before it: a
// D-Bus Peer.Ping to mutter on the session's connection (one
// connection's messages to one peer arrive in order). GDBus answers Ping
// itself, so it proves no more than that; Settled proves mutter has
// handled the input events.
func (s *Session) Sync(ctx context.Context) error {
	if err := s.rd.CallWithContext(ctx, "org.freedesktop.DBus.Peer.Ping", 0).Err; err != nil {
		return fmt.Errorf("mutter remote desktop: round trip: %w", err)
	}
	return nil
}

// CheckText reports whether Type can type text: any character but a
// control one (newline and tab are Return and Tab). Characters outside a
// Latin layout go in by a paste (Type), which needs a focused
// application that pastes with ctrl+v.
func CheckText(text string) error {
	if text == "" {
		return fmt.Errorf("text is empty")
	}
	for i, r := range text {
		if r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == 0xfffd {
			return fmt.Errorf("character %U at byte %d cannot be typed: remove control characters", r, i)
		}
	}
	return nil
}
