package elements

import (
	"hash/crc32"
	"strconv"
)

// Stagnation rules (seed: "CRC32 of quantized layout").
const (
	HashGrid         = 100 // element centres are snapped to this grid (pixels)
	HashTextRunes    = 20  // characters of text hashed per element
	HashHistory      = 15  // layout hashes kept
	StagnationWindow = 10  // recent hashes searched for repeats
	StagnationRepeat = 3   // the same hash this often in the window is stagnation
	UnchangedRecover = 4   // an unchanged map this many times in a row asks for recovery
)

// LayoutHash is the CRC32 (IEEE) over each element's type, centre snapped
// to a HashGrid-pixel grid, first HashTextRunes characters of text and
// clickable flag, in map order. Values, focus and small moves do not change
// it: it fingerprints the screen's structure.
func LayoutHash(m *Map) uint32 {
	if m == nil {
		return 0
	}
	h := crc32.NewIEEE()
	var buf []byte
	for i := range m.Elements {
		e := &m.Elements[i]
		c := e.Center()
		buf = buf[:0]
		buf = append(buf, e.Type...)
		buf = append(buf, '|')
		buf = strconv.AppendInt(buf, int64(snap(c.X)), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(snap(c.Y)), 10)
		buf = append(buf, '|')
		n := 0
		for _, r := range e.Text {
			if n == HashTextRunes {
				break
			}
			buf = append(buf, string(r)...)
			n++
		}
		buf = append(buf, '|')
		if e.Clickable {
			buf = append(buf, '1')
		} else {
			buf = append(buf, '0')
		}
		buf = append(buf, '\n')
		h.Write(buf)
	}
	return h.Sum32()
}

// snap rounds v to the nearest multiple of HashGrid.
func snap(v int) int {
	if v < 0 {
		return -snap(-v)
	}
	return (v + HashGrid/2) / HashGrid * HashGrid
}

// Observation is what the Tracker concluded from one map.
type Observation struct {
	Iteration int
	Hash      uint32
	Repeats   int  // times Hash occurs in the last StagnationWindow hashes (this one included)
	Stagnant  bool // Repeats >= StagnationRepeat
	Unchanged int  // consecutive maps with an empty diff to their predecessor
	Recover   bool // Unchanged reached UnchangedRecover (the count then restarts)
	Diff      Diff // from the previous map (all added for the first)
}

// Tracker is the stagnation bookkeeping of one task: the last HashHistory
// layout hashes and the run of unchanged maps. It is not safe for
// concurrent use; the orchestrator's loop owns it.
type Tracker struct {
	hashes    []uint32
	prev      *Map
	unchanged int
	iter      int
}

// Observe records the map of a new iteration.
func (t *Tracker) Observe(m *Map) Observation {
	t.iter++
	h := LayoutHash(m)
	if len(t.hashes) == HashHistory {
		copy(t.hashes, t.hashes[1:])
		t.hashes = t.hashes[:HashHistory-1]
	}
	t.hashes = append(t.hashes, h)
	o := Observation{Iteration: t.iter, Hash: h, Diff: Compare(t.prev, m)}
	recent := t.hashes
	if len(recent) > StagnationWindow {
		recent = recent[len(recent)-StagnationWindow:]
	}
	for _, x := range recent {
		if x == h {
			o.Repeats++
		}
	}
	o.Stagnant = o.Repeats >= StagnationRepeat
	if t.prev != nil && o.Diff.Empty() {
		t.unchanged++
	} else {
		t.unchanged = 0
	}
	o.Unchanged = t.unchanged
	if t.unchanged >= UnchangedRecover {
		o.Recover = true
		t.unchanged = 0
	}
	t.prev = m
	return o
}

// Hashes returns the layout hashes kept, oldest first.
func (t *Tracker) Hashes() []uint32 { return append([]uint32(nil), t.hashes...) }

// Reset forgets everything (a new plan, a recovery action taken).
func (t *Tracker) Reset() { *t = Tracker{} }
