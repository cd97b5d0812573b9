package elements

import (
	"image"
	"strconv"
	"strings"
	"unicode"
)

// slug makes the text part of an id: lower case ASCII letters and digits,
// words joined by '_', at most three words and 20 characters.
func slug(text string) string {
	var b strings.Builder
	words := 0
	word := make([]byte, 0, 20)
	flush := func() bool {
		if len(word) == 0 {
			return true
		}
		switch {
		case b.Len() == 0:
			if len(word) > 20 {
				word = word[:20]
			}
		case b.Len()+1+len(word) > 20:
			return false
		default:
			b.WriteByte('_')
		}
		b.Write(word)
		word = word[:0]
		words++
		return words < 3
	}
	for _, r := range text {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if len(word) < 21 {
				word = append(word, byte(unicode.ToLower(r)))
			}
			continue
		}
		if !flush() {
			return b.String()
		}
	}
	flush()
	return b.String()
}

// idBase is the id an element would get without collisions: its type's
// prefix and the slug of its text ("btn_save"), or the prefix alone for
// elements without text ("txt", numbered txt_1, txt_2).
func idBase(e *Element) string {
	p := idPrefix[e.Type]
	if p == "" {
		p = "el"
	}
	if s := slug(e.Text); s != "" {
		return p + "_" + s
	}
	return p
}

// idRecord is what the registry remembers of an id.
type idRecord struct {
	base   string
	ref    string // accessible object, empty for OCR text
	center image.Point
	seen   int // iteration last seen
}

// registry keeps ids stable across iterations: an element gets the id of
// the same accessible object, else of the nearest element with the same
// base that was seen before and is not taken in this map; new elements get
// the base, then base_2, base_3 (or prefix_1, prefix_2 without text).
// Ids unseen for forgetAfter iterations are forgotten.
type registry struct {
	ids   map[string]*idRecord
	byRef map[string]string
}

const forgetAfter = 50

func newRegistry() *registry {
	return &registry{ids: make(map[string]*idRecord), byRef: make(map[string]string)}
}

// assign sets the ID of every element of els for iteration iter.
func (r *registry) assign(els []Element, iter int) {
	taken := make(map[string]bool, len(els))
	pending := make([]int, 0, len(els))
	// Pass 1: the same accessible object keeps its id.
	for i := range els {
		e := &els[i]
		if e.Source&FromTree != 0 && !e.Ref.IsNull() {
			if id, ok := r.byRef[e.Ref.String()]; ok && !taken[id] {
				if rec := r.ids[id]; rec != nil && rec.base == idBase(e) {
					r.claim(e, id, iter, taken)
					continue
				}
			}
		}
		pending = append(pending, i)
	}
	// Pass 2: the nearest earlier element with the same base.
	rest := pending[:0]
	for _, i := range pending {
		e := &els[i]
		base := idBase(e)
		c := e.Center()
		best, bestD := "", -1
		for id, rec := range r.ids {
			if rec.base != base || taken[id] {
				continue
			}
			d := dist2(c, rec.center)
			if bestD < 0 || d < bestD || d == bestD && id < best {
				best, bestD = id, d
			}
		}
		if best != "" {
			r.claim(e, best, iter, taken)
			continue
		}
		rest = append(rest, i)
	}
	// Pass 3: new ids.
	for _, i := range rest {
		e := &els[i]
		base := idBase(e)
		id := base
		n := 1
		if !strings.Contains(base, "_") {
			id = base + "_1"
		}
		for r.ids[id] != nil || taken[id] {
			n++
			id = base + "_" + strconv.Itoa(n)
		}
		r.ids[id] = &idRecord{base: base}
		r.claim(e, id, iter, taken)
	}
	for id, rec := range r.ids {
		if iter-rec.seen > forgetAfter {
			delete(r.ids, id)
			if rec.ref != "" && r.byRef[rec.ref] == id {
				delete(r.byRef, rec.ref)
			}
		}
	}
}

func (r *registry) claim(e *Element, id string, iter int, taken map[string]bool) {
	rec := r.ids[id]
	if rec == nil {
		rec = &idRecord{base: idBase(e)}
		r.ids[id] = rec
	}
	e.ID = id
	taken[id] = true
	rec.center = e.Center()
	rec.seen = iter
	if e.Source&FromTree != 0 && !e.Ref.IsNull() {
		ref := e.Ref.String()
		if rec.ref != "" && rec.ref != ref && r.byRef[rec.ref] == id {
			delete(r.byRef, rec.ref)
		}
		rec.ref = ref
		r.byRef[ref] = id
	}
}

func dist2(a, b image.Point) int {
	dx, dy := a.X-b.X, a.Y-b.Y
	return dx*dx + dy*dy
}
