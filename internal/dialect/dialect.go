// Package dialect runs computer-use models' actions on acu's action model.
// The vendor packages below it (anthropic, openai, uitars) translate one
// action item of a vendor into a Plan of acu actions (api.ActRequest) and
// the Outcome back into the vendor's result item; this package holds what
// they share: the Plan, the Desktop that runs it and the screen size
// offered to a model. It does no input itself and knows no vendor.
package dialect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/acu-dev/acu/internal/api"
)

// Desktop runs plans: the action service in the daemon, or *api.Client
// through an adapter.
type Desktop interface {
	Act(ctx context.Context, req api.ActRequest) (api.ActResponse, error)
	Shot(ctx context.Context, display string, o api.ShotOptions) (*api.ActShot, error)
	// Pointer returns where the pointer is, in screen pixels.
	Pointer(ctx context.Context, display string) (x, y int, err error)
	// Settle waits until the screen has been still for quiet, at most
	// timeout.
	Settle(ctx context.Context, display string, quiet, timeout time.Duration) (api.SettleResult, error)
}

// Plan is what one vendor action item asks for.
type Plan struct {
	// Act is the input to run (nil: none). Its settle replaces the
	// vendors' fixed sleeps.
	Act *api.ActRequest
	// Shot is the screenshot to take after Act (or alone); nil takes none.
	Shot *api.ShotOptions
	// Pointer asks where the pointer is (Anthropic's cursor_position).
	Pointer bool
	// Wait is a wait the model asked for: acu waits until the screen has
	// been still for WaitQuiet, at most Wait, and says which ended it.
	Wait      time.Duration
	WaitQuiet time.Duration
	// Status is set by actions that end the loop instead of acting
	// (UI-TARS finished and call_user); Content is their text.
	Status  string
	Content string
}

// Plan statuses that end a loop.
const (
	StatusFinished = "finished"  // the model says the task is done
	StatusCallUser = "call_user" // the model asks for a human
)

// Outcome is what running a Plan gave.
type Outcome struct {
	Act     *api.ActResponse
	Shot    *api.ActShot
	Pointer [2]int
	Waited  *api.SettleResult
	// Err is the first failure: a refused or malformed request, or the
	// failed action's error. The vendor packages turn it into the vendor's
	// error result.
	Err error
	Ms  float64
}

// DefaultWaitQuiet is how long the screen must be still to end a model's
// wait early.
const DefaultWaitQuiet = time.Second

// Run runs p on display.
func Run(ctx context.Context, d Desktop, display string, p Plan) Outcome {
	start := time.Now()
	var o Outcome
	finish := func() Outcome {
		o.Ms = float64(time.Since(start).Microseconds()) / 1000
		return o
	}
	if p.Act != nil {
		req := *p.Act
		if req.Display == "" {
			req.Display = display
		}
		resp, err := d.Act(ctx, req)
		if err != nil {
			o.Err = err
			return finish()
		}
		o.Act = &resp
		if !resp.OK {
			o.Err = failed(resp)
		}
	}
	if p.Wait > 0 && o.Err == nil {
		quiet := p.WaitQuiet
		if quiet <= 0 {
			quiet = DefaultWaitQuiet
		}
		quiet = min(quiet, p.Wait)
		res, err := d.Settle(ctx, display, quiet, p.Wait)
		if err != nil {
			o.Err = fmt.Errorf("wait: %w", err)
			return finish()
		}
		o.Waited = &res
	}
	if p.Pointer && o.Err == nil {
		x, y, err := d.Pointer(ctx, display)
		if err != nil {
			o.Err = fmt.Errorf("read the pointer position: %w", err)
			return finish()
		}
		o.Pointer = [2]int{x, y}
	}
	if p.Shot != nil {
		shot, err := d.Shot(ctx, display, *p.Shot)
		if err != nil {
			if o.Err == nil {
				o.Err = fmt.Errorf("screenshot: %w", err)
			}
			return finish()
		}
		o.Shot = shot
	}
	return finish()
}

// failed returns the error of the first failed action of resp.
func failed(resp api.ActResponse) error {
	for _, r := range resp.Results {
		if r.Error != nil {
			return fmt.Errorf("%s (action %d, %s): %s", r.Error.Code, r.Index, r.Kind, r.Error.Message)
		}
	}
	return errors.New("the actions did not complete")
}

// Size is a width and height in pixels.
type Size struct{ W, H int }

func (s Size) String() string { return fmt.Sprintf("%dx%d", s.W, s.H) }

// ParseSize parses "WxH".
func ParseSize(v string) (Size, error) {
	var s Size
	if _, err := fmt.Sscanf(v, "%dx%d", &s.W, &s.H); err != nil || s.W <= 0 || s.H <= 0 || s.String() != v {
		return Size{}, fmt.Errorf("size %q: want WxH, as 1280x800", v)
	}
	return s, nil
}

// Fit returns the size a screen of screen is offered to a model at: the
// whole screen scaled down, aspect kept, to fit within limit (no scaling
// up). Its height is the one acu's screenshots get at that width
// (api.ShotOptions.MaxWidth), so the picture is exactly this size.
func Fit(screen, limit Size) Size {
	if screen.W <= 0 || screen.H <= 0 {
		return limit
	}
	scale := min(1, float64(limit.W)/float64(screen.W), float64(limit.H)/float64(screen.H))
	w := max(1, int(math.Floor(float64(screen.W)*scale+1e-9)))
	if w >= screen.W {
		return screen
	}
	return Size{W: w, H: max(1, (screen.H*w+screen.W/2)/screen.W)}
}

// ToScreen maps pixel (x, y) of a picture of size img of the screen to the
// screen pixel at its centre, as acu's action service does for image
// positions.
func ToScreen(x, y int, img, screen Size) (int, int) {
	sx := (2*x + 1) * screen.W / (2 * img.W)
	sy := (2*y + 1) * screen.H / (2 * img.H)
	return min(sx, screen.W-1), min(sy, screen.H-1)
}

// FromScreen maps screen pixel (x, y) to the pixel of a picture of size img
// that shows its centre.
func FromScreen(x, y int, img, screen Size) (int, int) {
	return min((2*x+1)*img.W/(2*screen.W), img.W-1), min((2*y+1)*img.H/(2*screen.H), img.H-1)
}

// ImagePoint returns a point at pixel (x, y) of a picture of size img of
// the screen.
func ImagePoint(x, y int, img Size) *api.Point {
	return &api.Point{X: &x, Y: &y, Image: img.String()}
}

// ShotOptions returns the options of a screenshot of the whole screen at
// size img.
func ShotOptions(img Size, format string, quality int) *api.ShotOptions {
	return &api.ShotOptions{Format: format, MaxWidth: img.W, Quality: quality}
}

// InvalidError is a malformed action item: the vendor packages return it
// from their translations, and it reads as the model's mistake.
type InvalidError struct {
	Field   string
	Message string
}

func (e *InvalidError) Error() string { return e.Message }

// Invalid returns an *InvalidError naming field.
func Invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// WaitText says how a model's wait ended: at its full length, or early
// because the screen was still.
func WaitText(p Plan, w api.SettleResult) string {
	if w.Settled && w.Waited < p.Wait.Seconds()-0.05 {
		quiet := p.WaitQuiet
		if quiet <= 0 {
			quiet = DefaultWaitQuiet
		}
		return fmt.Sprintf("Waited %.1f s of %.1f s: ended early, the screen had been still for %.1f s.", w.Waited, p.Wait.Seconds(), min(quiet, p.Wait).Seconds())
	}
	return fmt.Sprintf("Waited %.1f s.", w.Waited)
}
