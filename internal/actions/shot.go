package actions

import (
	"context"
	"fmt"
	"image"
	"math"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/annotate"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/smartwait"
)

// checkShot validates screenshot options; field is their name.
func checkShot(o api.ShotOptions, field string) error {
	switch o.Format {
	case "", "jpeg", "jpg", "png":
	default:
		return invalid(field+".format", "%s.format %q: use jpeg or png", field, o.Format)
	}
	if o.MaxWidth < 0 || o.MaxWidth > 16384 {
		return invalid(field+".max_width", "%s.max_width %d: use 16 to 16384, or 0 for the default", field, o.MaxWidth)
	}
	if o.MaxWidth > 0 && o.MaxWidth < 16 {
		return invalid(field+".max_width", "%s.max_width %d: use 16 to 16384, or 0 for the default", field, o.MaxWidth)
	}
	if o.Scale < 0 || o.Scale > 1 || math.IsNaN(o.Scale) {
		return invalid(field+".scale", "%s.scale %v: use a factor above 0 and at most 1", field, o.Scale)
	}
	if o.Scale > 0 && o.MaxWidth > 0 {
		return invalid(field+".scale", "%s: give scale or max_width, not both", field)
	}
	if o.Quality < 0 || o.Quality > 100 {
		return invalid(field+".quality", "%s.quality %d: use 1 to 100", field, o.Quality)
	}
	if o.Region != "" {
		if _, err := capture.ParseTarget(o.Region); err != nil {
			return invalid(field+".region", "%s.region: %v", field, err)
		}
	}
	return nil
}

