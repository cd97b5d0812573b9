package ocr

import (
	"bytes"
	"fmt"
	"image"
	"strconv"
	"strings"
)

// Word is one recognized word.
type Word struct {
	Text string
	Box  image.Rectangle // in the input image's pixel coordinates
	Conf float64         // Tesseract's confidence, 0..100
	Line int             // index into Result.Lines
	// Glyphs, from Engine.ReadLine only: each character, the others
	// the recognizer weighed in its place, and where it was read.
	Glyphs []Glyph
}

// Line is one recognized line of words, in reading order.
type Line struct {
	Text  string          // the line's words joined by single spaces
	Box   image.Rectangle // union of the words' boxes
	Conf  float64         // mean word confidence
	Words []int           // indexes into Result.Words
}

// Result is the text found in one image. Words and Lines are in Tesseract's
// reading order. Results may be shared through the cache: do not modify them.
type Result struct {
	Words []Word
	Lines []Line
	// Unread are regions of the frame that look like text (ink of a text
	// line's shape) where no word was read with confidence: a phrase there
	// may be on screen although it was not read.
	Unread []image.Rectangle
}

// Text returns all lines joined by newlines.
func (r Result) Text() string {
	var b strings.Builder
	for i, l := range r.Lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.Text)
	}
	return b.String()
}

// tsvColumns is Tesseract's TSV header; columns are found by name so a
// reordered or extended header still parses.
var tsvColumns = []string{"level", "page_num", "block_num", "par_num", "line_num", "word_num", "left", "top", "width", "height", "conf", "text"}

// ParseTSV parses Tesseract's TSV output into words and lines. Boxes are
// divided by scale and shifted by origin, mapping them from the image
// Tesseract saw back to the caller's pixel coordinates. Rows other than words
// (level 5) and empty words are skipped.
func ParseTSV(data []byte, scale int, origin image.Point) (Result, error) {
	if scale < 1 {
		scale = 1
	}
	var res Result
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines) == 0 || len(bytes.TrimSpace(lines[0])) == 0 {
		return res, nil
	}
	header := strings.Split(strings.TrimRight(string(lines[0]), "\r"), "\t")
	col := make(map[string]int, len(header))
	for i, h := range header {
		col[h] = i
	}
	idx := make([]int, len(tsvColumns))
	for i, name := range tsvColumns {
		j, ok := col[name]
		if !ok {
			return res, fmt.Errorf("parse tesseract tsv: header lacks column %q (got %q)", name, lines[0])
		}
		idx[i] = j
	}
	const (
		cLevel = iota
		cPage
		cBlock
		cPar
		cLine
		cWord
		cLeft
		cTop
		cWidth
		cHeight
		cConf
		cText
	)
	type lineKey struct{ page, block, par, line int }
	lineOf := map[lineKey]int{}
	for n, raw := range lines[1:] {
		row := strings.TrimRight(string(raw), "\r")
		if row == "" {
			continue
		}
		f := strings.Split(row, "\t")
		if len(f) < len(header) {
			// Tesseract ends word rows with the text column; a short row
			// is an empty word or a structural row.
			if len(f) == len(header)-1 {
				f = append(f, "")
			} else {
				return res, fmt.Errorf("parse tesseract tsv: row %d has %d columns, want %d", n+2, len(f), len(header))
			}
		}
		num := func(c int) (int, error) {
			v, err := strconv.Atoi(strings.TrimSpace(f[idx[c]]))
			if err != nil {
				return 0, fmt.Errorf("parse tesseract tsv: row %d column %s: %w", n+2, tsvColumns[c], err)
			}
			return v, nil
		}
		level, err := num(cLevel)
		if err != nil {
			return res, err
		}
		if level != 5 {
			continue
		}
		text := strings.TrimSpace(f[idx[cText]])
		if text == "" {
			continue
		}
		var v [10]int
		for c := cPage; c <= cHeight; c++ {
			if v[c], err = num(c); err != nil {
				return res, err
			}
		}
		if v[cWidth] < 0 || v[cHeight] < 0 {
			return res, fmt.Errorf("parse tesseract tsv: row %d has a negative box size", n+2)
		}
		conf, err := strconv.ParseFloat(strings.TrimSpace(f[idx[cConf]]), 64)
		if err != nil {
			return res, fmt.Errorf("parse tesseract tsv: row %d column conf: %w", n+2, err)
		}
		box := image.Rect(
			v[cLeft]/scale, v[cTop]/scale,
			ceilDiv(v[cLeft]+v[cWidth], scale), ceilDiv(v[cTop]+v[cHeight], scale),
		).Add(origin)
		k := lineKey{v[cPage], v[cBlock], v[cPar], v[cLine]}
		li, ok := lineOf[k]
		if !ok {
			li = len(res.Lines)
			lineOf[k] = li
			res.Lines = append(res.Lines, Line{Box: box})
		}
		wi := len(res.Words)
		res.Words = append(res.Words, Word{Text: text, Box: box, Conf: conf, Line: li})
		l := &res.Lines[li]
		l.Words = append(l.Words, wi)
		l.Box = l.Box.Union(box)
	}
	for i := range res.Lines {
		l := &res.Lines[i]
		var b strings.Builder
		var sum float64
		for j, wi := range l.Words {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(res.Words[wi].Text)
			sum += res.Words[wi].Conf
		}
		l.Text = b.String()
		l.Conf = sum / float64(len(l.Words))
	}
	return res, nil
}

func ceilDiv(a, b int) int {
	if a <= 0 {
		return a / b
	}
	return (a + b - 1) / b
}
