package annotate

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func blank(w, h int, f Format) Image {
	return Image{Pix: make([]byte, w*h*4), W: w, H: h, Stride: w * 4, Format: f}
}

// rgb reads a pixel as R, G, B.
func rgb(img Image, x, y int) (r, g, b int) {
	p := img.Pix[y*img.Stride+x*4:]
	if img.Format == RGBA {
		return int(p[0]), int(p[1]), int(p[2])
	}
	return int(p[2]), int(p[1]), int(p[0])
}

func TestParseColor(t *testing.T) {
	tests := []struct {
		in   string
		want Color
	}{
		{"rgba(255,140,0,0.5)", Color{255, 140, 0, 128}},
		{"rgb(0, 120, 255)", Color{0, 120, 255, 255}},
		{"#ff8c00", Color{255, 140, 0, 255}},
		{"#ff8c0080", Color{255, 140, 0, 128}},
		{"#f80", Color{255, 136, 0, 255}},
		{"rgba(0 0 0 / 50%)", Color{0, 0, 0, 128}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseColor(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("ParseColor(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "orange", "rgba(1,2)", "#12345", "rgb(a,b,c)"} {
		if _, err := ParseColor(bad); err == nil {
			t.Errorf("ParseColor(%q) succeeded, want an error", bad)
		}
	}
}

func TestParseConfigSeedKeys(t *testing.T) {
	c, err := ParseConfig(`{"executed_heat":{"enabled":true,"radius_scale":0.1,"stops":[[0,"rgba(255,0,0,1)"],[1,"rgba(255,0,0,0)"]],"trail_turns":4,"trail_shrink":0.8},
		"bbox_heat":{"enabled":false,"border":"rgba(0,0,255,1)","border_width":3,"fill_stops":[[0,"rgba(0,0,255,0.5)"]]}}`)
	if err != nil {
		t.Fatal(err)
	}
	if c.ExecutedHeat.TrailTurns != 4 || c.ExecutedHeat.RadiusScale != 0.1 || c.BBoxHeat.Enabled || c.BBoxHeat.BorderWidth != 3 {
		t.Errorf("ParseConfig = %+v", c)
	}
	if !c.Labels.Enabled {
		t.Errorf("labels default lost: %+v", c.Labels)
	}
	// Round trip through JSON (GET /config gives the panel the same keys).
	b, _ := json.Marshal(c)
	c2, err := ParseConfig(string(b))
	if err != nil {
		t.Fatalf("ParseConfig(Marshal(c)): %v (%s)", err, b)
	}
	if diff := cmp.Diff(c, c2); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"executed_heat":{"trail_turns":0}}`, `{"executed_heat":{"trail_shrink":1.5}}`, `{"nope":1}`, `{"bbox_heat":{"fill_stops":[[0.5,"#fff"],[0.1,"#fff"]]}}`} {
		if _, err := ParseConfig(bad); err == nil {
			t.Errorf("ParseConfig(%s) succeeded, want an error", bad)
		}
	}
}

func TestHeatCentredOnMark(t *testing.T) {
	for _, f := range []Format{BGRX, RGBA} {
		img := blank(400, 200, f)
		a := New(Default())
		a.Draw(img, nil, a.Push([]Mark{{Pos: true, X: 250, Y: 500}}))
		cx, cy := px(250, 400), px(500, 200)
		r, g, b := rgb(img, cx, cy)
		if r < 150 || g < 60 || b != 0 || r <= g {
			t.Errorf("format %d: centre pixel (%d,%d) = %d,%d,%d; want orange", f, cx, cy, r, g, b)
		}
		// Heat falls off with distance and is gone beyond the radius
		// (0.22 * 400 = 88 pixels).
		r2, _, _ := rgb(img, cx+40, cy)
		if r2 >= r || r2 == 0 {
			t.Errorf("pixel 40 px away: red %d; want weaker than the centre's %d but present", r2, r)
		}
		if r3, g3, b3 := rgb(img, cx+100, cy); r3|g3|b3 != 0 {
			t.Errorf("pixel 100 px away = %d,%d,%d; want untouched", r3, g3, b3)
		}
	}
}

func TestBBoxHeatAndBorder(t *testing.T) {
	img := blank(400, 400, BGRX)
	cfg := Default()
	cfg.ExecutedHeat.Enabled = false
	a := New(cfg)
	a.Draw(img, []Box{{X1: 250, Y1: 250, X2: 750, Y2: 750}}, nil)
	r, g, b := rgb(img, 200, 200)
	if b < 40 || r != 0 || b <= g {
		t.Errorf("bbox centre = %d,%d,%d; want blue", r, g, b)
	}
	x1 := px(250, 400)
	_, _, bb := rgb(img, x1, 200)
	if bb < 200 {
		t.Errorf("border pixel blue = %d; want the border colour (about 230)", bb)
	}
	if r, g, b := rgb(img, 50, 50); r|g|b != 0 {
		t.Errorf("outside the box = %d,%d,%d; want untouched", r, g, b)
	}
}

func TestTrailFadesAndShrinks(t *testing.T) {
	cfg := Default()
	cfg.ExecutedHeat.TrailTurns = 3
	cfg.ExecutedHeat.TrailShrink = 0.7
	cfg.Labels.Enabled = false
	a := New(cfg)
	a.Push([]Mark{{Pos: true, X: 150, Y: 500}})          // two turns old
	a.Push([]Mark{{Pos: true, X: 500, Y: 500}})          // one turn old
	trail := a.Push([]Mark{{Pos: true, X: 850, Y: 500}}) // this turn
	if len(trail) != 3 {
		t.Fatalf("trail length = %d, want 3", len(trail))
	}
	img := blank(1000, 300, BGRX)
	a.Draw(img, nil, trail)
	r0, _, _ := rgb(img, px(850, 1000), 150)
	r1, _, _ := rgb(img, px(500, 1000), 150)
	r2, _, _ := rgb(img, px(150, 1000), 150)
	if !(r0 > r1 && r1 > r2 && r2 > 0) {
		t.Errorf("centre red of turns 0, 1, 2 ago = %d, %d, %d; want strictly fading, still visible", r0, r1, r2)
	}
	// The oldest blob is smaller: 0.22*1000*0.49 = 108 px against 220.
	if r, _, _ := rgb(img, px(150, 1000)+150, 150); r != 0 && r >= r2/8 {
		// px 150 → 150; +150 = 300: beyond the oldest radius but inside
		// the middle blob's? The middle blob is at 500 with radius 154:
		// 500-300 = 200 > 154, so nothing should be drawn there.
		t.Errorf("pixel 150 px from the oldest mark: red %d; want none (its radius shrank)", r)
	}
	// A fourth push drops the oldest.
	if n := len(a.Push(nil)); n != 3 {
		t.Errorf("trail length after 4 pushes = %d, want 3", n)
	}
}

func TestDragShrinksTowardMidpoint(t *testing.T) {
	cfg := Default()
	cfg.ExecutedHeat.TrailTurns = 2
	cfg.ExecutedHeat.TrailShrink = 0.5
	cfg.Labels.Enabled = false
	a := New(cfg)
	img := blank(1000, 100, BGRX)
	// One turn old drag from 0 to 1000: its endpoints move to 250 and 750.
	a.Draw(img, nil, [][]Mark{{}, {{Pos: true, Drag: true, X: 0, Y: 500, X2: 1000, Y2: 500}}})
	rEnd, _, _ := rgb(img, px(0, 1000), 50)
	rMoved, _, _ := rgb(img, px(250, 1000), 50)
	if rMoved <= rEnd {
		t.Errorf("red at the pulled-in endpoint %d <= at the original one %d; want the heat moved toward the midpoint", rMoved, rEnd)
	}
}

func TestLabels(t *testing.T) {
	img := blank(300, 100, BGRX)
	a := New(Default())
	cfg := a.Config()
	cfg.ExecutedHeat.Enabled = false
	a = New(cfg)
	a.Draw(img, nil, [][]Mark{{{Pos: true, X: 0, Y: 0, Label: "1 click 0,0"}, {Label: "2 type \"hi\""}}})
	// White glyph pixels appear in the label box next to the mark.
	white := 0
	for y := 10; y < 30; y++ {
		for x := 10; x < 110; x++ {
			if r, g, b := rgb(img, x, y); r > 200 && g > 200 && b > 200 {
				white++
			}
		}
	}
	if white < 20 {
		t.Errorf("%d white pixels in the label area; want text", white)
	}
}

func BenchmarkDraw(b *testing.B) {
	img := blank(1280, 720, BGRX)
	cfg := Default()
	cfg.ExecutedHeat.TrailTurns = 3
	a := New(cfg)
	a.Push([]Mark{{Pos: true, X: 100, Y: 100, Label: "1 click 100,100"}})
	a.Push([]Mark{{Pos: true, X: 300, Y: 300, Label: "1 click 300,300"}})
	trail := a.Push([]Mark{{Pos: true, X: 500, Y: 500, Label: "1 click 500,500"}, {Pos: true, Drag: true, X: 600, Y: 600, X2: 800, Y2: 700, Label: "2 drag"}})
	boxes := []Box{{100, 100, 400, 300}, {500, 500, 900, 900}}
	b.ReportAllocs()
	for b.Loop() {
		a.Draw(img, boxes, trail)
	}
}

// TestBandsMatchOnePass: drawing in parallel bands gives exactly the picture
// of one pass.
func TestBandsMatchOnePass(t *testing.T) {
	cfg := Default()
	cfg.ExecutedHeat.TrailTurns = 3
	a := New(cfg)
	a.Push([]Mark{{Pos: true, X: 100, Y: 900, Label: "1 click 100,900"}})
	a.Push([]Mark{{Pos: true, Drag: true, X: 200, Y: 100, X2: 800, Y2: 950, Label: "1 drag"}})
	trail := a.Push([]Mark{{Pos: true, X: 500, Y: 500, Label: "1 click 500,500"}, {Label: "2 type \"x\""}})
	boxes := []Box{{100, 100, 600, 700}}
	par := blank(1280, 720, BGRX)
	for i := range par.Pix {
		par.Pix[i] = byte(i * 7)
	}
	one := Image{Pix: append([]byte(nil), par.Pix...), W: par.W, H: par.H, Stride: par.Stride}
	a.Draw(par, boxes, trail)
	a.draw(one, boxes, trail)
	if !bytes.Equal(par.Pix, one.Pix) {
		t.Errorf("banded drawing differs from one pass")
	}
}
