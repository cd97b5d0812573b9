package ocr

import (
	"fmt"
	"html"
	"image"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Glyph is one character of a word as the recognizer chose it, with the
// other characters it weighed for the same place (Tesseract's LSTM
// choices, best first; their confidence may be 0: listed is weighed).
type Glyph struct {
	Char rune
	Alts []rune
	// Box is where the character was read (hOCR's x_bboxes, in the
	// caller's coordinates like the word's), empty when not known.
	Box image.Rectangle
}

// Undoubled returns the word without what the recognizer read
// twice from one glyph: of two characters in a row whose boxes overlap
// over more than half the narrower one's width, the second when they are
// the same letter (either case: at 2x, mousepad's 12 pt "7Q4X8" was read
// "7Q4Xx8", the X and the x over the same columns), or the one that is
// not a letter or digit when each was weighed for the other (a mark read
// off a stroke: xterm's bitmap "47" read "4/7", the / and the 7 over the
// same columns, each weighed for the other). Two letters side by side, as
// in "ll" or "Ss", keep their places. ok reports whether a character was
// dropped (with its glyph); digits are never dropped.
func (w Word) Undoubled() (Word, bool) {
	rs := []rune(w.Text)
	if len(w.Glyphs) != len(rs) {
		return w, false
	}
	drop := make([]bool, len(rs))
	for i := 1; i < len(rs); i++ {
		a, b := w.Glyphs[i-1], w.Glyphs[i]
		if drop[i-1] || a.Box.Empty() || b.Box.Empty() {
			continue
		}
		over := min(a.Box.Max.X, b.Box.Max.X) - max(a.Box.Min.X, b.Box.Min.X)
		if 2*over <= min(a.Box.Dx(), b.Box.Dx()) {
			continue
		}
		switch {
		case unicode.IsLetter(a.Char) && unicode.ToLower(a.Char) == unicode.ToLower(b.Char):
			drop[i] = true
		case slices.Contains(a.Alts, b.Char) && slices.Contains(b.Alts, a.Char) && alnumRune(a.Char) != alnumRune(b.Char):
			// A mark read off the stroke of a letter or digit, each
			// weighed for the other: the mark goes.
			drop[i-1], drop[i] = !alnumRune(a.Char), !alnumRune(b.Char)
		}
	}
	var out []rune
	var gl []Glyph
	for i, r := range rs {
		if !drop[i] {
			out = append(out, r)
			gl = append(gl, w.Glyphs[i])
		}
	}
	if len(out) == len(rs) {
		return w, false
	}
	w.Text, w.Glyphs = string(out), gl
	return w, true
}

func alnumRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// hocrSpan matches the spans of Tesseract's hOCR output that ParseHOCR
// reads: lines, words, and the groups of character choices.
var hocrSpan = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<span class='([a-z_]+)'(?: id='([^']+)')?(?: title=(?:'([^']*)'|"([^"]*)"))?>([^<]*)`)
})

// ParseHOCR parses Tesseract's hOCR output made with lstm_choice_mode=2
// into words and lines, like ParseTSV, and gives each word its glyphs:
// the character chosen at each place and the others weighed there, and
// with hocr_char_boxes=1 where each was read (the word's text is then
// spelled by its characters). A word whose choices do not spell its text
// gets no glyphs.
func ParseHOCR(data []byte) (Result, error) {
	p := hocrParse{cur: -1, line: -1}
	for _, m := range hocrSpan().FindAllStringSubmatch(string(data), -1) {
		if err := p.span(m[1], m[2], m[3]+m[4], m[5]); err != nil {
			return Result{}, err
		}
	}
	p.finish()
	return numberHOCR(p.res), nil
}

// hocrParse is ParseHOCR's state: the result so far, and the current
// word's groups of character choices and characters with their boxes.
type hocrParse struct {
	res    Result
	groups []hocrGroup
	chars  []hocrChar // the current word's characters with their boxes
	cur    int        // index of the current word
	line   int
}

// hocrGroup is the characters weighed for one place, the chosen first.
type hocrGroup struct {
	chars []rune
}

// hocrChar is a character of a word with the box it was read in.
type hocrChar struct {
	r   rune
	box image.Rectangle
}

// span reads one span of the given class, id, title and text.
func (p *hocrParse) span(class, id, title, text string) error {
	switch {
	case class == "ocr_line" || class == "ocr_textfloat" || class == "ocr_header" || class == "ocr_caption":
		p.finish()
		p.cur = -1
		box, err := hocrBox(title)
		if err != nil {
			return err
		}
		p.line = len(p.res.Lines)
		p.res.Lines = append(p.res.Lines, Line{Box: box})
	case class == "ocrx_word":
		p.finish()
		p.cur = -1
		if p.line < 0 {
			return nil
		}
		return p.word(id, title, text)
	case class == "ocrx_cinfo" && id == "" && strings.HasPrefix(title, "x_bboxes "):
		if r := []rune(html.UnescapeString(text)); p.cur >= 0 && len(r) == 1 {
			box, err := hocrBox(strings.Replace(title, "x_bboxes ", "bbox ", 1))
			if err != nil {
				return err
			}
			p.chars = append(p.chars, hocrChar{r: r[0], box: box})
		}
	case class == "ocrx_cinfo" && strings.HasPrefix(id, "lstm_choices"):
		if p.cur >= 0 {
			p.groups = append(p.groups, hocrGroup{})
		}
	case class == "ocrx_cinfo" && strings.HasPrefix(id, "choice"):
		if p.cur >= 0 && len(p.groups) > 0 {
			if r := []rune(html.UnescapeString(text)); len(r) == 1 {
				g := &p.groups[len(p.groups)-1]
				g.chars = append(g.chars, r[0])
			}
		}
	}
	return nil
}

