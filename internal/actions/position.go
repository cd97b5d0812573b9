package actions

import (
	"context"
	"errors"
	"fmt"
	"image"
	"sort"
	"strings"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/gate"
)

// target is a resolved position: a screen pixel, or an element of the map.
type target struct {
	px *image.Point
	el string // element id (resolved against the map at execution)
}

// frame is the frame of a point's x,y: normalized of the screen or of a
// window, or pixels of a screenshot.
type frameSpec struct{ window, shot, image string }

// checkPoint validates the syntax of p (field names it) without the display.
func checkPoint(p *api.Point, field string, def frameSpec) error {
	if p.Element != "" {
		if p.X != nil || p.Y != nil || p.Window != "" || p.Shot != "" || p.Image != "" {
			return invalid(field, "%s: give an element or x,y (with window, shot or image), not both", field)
		}
		return nil
	}
	if p.X == nil || p.Y == nil {
		return invalid(field, "%s: give x and y, or an element id", field)
	}
	f := pointFrame(p, def)
	n := 0
	for _, s := range []string{f.window, f.shot, f.image} {
		if s != "" {
			n++
		}
	}
	if f.shot != "" && f.image != "" {
		return invalid(field, "%s: give shot (a screenshot id) or image (a screenshot size), not both", field)
	}
	if f.shot == "" && f.image == "" {
		if *p.X < 0 || *p.X > gate.NormMax || *p.Y < 0 || *p.Y > gate.NormMax {
			return invalid(field, "%s: x,y = %d,%d is out of range: normalized coordinates are 0..1000 (give shot or image for screenshot pixels)", field, *p.X, *p.Y)
		}
	}
	if f.image != "" {
		if _, _, err := parseSize(f.image); err != nil {
			return invalid(field+".image", "%s.image %q: %v", field, f.image, err)
		}
	}
	return nil
}

func pointFrame(p *api.Point, def frameSpec) frameSpec {
	if p.Window != "" || p.Shot != "" || p.Image != "" {
		return frameSpec{window: p.Window, shot: p.Shot, image: p.Image}
	}
	return def
}

func parseSize(s string) (int, int, error) {
	var w, h int
	if _, err := fmt.Sscanf(s, "%dx%d", &w, &h); err != nil || w <= 0 || h <= 0 || fmt.Sprintf("%dx%d", w, h) != s {
		return 0, 0, errors.New("want WxH, as 960x540")
	}
	return w, h, nil
}

// resolvePoint maps p to a screen pixel or an element id on d.
func (s *Service) resolvePoint(ctx context.Context, d *desktop, p *api.Point, field string, def frameSpec, m func() (*elements.Map, error)) (target, error) {
	if p.Element != "" {
		mp, err := m()
		if err != nil {
			return target{}, err
		}
		if _, ok := mp.Get(p.Element); !ok {
			return target{}, &Error{Code: api.CodeInvalid, Field: field + ".element", Suggestions: nearIDs(mp, p.Element),
				Message: fmt.Sprintf("%s.element: no element %q in the element map of %s: read the map again (GET /v1/elements); near matches: %s",
					field, p.Element, d.name, strings.Join(nearIDs(mp, p.Element), ", "))}
		}
		return target{el: p.Element}, nil
	}
	x, y := *p.X, *p.Y
	f := pointFrame(p, def)
	sw, sh := d.w, d.h
	screen := image.Rect(0, 0, sw, sh)
	region := screen
	if f.window != "" {
		r, err := s.windowRect(ctx, d.name, f.window)
		if err != nil {
			return target{}, invalid(field+".window", "%s.window: %v", field, err)
		}
		region = r
	}
	var pt image.Point
	switch {
	case f.shot != "":
		g, ok := s.shots.Lookup(f.shot)
		if !ok {
			return target{}, invalid(field+".shot", "%s.shot: no screenshot %q: acu keeps the last %d; take a new one", field, f.shot, maxShots)
		}
		if g.Display != d.name {
			return target{}, invalid(field+".shot", "%s.shot: screenshot %q is of display %s, not %s", field, f.shot, g.Display, d.name)
		}
		if x < 0 || y < 0 || x >= g.W || y >= g.H {
			return target{}, invalid(field, "%s: x,y = %d,%d is outside screenshot %s (%dx%d pixels)", field, x, y, f.shot, g.W, g.H)
		}
		pt = g.ToScreen(x, y)
	case f.image != "":
		w, h, _ := parseSize(f.image)
		if x < 0 || y < 0 || x >= w || y >= h {
			return target{}, invalid(field, "%s: x,y = %d,%d is outside the %s image", field, x, y, f.image)
		}
		pt = ShotGeometry{Region: region, W: w, H: h}.ToScreen(x, y)
	default:
		a := gate.Area{X: region.Min.X, Y: region.Min.Y, W: region.Dx(), H: region.Dy()}
		pt.X, pt.Y = a.ToPixel(x, y)
	}
	if !pt.In(screen) {
		return target{}, invalid(field, "%s: x,y maps to pixel %d,%d, outside the %dx%d screen", field, pt.X, pt.Y, sw, sh)
	}
	return target{px: &pt}, nil
}

// windowRect resolves a window name (title substring, window:<title>,
// window:0x…) to its rectangle.
func (s *Service) windowRect(ctx context.Context, dpy, name string) (image.Rectangle, error) {
	spec := name
	if !strings.HasPrefix(spec, "window:") {
		spec = "window:" + spec
	}
	t, err := capture.ParseTarget(spec)
	if err != nil {
		return image.Rectangle{}, err
	}
	res, err := s.opts.Hub.Resolve(ctx, dpy, t)
	if err != nil {
		return image.Rectangle{}, err
	}
	return res.Rect, nil
}

// nearIDs lists up to five ids of m closest to id.
func nearIDs(m *elements.Map, id string) []string {
	type cand struct {
		id string
		d  int
	}
	var cs []cand
	for _, e := range m.Elements {
		d := editDistance(strings.ToLower(id), strings.ToLower(e.ID))
		if strings.Contains(e.ID, id) || strings.Contains(id, e.ID) {
			d = min(d, 1)
		}
		cs = append(cs, cand{e.ID, d})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for _, c := range cs {
		if len(out) == 5 || c.d > max(3, len(id)/2) {
			break
		}
		out = append(out, c.id)
	}
	return out
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