// Shot takes a screenshot of dpy as o asks (GET /v1/screenshot, the MCP
// screenshot tool), registering its geometry under the id it returns.
func (s *Service) Shot(ctx context.Context, dpy string, o api.ShotOptions) (*api.ActShot, error) {
	dpy = s.display(dpy)
	if dpy == "" {
		return nil, invalid("display", "display: no display given and the daemon has no default (DISPLAY): name one, as :99")
	}
	if err := checkShot(o, "screenshot"); err != nil {
		return nil, err
	}
	var m *elements.Map
	if o.Labels {
		d, err := s.desktop(ctx, dpy)
		if err != nil {
			return nil, err
		}
		d.mu.Lock()
		m, err = d.extract(ctx)
		d.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return s.shoot(ctx, dpy, o, m)
}

// shoot captures, scales, labels (when m is set) and encodes a screenshot.
func (s *Service) shoot(ctx context.Context, dpy string, o api.ShotOptions, m *elements.Map) (*api.ActShot, error) {
	region := o.Region
	if region == "" {
		region = "screen"
	}
	t, err := capture.ParseTarget(region)
	if err != nil {
		return nil, invalid("screenshot.region", "screenshot.region: %v", err)
	}
	res, err := s.opts.Hub.Resolve(ctx, dpy, t)
	if err != nil {
		return nil, err
	}
	f, err := s.opts.Hub.Capture(ctx, dpy, t)
	if err != nil {
		return nil, err
	}
	defer f.Release() // encoded below: the hub may reuse its buffer after
	png := o.Format == "png"
	w, h := f.W, f.H
	switch {
	case o.Scale > 0:
		w, h = max(1, int(math.Round(float64(f.W)*o.Scale))), max(1, int(math.Round(float64(f.H)*o.Scale)))
	case o.MaxWidth > 0 || !png:
		mw := o.MaxWidth
		if mw == 0 {
			mw = s.opts.FrameMaxDim
		}
		if f.W > mw {
			w, h = mw, max(1, (f.H*mw+f.W/2)/f.W)
		}
	}
	if w > f.W || h > f.H {
		w, h = f.W, f.H
	}
	pix, stride := f.Pix, f.Stride
	if w != f.W || h != f.H {
		pix, stride = make([]byte, w*h*4), w*4
		frame.Resize(pix, w, h, f.Pix, f.W, f.H, f.Stride, f.Resample)
	} else if m != nil { // never draw on the shared frame
		pix, stride = make([]byte, w*h*4), w*4
		for y := range h {
			copy(pix[y*stride:y*stride+w*4], f.Pix[y*f.Stride:y*f.Stride+w*4])
		}
	}
	origin := res.Rect.Min
	rect := image.Rect(origin.X, origin.Y, origin.X+f.W, origin.Y+f.H)
	geo := ShotGeometry{Display: dpy, Region: rect, W: w, H: h, At: f.At}
	if m != nil {
		m.DrawMarks(annotate.Image{Pix: pix, W: w, H: h, Stride: stride, Format: annotate.BGRX}, geo.Region)
	}
	out := &api.ActShot{Width: w, Height: h, Region: [4]int{rect.Min.X, rect.Min.Y, rect.Dx(), rect.Dy()}}
	if out.Screen[0], out.Screen[1], err = s.opts.Hub.ScreenSize(ctx, dpy); err != nil {
		return nil, err
	}
	if png {
		out.Format = "png"
		out.Data, err = frame.EncodePNG(pix, w, h, stride)
	} else {
		q := o.Quality
		if q == 0 {
			q = s.opts.FrameQuality
		}
		out.Format = "jpeg"
		out.Data, err = frame.EncodeJPEG(nil, pix, w, h, stride, q)
	}
	if err != nil {
		return nil, fmt.Errorf("encode screenshot of %s on %s: %w", region, dpy, err)
	}
	out.ID = s.shots.Remember(geo)
	return out, nil
}

// Elements reads the element map of q.Display (only the elements inside
// q.Window when given), with a labelled screenshot when q.Labels is set.
func (s *Service) Elements(ctx context.Context, q api.ElementsQuery) (api.ElementMap, error) {
	dpy := s.display(q.Display)
	if dpy == "" {
		return api.ElementMap{}, invalid("display", "display: no display given and the daemon has no default (DISPLAY): name one, as :99")
	}
	o := api.ShotOptions{}
	if q.Shot != nil {
		o = *q.Shot
	}
	if err := checkShot(o, "screenshot"); err != nil {
		return api.ElementMap{}, err
	}
	d, err := s.desktop(ctx, dpy)
	if err != nil {
		return api.ElementMap{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	m, err := d.extract(ctx)
	if err != nil {
		return api.ElementMap{}, err
	}
	view := m
	if q.Window != "" {
		r, err := s.windowRect(ctx, dpy, q.Window)
		if err != nil {
			return api.ElementMap{}, invalid("window", "window: %v", err)
		}
		view = &elements.Map{Iteration: m.Iteration, Screen: m.Screen}
		for _, e := range m.Elements {
			if e.Center().In(r) {
				view.Elements = append(view.Elements, e)
			}
		}
		if o.Region == "" {
			o.Region = "window:" + strings.TrimPrefix(q.Window, "window:")
		}
	}
	out := api.ElementMap{Display: dpy, Iteration: m.Iteration, Screen: [2]int{m.Screen.Dx(), m.Screen.Dy()},
		Elements: make([]api.Element, 0, len(view.Elements)), Text: view.Text(), Dropped: m.Dropped, Ms: ms(m.Timings.Total)}
	if m.TreeErr != nil {
		out.TreeError = m.TreeErr.Error()
	}
	for i := range view.Elements {
		out.Elements = append(out.Elements, ToAPIElement(&view.Elements[i]))
	}
	if q.Labels {
		o.Labels = true
		if out.Screenshot, err = s.shoot(ctx, dpy, o, view); err != nil {
			return api.ElementMap{}, err
		}
	}
	return out, nil
}

// Pointer returns where the pointer is on dpy, in screen pixels.
func (s *Service) Pointer(ctx context.Context, dpy string) (image.Point, error) {
	dpy = s.display(dpy)
	if dpy == "" {
		return image.Point{}, invalid("display", "display: no display given and the daemon has no default (DISPLAY): name one, as :99")
	}
	d, err := s.desktop(ctx, dpy)
	if err != nil {
		return image.Point{}, err
	}
	if d.conn == nil { // Wayland: where the gate's device last put it
		p, err := s.opts.Gate.Pointer(ctx, dpy)
		if err != nil {
			return image.Point{}, err
		}
		return image.Pt(p.X, p.Y), nil
	}
	p, err := d.conn.QueryPointer(ctx)
	if err != nil {
		return image.Point{}, err
	}
	return image.Pt(p.X, p.Y), nil
}

// ScreenSize returns dpy's screen size in pixels.
func (s *Service) ScreenSize(ctx context.Context, dpy string) (int, int, error) {
	dpy = s.display(dpy)
	if dpy == "" {
		return 0, 0, invalid("display", "display: no display given and the daemon has no default (DISPLAY): name one, as :99")
	}
	if err := s.opts.Gate.Policy().AllowDisplay(dpy); err != nil {
		return 0, 0, fromGate(err)
	}
	return s.opts.Hub.ScreenSize(ctx, dpy)
}

// Settle waits until dpy's screen has been still for quiet, at most
// timeout: a model's wait that ends early once nothing moves.
func (s *Service) Settle(ctx context.Context, dpy string, quiet, timeout time.Duration) (api.SettleResult, error) {
	if s.opts.Settle == nil {
		return api.SettleResult{}, &Error{Code: api.CodeUnavailable, Message: "settle is not available in this daemon"}
	}
	if timeout < time.Second { // below the settle engine's least timeout: a plain pause
		start := time.Now()
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return api.SettleResult{}, ctx.Err()
		case <-t.C:
		}
		return api.SettleResult{Waited: time.Since(start).Seconds()}, nil
	}
	res, err := s.opts.Settle.Settle(ctx, smartwait.SettleSpec{Display: s.display(dpy), Quiet: quiet, Timeout: timeout})
	if err != nil {
		return api.SettleResult{}, err
	}
	return api.SettleResult{RunID: res.RunID, Settled: res.Settled, Waited: res.Waited.Seconds(), Changes: res.Changes, FrameHash: res.FrameHash}, nil
}
