package capture

import (
	"context"
	"fmt"
	"time"

	"github.com/jezek/xgb/shm"
	"github.com/jezek/xgb/xproto"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/frame"
)

// Reads of only the rows XDamage reported changed (see the package doc):
// the segment keeps the screen's image, dirty.go records the damaged
// bands, and the methods here read them, keep the bands' hashes and the
// history of what each read changed (for recycled buffers), and check
// damage against a whole read now and then. All run with s.mu held.

// verifyEvery is how many reads of damaged rows may follow each other: the
// next read is whole, and checks that damage missed no change since the
// last (verifyDamage).
const verifyEvery = 32

// genBands is what one read put in the segment: every band, or bands.
type genBands struct {
	all   bool
	bands []uint64
}

// readDamaged reads only the bands of rows XDamage reported changed into
// the segment, which holds the rest of the screen from earlier reads,
// rehashes those bands and folds them with the others' kept hashes into
// the frame's hash (s.mu held, events just flushed). The frame is the same
// as a whole read would give: the rows not read have not changed since
// they were (readFull checks that now and then).
func (s *source) readDamaged(c *display.Conn, w, h int, seq uint64, start time.Time, busy bool) (*frame.Frame, error) {
	taken := s.takeDirty()
	s.exact = false // the bands not read keep their hashes on damage's word
	var buf [maxRuns]bandRun
	rs := runs(taken, frame.Bands(h), &buf)
	pix := s.sh.data[: w*h*4 : w*h*4]
	if len(rs) > 0 {
		// All requests first, then the replies: one round trip.
		var cookies [maxRuns]shm.GetImageCookie
		for i, r := range rs {
			y0, y1 := r.b0*frame.HashBand, min(r.b1*frame.HashBand, h)
			cookies[i] = shm.GetImage(c.X, xproto.Drawable(c.Screen.Root), 0, int16(y0), uint16(w), uint16(y1-y0),
				0xffffffff, xproto.ImageFormatZPixmap, s.sh.seg, uint32(y0*w*4))
		}
		var err error
		for i := range rs {
			if _, e := cookies[i].Reply(); e != nil && err == nil {
				err = e
			}
		}
		if err != nil {
			// The segment may hold part of a read: only a whole read
			// can be trusted now.
			s.segOK = false
			if !c.Alive() {
				s.teardown()
			}
			return nil, fmt.Errorf("capture %s: read damaged rows: %w", s.name, err)
		}
		s.readGen(taken)
	}
	// The buffer a new frame would get: a recycled one is brought up to
	// date as the runs are hashed (their rows hashed and copied in one
	// pass, the other bands read since its generation copied).
	var own []byte
	recycled := false
	if len(rs) > 0 {
		var gen uint64
		if own, gen = s.pix.get(len(pix), busy); own != nil {
			recycled = true
			s.catchUp(own, pix, w*4, gen, taken)
			for _, r := range rs {
				frame.HashCopyBands(own, pix, w, h, w*4, s.bands, r.b0, r.b1)
			}
		}
	}
	if own == nil {
		for _, r := range rs {
			frame.HashBands(s.bands, pix, w, h, w*4, r.b0, r.b1)
		}
	}
	s.sinceVerify++
	s.st.damageReads.Add(1)
	hash := frame.FoldBands(s.bands, w, h)
	if old := s.cached; old != nil && old.Hash == hash && old.W == w && old.H == h {
		if own != nil {
			s.pix.put(own, s.gen)
		}
		return s.keepCached(old, true, seq, start), nil
	}
	if own == nil {
		own, recycled = s.frameBuf(pix, w*4, busy)
	}
	return s.publish(pix, own, recycled, busy, true, w, h, hash, seq, start), nil
}

// damageReads reports whether a capture may read only the damaged rows:
// the segment holds a whole w x h screen, unmasked, with its bands'
// hashes, and damage has not been caught missing a change (s.mu held).
func (s *source) damageReads(w, h int) bool {
	return s.segOK && !s.damageOff && s.sh != nil && len(s.sh.data) >= w*h*4 && len(s.bands) == frame.Bands(h) &&
		s.dirtyFor(h)
}

// dirtyFor reports whether the damage record is for a screen h rows high.
func (s *source) dirtyFor(h int) bool {
	d := s.dirty.Load()
	return d != nil && d.bands == frame.Bands(h)
}

