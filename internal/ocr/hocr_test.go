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
