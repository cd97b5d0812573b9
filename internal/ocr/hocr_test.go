package ocr

import (
	"image"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sampleHOCR is Tesseract 5.3's hOCR with lstm_choice_mode=2 for one
// line, cut short: "api-62 Healthy", a 6 read where an 8 and a 0 were
// weighed too.
const sampleHOCR = `<div class='ocr_page' id='page_1' title='image "stdin"; bbox 0 0 365 85; ppageno 0; scan_res 70 70'>
   <div class='ocr_carea' id='block_1_1' title="bbox 10 20 355 65">
    <p class='ocr_par' id='par_1_1' lang='eng' title="bbox 10 20 355 65">
     <span class='ocr_line' id='line_1_1' title="bbox 10 20 355 65; baseline 0 -9; x_size 45; x_descenders 9; x_ascenders 9">
      <span class='ocrx_word' id='word_1_1' title='bbox 10 20 154 65; x_wconf 46'>api-62
       <span class='ocrx_cinfo' id='lstm_choices_1_1_1'>
        <span class='ocrx_cinfo' id='choice_1_1_1' title='x_confs 93.298691'>a</span>
        <span class='ocrx_cinfo' id='choice_1_1_2' title='x_confs 0'>g</span></span>
       <span class='ocrx_cinfo' id='lstm_choices_1_1_2'>
        <span class='ocrx_cinfo' id='choice_1_1_7' title='x_confs 95.199097'>p</span></span>
       <span class='ocrx_cinfo' id='lstm_choices_1_1_3'>
        <span class='ocrx_cinfo' id='choice_1_1_13' title='x_confs 94.932144'>i</span>
        <span class='ocrx_cinfo' id='choice_1_1_17' title='x_confs 0'>&#39;</span></span>
       <span class='ocrx_cinfo' id='lstm_choices_1_1_4'>
        <span class='ocrx_cinfo' id='choice_1_1_19' title='x_confs 94.245415'>-</span></span>
       <span class='ocrx_cinfo' id='lstm_choices_1_1_5'>
        <span class='ocrx_cinfo' id='choice_1_1_23' title='x_confs 80.129669'>6</span>
        <span class='ocrx_cinfo' id='choice_1_1_24' title='x_confs 56.831352'>8</span>
        <span class='ocrx_cinfo' id='choice_1_1_25' title='x_confs 0'>0</span></span>
       <span class='ocrx_cinfo' id='lstm_choices_1_1_6'>
        <span class='ocrx_cinfo' id='choice_1_1_29' title='x_confs 92.019005'>2</span></span>
      </span>
      <span class='ocrx_word' id='word_1_2' title='bbox 175 20 355 65; x_wconf 95'>Hey
       <span class='ocrx_cinfo' id='lstm_choices_1_2_1'>
        <span class='ocrx_cinfo' id='choice_1_2_1' title='x_confs 94.177956'> </span></span>
       <span class='ocrx_cinfo' id='lstm_choices_1_2_2'>
        <span class='ocrx_cinfo' id='choice_1_2_2' title='x_confs 94.876396'>H</span></span>
       <span class='ocrx_cinfo' id='lstm_choices_1_2_3'>
        <span class='ocrx_cinfo' id='choice_1_2_4' title='x_confs 94.258484'>e</span></span>
       <span class='ocrx_cinfo' id='lstm_choices_1_2_4'>
        <span class='ocrx_cinfo' id='choice_1_2_6' title='x_confs 94.24321'>y</span></span>
      </span>
      <span class='ocrx_word' id='word_1_3' title='bbox 360 20 370 65; x_wconf 20'>&amp;x
       <span class='ocrx_cinfo' id='lstm_choices_1_3_1'>
        <span class='ocrx_cinfo' id='choice_1_3_1' title='x_confs 20'>&amp;</span></span>
      </span>
     </span>
    </p>
   </div>
  </div>`

func TestParseHOCR(t *testing.T) {
	got, err := ParseHOCR([]byte(sampleHOCR))
	if err != nil {
		t.Fatal(err)
	}
	want := Result{
		Words: []Word{
			{Text: "api-62", Box: image.Rect(10, 20, 154, 65), Conf: 46, Glyphs: []Glyph{
				{Char: 'a', Alts: []rune{'g'}}, {Char: 'p', Alts: []rune{}}, {Char: 'i', Alts: []rune{'\''}},
				{Char: '-', Alts: []rune{}}, {Char: '6', Alts: []rune{'8', '0'}}, {Char: '2', Alts: []rune{}},
			}},
			{Text: "Hey", Box: image.Rect(175, 20, 355, 65), Conf: 95, Glyphs: []Glyph{
				{Char: 'H', Alts: []rune{}}, {Char: 'e', Alts: []rune{}}, {Char: 'y', Alts: []rune{}},
			}},
			// Its choices do not spell it: no glyphs.
			{Text: "&x", Box: image.Rect(360, 20, 370, 65), Conf: 20},
		},
		Lines: []Line{{Text: "api-62 Hey &x", Box: image.Rect(10, 20, 370, 65), Conf: (46 + 95 + 20) / 3.0, Words: []int{0, 1, 2}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseHOCR mismatch (-want +got):\n%s", diff)
	}
	if _, err := ParseHOCR([]byte(`<span class='ocr_line' id='line_1' title="bbox 1 2 x 4">`)); err == nil {
		t.Error("ParseHOCR(bad bbox) = nil error, want one")
	}
}

// TestUnscale: a page read at a fixed scale without blocks (InvertGlobal,
// InvertNone) has its hOCR boxes mapped back as ParseTSV maps TSV's.
func TestUnscale(t *testing.T) {
	r := unscale(Result{
		Words: []Word{{Text: "a", Box: image.Rect(30, 30, 181, 61)}},
		Lines: []Line{{Box: image.Rect(30, 30, 181, 61)}},
	}, 3, image.Pt(100, 10))
	want := image.Rect(110, 20, 161, 31)
	if r.Words[0].Box != want || r.Lines[0].Box != want {
		t.Errorf("unscale: word %v line %v, want %v", r.Words[0].Box, r.Lines[0].Box, want)
	}
}

// charBoxHOCR is Tesseract 5.3's hOCR with lstm_choice_mode=2 and
// hocr_char_boxes=1 for mousepad's 12 pt "7Q4X8" at 2x, cut short: the
// word's text is spelled by its characters, each with its box, and the X
// is read twice, as "X" and "x" over the same columns.
const charBoxHOCR = `<span class='ocr_line' id='line_1_1' title="bbox 174 21 260 46; baseline 0 -4">
      <span class='ocrx_word' id='word_1_2' title='bbox 174 21 260 46; x_wconf 38'>
       <span class='ocrx_cinfo' title='x_bboxes 174 21 188 42; x_conf 99.022461'>7</span>
        <span class='ocrx_cinfo' id='lstm_choices_1_2_1'>
         <span class='ocrx_cinfo' id='choice_1_2_1' title='x_confs 94.2286'>7</span>
         <span class='ocrx_cinfo' id='choice_1_2_2' title='x_confs 0'>/</span>
        </span>
       <span class='ocrx_cinfo' title='x_bboxes 209 21 224 42; x_conf 99.037109'>4</span>
        <span class='ocrx_cinfo' id='lstm_choices_1_2_3'>
         <span class='ocrx_cinfo' id='choice_1_2_13' title='x_confs 94.258904'>4</span>
        </span>
       <span class='ocrx_cinfo' title='x_bboxes 225 21 234 46; x_conf 91.268364'>X</span>
        <span class='ocrx_cinfo' id='lstm_choices_1_2_4'>
         <span class='ocrx_cinfo' id='choice_1_2_18' title='x_confs 89.131546'>X</span>
         <span class='ocrx_cinfo' id='choice_1_2_19' title='x_confs 86.180824'>x</span>
        </span>
       <span class='ocrx_cinfo' title='x_bboxes 226 21 243 42; x_conf 94.741226'>x</span>
        <span class='ocrx_cinfo' id='lstm_choices_1_2_5'>
         <span class='ocrx_cinfo' id='choice_1_2_22' title='x_confs 92.826378'>x</span>
         <span class='ocrx_cinfo' id='choice_1_2_23' title='x_confs 72.878944'>X</span>
        </span>
       <span class='ocrx_cinfo' title='x_bboxes 246 21 260 42; x_conf 98.674355'>8</span>
        <span class='ocrx_cinfo' id='lstm_choices_1_2_6'>
         <span class='ocrx_cinfo' id='choice_1_2_28' title='x_confs 92.778404'>8</span>
        </span>
      </span>
      <span class='ocrx_word' id='word_1_3' title='bbox 270 21 300 46; x_wconf 90'>
       <span class='ocrx_cinfo' title='x_bboxes 270 21 279 42; x_conf 99'>l</span>
        <span class='ocrx_cinfo' id='lstm_choices_1_3_1'>
         <span class='ocrx_cinfo' id='choice_1_3_1' title='x_confs 94'>l</span>
        </span>
       <span class='ocrx_cinfo' title='x_bboxes 281 21 290 42; x_conf 99'>l</span>
        <span class='ocrx_cinfo' id='lstm_choices_1_3_2'>
         <span class='ocrx_cinfo' id='choice_1_3_2' title='x_confs 94'>l</span>
        </span>
      </span>
     </span>`

// TestParseHOCRCharBoxes: with character boxes the words are spelled by
// their characters, each glyph has its box, and a letter read twice from
// one glyph (boxes over the same columns) is dropped by Undoubled while
// two letters side by side are kept.
func TestParseHOCRCharBoxes(t *testing.T) {
	got, err := ParseHOCR([]byte(charBoxHOCR))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Words) != 2 || got.Words[0].Text != "74Xx8" || got.Words[1].Text != "ll" || len(got.Lines) != 1 || got.Lines[0].Text != "74Xx8 ll" {
		t.Fatalf("ParseHOCR = %+v, want the words 74Xx8 and ll on one line", got)
	}
	w := got.Words[0]
	if len(w.Glyphs) != 5 || w.Glyphs[2].Box != image.Rect(225, 21, 234, 46) || w.Glyphs[3].Box != image.Rect(226, 21, 243, 42) {
		t.Fatalf("glyphs = %+v, want 5 with the X at (225,21)-(234,46) and the x at (226,21)-(243,42)", w.Glyphs)
	}
	if u, ok := w.Undoubled(); u.Text != "74X8" || len(u.Glyphs) != 4 || u.Glyphs[3].Char != '8' || !ok {
		t.Errorf("Undoubled(%q) = %q, %v, want 74X8 (4 glyphs), true", w.Text, u.Text, ok)
	}
	if u, ok := got.Words[1].Undoubled(); u.Text != "ll" || ok {
		t.Errorf("Undoubled(%q) = %q, %v, want ll, false: two letters side by side", got.Words[1].Text, u.Text, ok)
	}
	// xterm's bitmap "47" read "4/7": the / over the 7's columns, each
	// weighed for the other, the 7's group ranking the / first.
	mark, err := ParseHOCR([]byte(`<span class='ocr_line' id='line_1_1' title="bbox 307 20 355 50">
      <span class='ocrx_word' id='word_1_3' title='bbox 307 20 355 50; x_wconf 41'>
       <span class='ocrx_cinfo' title='x_bboxes 307 20 328 50; x_conf 99.568176'>4</span>
        <span class='ocrx_cinfo' id='lstm_choices_1_3_1'>
         <span class='ocrx_cinfo' id='choice_1_3_1' title='x_confs 94.218712'>4</span>
         <span class='ocrx_cinfo' id='choice_1_3_2' title='x_confs 0'>+</span>
        </span>
       <span class='ocrx_cinfo' title='x_bboxes 327 20 343 50; x_conf 98.03614'>/</span>
        <span class='ocrx_cinfo' id='lstm_choices_1_3_2'>
         <span class='ocrx_cinfo' id='choice_1_3_7' title='x_confs 90.573341'>/</span>
         <span class='ocrx_cinfo' id='choice_1_3_8' title='x_confs 75.04718'>7</span>
        </span>
       <span class='ocrx_cinfo' title='x_bboxes 334 20 355 50; x_conf 91.709152'>7</span>
        <span class='ocrx_cinfo' id='lstm_choices_1_3_3'>
         <span class='ocrx_cinfo' id='choice_1_3_13' title='x_confs 94.144791'>/</span>
         <span class='ocrx_cinfo' id='choice_1_3_14' title='x_confs 82.790192'>7</span>
         <span class='ocrx_cinfo' id='choice_1_3_15' title='x_confs 69.306496'>”</span>
        </span>
      </span></span>`))
	if err != nil {
		t.Fatal(err)
	}
	if len(mark.Words) != 1 || len(mark.Words[0].Glyphs) != 3 || mark.Words[0].Glyphs[2].Char != '7' || string(mark.Words[0].Glyphs[2].Alts) != "/”" {
		t.Fatalf("ParseHOCR(4/7) = %+v, want 3 glyphs, the last a 7 with / and ” weighed", mark.Words)
	}
	if u, ok := mark.Words[0].Undoubled(); u.Text != "47" || !ok {
		t.Errorf("Undoubled(4/7) = %q, %v, want 47, true: the / read off the 7", u.Text, ok)
	}
	// Mapped back at scale 2 from (100,10), the boxes go with the word's.
	r := unscale(got, 2, image.Pt(100, 10))
	if b := r.Words[0].Glyphs[0].Box; b != image.Rect(187, 20, 194, 31) {
		t.Errorf("unscaled glyph box = %v, want (187,20)-(194,31)", b)
	}
}
