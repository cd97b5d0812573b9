package capture

import (
	"math/bits"
	"sync/atomic"

	"github.com/acu-dev/acu/internal/frame"
)

// dirtyBands records which bands of frame.HashBand rows XDamage reported
// changed since they were last read. The connection's event reader marks
// them (mark); a capture takes them all at once (take) and reads only
// those rows into the segment, whose other rows still hold the screen as
// it is.
//
// Bands span the whole width: a read of full rows lands in the segment at
// the rows' own offset, so the segment stays one screen image, and the
// band hashes (frame.HashBands) line up with the reads.
type dirtyBands struct {
	bands int
	words []atomic.Uint64
}

func newDirtyBands(h int) *dirtyBands {
	n := frame.Bands(h)
	return &dirtyBands{bands: n, words: make([]atomic.Uint64, (n+63)/64)}
}

// mark records rows y0 to y1-1 as changed; rows off the screen are
// ignored.
func (d *dirtyBands) mark(y0, y1 int) {
	y0, y1 = max(y0, 0), min(y1, d.bands*frame.HashBand)
	if y0 >= y1 {
		return
	}
	for b := y0 / frame.HashBand; b <= (y1-1)/frame.HashBand; b++ {
		d.words[b/64].Or(1 << (b % 64))
	}
}

// take moves the recorded bands into set (one bit per band, len
// len(d.words)) and clears them. A band marked while take runs is either
// in set or still recorded for the next take: never lost.
func (d *dirtyBands) take(set []uint64) {
	for i := range d.words {
		set[i] = d.words[i].Swap(0)
	}
}

// peek ORs the recorded bands into set without clearing them.
func (d *dirtyBands) peek(set []uint64) {
	for i := range d.words {
		set[i] |= d.words[i].Load()
	}
}

// maxRuns caps the separate reads a capture of damaged bands sends; more
// runs than this are read as one, from the first to the last.
const maxRuns = 8

// bandRun is bands [b0, b1).
type bandRun struct{ b0, b1 int }

// runs returns the damaged bands of set (n bands) as runs of adjacent
// bands, a gap of one clean band closed up (one read of it costs less
// than a request of its own), at most maxRuns of them.
func runs(set []uint64, n int, out *[maxRuns]bandRun) []bandRun {
	rs := out[:0]
	for b := 0; b < n; {
		if !has(set, b) {
			// Skip to the next set bit.
			w := set[b/64] >> (b % 64)
			if w == 0 {
				b = (b/64 + 1) * 64
				continue
			}
			b += bits.TrailingZeros64(w)
			continue
		}
		e := b + 1
		for e < n && has(set, e) {
			e++
		}
		if k := len(rs); k > 0 && b-rs[k-1].b1 <= 1 {
			rs[k-1].b1 = e
		} else if k == maxRuns {
			rs[k-1].b1 = e // too many: the last run stretches over the rest
		} else {
			rs = append(rs, bandRun{b, e})
		}
		b = e
	}
	return rs
}

// has reports whether band b is in set.
func has(set []uint64, b int) bool { return set[b/64]&(1<<(b%64)) != 0 }

// ones counts the bands in set.
func ones(set []uint64) int {
	n := 0
	for _, w := range set {
		n += bits.OnesCount64(w)
	}
	return n
}
