package annotate

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Color is a straight-alpha RGBA colour written as a CSS string in
// UI_CONFIG: "rgba(255,140,0,0.55)", "rgb(0,120,255)", "#ff8c00" or
// "#ff8c0080".
type Color struct{ R, G, B, A uint8 }

// ParseColor parses a CSS colour of the forms Color accepts.
func ParseColor(s string) (Color, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.HasPrefix(t, "#"):
		h := t[1:]
		if len(h) == 3 || len(h) == 4 {
			var b strings.Builder
			for _, c := range h {
				b.WriteRune(c)
				b.WriteRune(c)
			}
			h = b.String()
		}
		if len(h) != 6 && len(h) != 8 {
			return Color{}, fmt.Errorf("colour %q: want #rgb, #rrggbb or #rrggbbaa", s)
		}
		v, err := strconv.ParseUint(h, 16, 32)
		if err != nil {
			return Color{}, fmt.Errorf("colour %q: bad hex digits", s)
		}
		if len(h) == 6 {
			return Color{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}, nil
		}
		return Color{uint8(v >> 24), uint8(v >> 16), uint8(v >> 8), uint8(v)}, nil
	case strings.HasPrefix(t, "rgba(") || strings.HasPrefix(t, "rgb("):
		open, end := strings.IndexByte(t, '('), strings.LastIndexByte(t, ')')
		if end < open {
			return Color{}, fmt.Errorf("colour %q: missing ')'", s)
		}
		parts := strings.FieldsFunc(t[open+1:end], func(r rune) bool { return r == ',' || r == ' ' || r == '/' })
		if len(parts) != 3 && len(parts) != 4 {
			return Color{}, fmt.Errorf("colour %q: want 3 or 4 components", s)
		}
		var c Color
		for i, p := range parts[:3] {
			f, err := strconv.ParseFloat(p, 64)
			if err != nil || math.IsNaN(f) {
				return Color{}, fmt.Errorf("colour %q: component %q is not a number", s, p)
			}
			v := uint8(math.Round(min(max(f, 0), 255)))
			switch i {
			case 0:
				c.R = v
			case 1:
				c.G = v
			case 2:
				c.B = v
			}
		}
		c.A = 255
		if len(parts) == 4 {
			p := parts[3]
			pct := strings.HasSuffix(p, "%")
			f, err := strconv.ParseFloat(strings.TrimSuffix(p, "%"), 64)
			if err != nil || math.IsNaN(f) {
				return Color{}, fmt.Errorf("colour %q: alpha %q is not a number", s, p)
			}
			if pct {
				f /= 100
			}
			c.A = uint8(math.Round(min(max(f, 0), 1) * 255))
		}
		return c, nil
	}
	return Color{}, fmt.Errorf("colour %q: want rgba(r,g,b,a), rgb(r,g,b) or #rrggbb", s)
}

// String formats c as a CSS rgba() string, the form UI_CONFIG uses.
func (c Color) String() string {
	return fmt.Sprintf("rgba(%d,%d,%d,%s)", c.R, c.G, c.B, strconv.FormatFloat(math.Round(float64(c.A)/255*1000)/1000, 'f', -1, 64))
}

// MarshalJSON writes the CSS string.
func (c Color) MarshalJSON() ([]byte, error) { return json.Marshal(c.String()) }

// UnmarshalJSON reads a CSS string.
func (c *Color) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("colour: want a CSS string such as \"rgba(255,140,0,0.5)\"")
	}
	v, err := ParseColor(s)
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// Stop is one radial-gradient stop: [pos, "rgba(...)"] in UI_CONFIG, pos in
// 0..1 from the centre to the radius.
type Stop struct {
	Pos   float64
	Color Color
}

// MarshalJSON writes [pos, colour].
func (s Stop) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{s.Pos, s.Color.String()})
}

// UnmarshalJSON reads [pos, colour].
func (s *Stop) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) != 2 {
		return fmt.Errorf("gradient stop: want [pos, \"rgba(...)\"], got %s", b)
	}
	if err := json.Unmarshal(raw[0], &s.Pos); err != nil {
		return fmt.Errorf("gradient stop position: want a number 0..1, got %s", raw[0])
	}
	return s.Color.UnmarshalJSON(raw[1])
}

