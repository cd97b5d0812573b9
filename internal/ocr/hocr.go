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
	var res Result
	type group struct {
		chars []rune
	}
	var groups []group
	type char struct {
		r   rune
		box image.Rectangle
	}
	var chars []char // the current word's characters with their boxes
	cur := -1        // index of the current word
	line := -1
	finish := func() {
		if cur < 0 {
			return
		}
		w := &res.Words[cur]
		if w.Text == "" {
			var b strings.Builder
			for _, c := range chars {
				b.WriteRune(c.r)
			}
			w.Text = strings.TrimSpace(b.String())
		}
		var gl []Glyph
		var spelled []rune
		for _, g := range groups {
			if len(g.chars) == 0 || unicode.IsSpace(g.chars[0]) {
				continue
			}
			gl = append(gl, Glyph{Char: g.chars[0], Alts: g.chars[1:]})
			spelled = append(spelled, g.chars[0])
		}
		var chosen []rune
		for _, c := range chars {
			chosen = append(chosen, c.r)
		}
		switch {
		case len(chars) > 0 && len(chars) == len(gl) && string(chosen) == w.Text:
			// Each character as chosen, with its box, and the others
			// weighed in its place (its group may rank another first:
			// xterm's bitmap "47" read "4/7", the 7's group "/", "7").
			for i := range gl {
				if gl[i].Char != chars[i].r {
					alts := []rune{gl[i].Char}
					for _, a := range gl[i].Alts {
						if a != chars[i].r {
							alts = append(alts, a)
						}
					}
					gl[i].Char, gl[i].Alts = chars[i].r, alts
				}
				gl[i].Box = chars[i].box
			}
			w.Glyphs = gl
		case string(spelled) == w.Text:
			w.Glyphs = gl
		}
		groups = groups[:0]
		chars = chars[:0]
	}
	for _, m := range hocrSpan().FindAllStringSubmatch(string(data), -1) {
		class, id, title, text := m[1], m[2], m[3]+m[4], m[5]
		switch {
		case class == "ocr_line" || class == "ocr_textfloat" || class == "ocr_header" || class == "ocr_caption":
			finish()
			cur = -1
			box, err := hocrBox(title)
			if err != nil {
				return Result{}, err
			}
			line = len(res.Lines)
			res.Lines = append(res.Lines, Line{Box: box})
		case class == "ocrx_word":
			finish()
			cur = -1
			if line < 0 {
				continue
			}
			// Empty when the characters follow, each with its box.
			t := strings.TrimSpace(html.UnescapeString(text))
			box, err := hocrBox(title)
			if err != nil {
				return Result{}, err
			}
			conf := 0.0
			if _, c, ok := strings.Cut(title, "x_wconf "); ok {
				c, _, _ = strings.Cut(c, ";")
				if conf, err = strconv.ParseFloat(strings.TrimSpace(c), 64); err != nil {
					return Result{}, fmt.Errorf("parse tesseract hocr: word %s: confidence: %w", id, err)
				}
			}
			cur = len(res.Words)
			res.Words = append(res.Words, Word{Text: t, Box: box, Conf: conf, Line: line})
			l := &res.Lines[line]
			if len(l.Words) == 0 {
				l.Box = box
			}
			l.Words = append(l.Words, cur)
			l.Box = l.Box.Union(box)
		case class == "ocrx_cinfo" && id == "" && strings.HasPrefix(title, "x_bboxes "):
			if r := []rune(html.UnescapeString(text)); cur >= 0 && len(r) == 1 {
				box, err := hocrBox(strings.Replace(title, "x_bboxes ", "bbox ", 1))
				if err != nil {
					return Result{}, err
				}
				chars = append(chars, char{r: r[0], box: box})
			}
		case class == "ocrx_cinfo" && strings.HasPrefix(id, "lstm_choices"):
			if cur >= 0 {
				groups = append(groups, group{})
			}
		case class == "ocrx_cinfo" && strings.HasPrefix(id, "choice"):
			if cur >= 0 && len(groups) > 0 {
				if r := []rune(html.UnescapeString(text)); len(r) == 1 {
					g := &groups[len(groups)-1]
					g.chars = append(g.chars, r[0])
				}
			}
		}
	}
	finish()
	// Drop words without text (no characters read) and lines without
	// words; number the rest.
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
	return res, nil
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