// takeDirty takes the damaged bands recorded so far into a reused set
// (s.mu held); without a damage record the set is empty.
func (s *source) takeDirty() []uint64 {
	d := s.dirty.Load()
	if d == nil {
		return s.taken[:0]
	}
	if cap(s.taken) < len(d.words) {
		s.taken = make([]uint64, len(d.words))
	}
	s.taken = s.taken[:len(d.words)]
	d.take(s.taken)
	return s.taken
}

// bandSums returns s.bands sized for a screen h rows high (s.mu held).
func (s *source) bandSums(h int) []uint64 {
	if n := frame.Bands(h); len(s.bands) != n {
		s.bands = make([]uint64, n)
	}
	return s.bands
}

// verifyDamage compares the bands a whole read found with those kept from
// earlier reads: a band that changed although XDamage reported nothing
// for it (nor after this read began) means this X server's damage cannot
// be trusted to the row, and the display goes back to whole reads (s.mu
// held). taken is the bands reported before the read.
func (s *source) verifyDamage(ctx context.Context, c *display.Conn, taken []uint64) {
	missed := func() int {
		for b := range s.bands {
			if s.bands[b] != s.prevBands[b] && !has(taken, b) {
				return b
			}
		}
		return -1
	}
	if missed() < 0 {
		return
	}
	// A change made while the read was under way is reported after it:
	// flush the events, and count what they report as explained.
	if err := s.syncEvents(ctx, c); err != nil {
		s.segOK = false
		return
	}
	if d := s.dirty.Load(); d != nil && len(d.words) == len(taken) {
		d.peek(taken)
	}
	if b := missed(); b >= 0 {
		s.damageOff = true
		s.log.Warn("XDamage did not report a change on this display; reading the whole screen for every change from now on",
			"rows", fmt.Sprintf("%d-%d", b*frame.HashBand, (b+1)*frame.HashBand-1))
	}
}

// catchUp brings own, a copy of the segment pix as it was at generation
// gen, up to date: it copies the bands read since then (all of them when
// gen is too old to tell), except those in skip, which the caller copies
// itself (s.mu held).
func (s *source) catchUp(own, pix []byte, stride int, gen uint64, skip []uint64) {
	nb := len(s.bands)
	if nb == 0 || nb*frame.HashBand*stride < len(pix) {
		copy(own, pix)
		return
	}
	n := (nb + 63) / 64
	if cap(s.changed) < n {
		s.changed = make([]uint64, n)
	}
	set := s.changed[:n]
	if !s.sinceGen(gen, set) {
		for i := range set {
			set[i] = ^uint64(0)
		}
	}
	for i := range min(len(skip), n) {
		set[i] &^= skip[i]
	}
	var buf [maxRuns]bandRun
	rs := runs(set, nb, &buf)
	for _, r := range rs {
		lo, hi := r.b0*frame.HashBand*stride, min(r.b1*frame.HashBand*stride, len(pix))
		copy(own[lo:hi], pix[lo:hi])
	}
}

// histLen is how many generations of the segment the bands read are kept
// for: a recycled buffer older than that is copied whole.
const histLen = 256

// readGen records a read that changed the segment: a new generation,
// with the bands it read (nil for all of them) (s.mu held).
func (s *source) readGen(bands []uint64) {
	s.gen++
	slot := &s.hist[s.gen%histLen]
	slot.all = bands == nil
	slot.bands = append(slot.bands[:0], bands...)
}

// refineGen narrows the current generation, recorded as a whole read, to
// the bands whose hashes differ between before and after, and returns how
// many they are (s.mu held).
func (s *source) refineGen(before, after []uint64) int {
	slot := &s.hist[s.gen%histLen]
	n := (len(after) + 63) / 64
	slot.all = false
	slot.bands = append(slot.bands[:0], make([]uint64, n)...)
	moved := 0
	for b := range after {
		if after[b] != before[b] {
			slot.bands[b/64] |= 1 << (b % 64)
			moved++
		}
	}
	return moved
}

// sinceGen sets set to the bands read after generation gen and reports
// whether they are known (gen recent enough, no whole read since) (s.mu
// held).
func (s *source) sinceGen(gen uint64, set []uint64) bool {
	if gen == 0 || gen > s.gen || s.gen-gen >= histLen {
		return false
	}
	clear(set)
	for g := gen + 1; g <= s.gen; g++ {
		h := &s.hist[g%histLen]
		if h.all || len(h.bands) != len(set) {
			return false
		}
		for i, w := range h.bands {
			set[i] |= w
		}
	}
	return true
}