// word starts a word of the current line.
func (p *hocrParse) word(id, title, text string) error {
	// Empty when the characters follow, each with its box.
	t := strings.TrimSpace(html.UnescapeString(text))
	box, err := hocrBox(title)
	if err != nil {
		return err
	}
	conf := 0.0
	if _, c, ok := strings.Cut(title, "x_wconf "); ok {
		c, _, _ = strings.Cut(c, ";")
		if conf, err = strconv.ParseFloat(strings.TrimSpace(c), 64); err != nil {
			return fmt.Errorf("parse tesseract hocr: word %s: confidence: %w", id, err)
		}
	}
	p.cur = len(p.res.Words)
	p.res.Words = append(p.res.Words, Word{Text: t, Box: box, Conf: conf, Line: p.line})
	l := &p.res.Lines[p.line]
	if len(l.Words) == 0 {
		l.Box = box
	}
	l.Words = append(l.Words, p.cur)
	l.Box = l.Box.Union(box)
	return nil
}

// finish completes the current word, if any: its text from its
// characters when it had none, and its glyphs.
func (p *hocrParse) finish() {
	if p.cur < 0 {
		return
	}
	w := &p.res.Words[p.cur]
	if w.Text == "" {
		var b strings.Builder
		for _, c := range p.chars {
			b.WriteRune(c.r)
		}
		w.Text = strings.TrimSpace(b.String())
	}
	var gl []Glyph
	var spelled []rune
	for _, g := range p.groups {
		if len(g.chars) == 0 || unicode.IsSpace(g.chars[0]) {
			continue
		}
		gl = append(gl, Glyph{Char: g.chars[0], Alts: g.chars[1:]})
		spelled = append(spelled, g.chars[0])
	}
	var chosen []rune
	for _, c := range p.chars {
		chosen = append(chosen, c.r)
	}
	switch {
	case len(p.chars) > 0 && len(p.chars) == len(gl) && string(chosen) == w.Text:
		// Each character as chosen, with its box, and the others
		// weighed in its place (its group may rank another first:
		// xterm's bitmap "47" read "4/7", the 7's group "/", "7").
		for i := range gl {
			if gl[i].Char != p.chars[i].r {
				alts := []rune{gl[i].Char}
				for _, a := range gl[i].Alts {
					if a != p.chars[i].r {
						alts = append(alts, a)
					}
				}
				gl[i].Char, gl[i].Alts = p.chars[i].r, alts
			}
			gl[i].Box = p.chars[i].box
		}
		w.Glyphs = gl
	case string(spelled) == w.Text:
		w.Glyphs = gl
	}
	p.groups = p.groups[:0]
	p.chars = p.chars[:0]
}

// numberHOCR drops words without text (no characters read) and lines
// without words, and numbers the rest.
func numberHOCR(res Result) Result {
	kept := res.Words[:0]
	index := make([]int, len(res.Words))
	for i, w := range res.Words {
		index[i] = -1
		if w.Text != "" {
			index[i] = len(kept)
			kept = append(kept, w)
		}
	}
	res.Words = kept
	var lines []Line
	for _, l := range res.Lines {
		ws := l.Words[:0]
		for _, wi := range l.Words {
			if index[wi] >= 0 {
				ws = append(ws, index[wi])
			}
		}
		l.Words = ws
		if len(l.Words) == 0 {
			continue
		}
		var b strings.Builder
		var sum float64
		for j, wi := range l.Words {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(res.Words[wi].Text)
			sum += res.Words[wi].Conf
			res.Words[wi].Line = len(lines)
		}
		l.Text = b.String()
		l.Conf = sum / float64(len(l.Words))
		lines = append(lines, l)
	}
	res.Lines = lines
	return res
}

// hocrBox reads the "bbox x0 y0 x1 y1" of an hOCR title.
func hocrBox(title string) (image.Rectangle, error) {
	_, b, ok := strings.Cut(title, "bbox ")
	if !ok {
		return image.Rectangle{}, fmt.Errorf("parse tesseract hocr: no bbox in %q", title)
	}
	b, _, _ = strings.Cut(b, ";")
	f := strings.Fields(b)
	if len(f) != 4 {
		return image.Rectangle{}, fmt.Errorf("parse tesseract hocr: bad bbox in %q", title)
	}
	var v [4]int
	for i, s := range f {
		n, err := strconv.Atoi(s)
		if err != nil {
			return image.Rectangle{}, fmt.Errorf("parse tesseract hocr: bad bbox in %q: %w", title, err)
		}
		v[i] = n
	}
	if v[2] < v[0] || v[3] < v[1] {
		return image.Rectangle{}, fmt.Errorf("parse tesseract hocr: negative box in %q", title)
	}
	return image.Rect(v[0], v[1], v[2], v[3]), nil
}