// Config is UI_CONFIG: the overlays burned into every screenshot the model
// sees. The keys are the seed panel's.
type Config struct {
	ExecutedHeat HeatConfig  `json:"executed_heat"`
	BBoxHeat     BBoxConfig  `json:"bbox_heat"`
	Labels       LabelConfig `json:"labels"`
}

// HeatConfig is the orange action heatmap.
type HeatConfig struct {
	Enabled bool `json:"enabled"`
	// RadiusScale is the blob radius relative to max(width, height).
	RadiusScale float64 `json:"radius_scale"`
	Stops       []Stop  `json:"stops"`
	// TrailTurns is how many turns of heat are drawn: 1 is this turn only,
	// N > 1 adds the N-1 previous turns with fading alpha.
	TrailTurns int `json:"trail_turns"`
	// TrailShrink (0..1] scales an older turn's radius by TrailShrink^age
	// and pulls its drag endpoints toward their midpoint; 1 disables it.
	TrailShrink float64 `json:"trail_shrink"`
}

// BBoxConfig is the blue heat of the model's regions of interest.
type BBoxConfig struct {
	Enabled     bool    `json:"enabled"`
	Border      Color   `json:"border"`
	BorderWidth float64 `json:"border_width"`
	FillStops   []Stop  `json:"fill_stops"`
}

// LabelConfig is the action labels ("1 click 500,500"). acu's addition:
// the seed panel always draws them.
type LabelConfig struct {
	Enabled    bool  `json:"enabled"`
	Color      Color `json:"color"`
	Background Color `json:"background"`
}

// Default returns the overlays of the program the seed describes: orange
// heat with radius_scale 0.22 and a one-turn trail, blue bbox heat with a
// border, labels on.
func Default() Config {
	orange := func(a uint8) Color { return Color{255, 140, 0, a} }
	blue := func(a uint8) Color { return Color{0, 120, 255, a} }
	return Config{
		ExecutedHeat: HeatConfig{
			Enabled: true, RadiusScale: 0.22, TrailTurns: 1, TrailShrink: 0.85,
			Stops: []Stop{{0, orange(191)}, {0.12, orange(153)}, {0.45, orange(64)}, {1, orange(0)}},
		},
		BBoxHeat: BBoxConfig{
			Enabled: true, Border: blue(230), BorderWidth: 2,
			FillStops: []Stop{{0, blue(115)}, {0.6, blue(51)}, {1, blue(20)}},
		},
		Labels: LabelConfig{Enabled: true, Color: Color{255, 255, 255, 255}, Background: Color{0, 0, 0, 166}},
	}
}

// ParseConfig reads UI_CONFIG JSON over the defaults: keys it omits keep
// their default. An empty string gives the defaults.
func ParseConfig(s string) (Config, error) {
	c := Default()
	if strings.TrimSpace(s) == "" {
		return c, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("UI_CONFIG: %w", err)
	}
	return c, c.Validate()
}

// Validate checks ranges.
func (c Config) Validate() error {
	h := c.ExecutedHeat
	switch {
	case h.RadiusScale < 0 || h.RadiusScale > 2 || math.IsNaN(h.RadiusScale):
		return fmt.Errorf("UI_CONFIG executed_heat.radius_scale %g: want 0..2", h.RadiusScale)
	case h.TrailTurns < 1 || h.TrailTurns > 32:
		return fmt.Errorf("UI_CONFIG executed_heat.trail_turns %d: want 1..32", h.TrailTurns)
	case !(h.TrailShrink > 0 && h.TrailShrink <= 1):
		return fmt.Errorf("UI_CONFIG executed_heat.trail_shrink %g: want a number in (0, 1]", h.TrailShrink)
	case c.BBoxHeat.BorderWidth < 0 || c.BBoxHeat.BorderWidth > 64:
		return fmt.Errorf("UI_CONFIG bbox_heat.border_width %g: want 0..64", c.BBoxHeat.BorderWidth)
	}
	for _, st := range [][]Stop{h.Stops, c.BBoxHeat.FillStops} {
		if err := checkStops(st); err != nil {
			return err
		}
	}
	return nil
}

func checkStops(st []Stop) error {
	prev := 0.0
	for i, s := range st {
		if s.Pos < 0 || s.Pos > 1 || math.IsNaN(s.Pos) || (i > 0 && s.Pos < prev) {
			return fmt.Errorf("UI_CONFIG gradient stop %d at %g: positions must rise within 0..1", i, s.Pos)
		}
		prev = s.Pos
	}
	return nil
}
