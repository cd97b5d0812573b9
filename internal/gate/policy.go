package gate

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
)

// Policy says where acu may act. The gate applies it to every effect, from
// every surface and engine, in one place (docs/security.md).
type Policy struct {
	// Disabled turns every effect off (ACU_ACT_ENABLED=false): input,
	// window operations, launches, clipboard writes and take-over input.
	Disabled bool
	// Displays limits effects to these displays; empty allows all
	// (ACU_ACT_DISPLAYS).
	Displays []string
	// Deny refuses effects landing in a window whose title, class or
	// instance (or, for elements, application) matches one (ACU_ACT_DENY):
	// input, window operations and take-over input alike.
	Deny []*regexp.Regexp
	// PauseOnUser refuses effects while the user makes input on the
	// display (ACU_ACT_PAUSE_ON_INPUT); take-over input is the user's own
	// and is exempt.
	PauseOnUser bool
	// Quiet is how long the user must have been still before acting
	// resumes (ACU_ACT_USER_QUIET); default DefaultQuiet.
	Quiet time.Duration
}

// DefaultQuiet is Policy.Quiet's default.
const DefaultQuiet = 3 * time.Second

// Refused is an effect the policy does not allow: acting off
// (api.CodeActDisabled), a display not allowed (CodeDisplayDenied), a
// window on the deny-list (CodeWindowDenied) or the user active
// (CodeUserActive). Surfaces map Code to their status.
type Refused struct {
	Code       string
	Field      string
	Message    string
	ActiveFor  time.Duration // CodeUserActive: how long the user has been active
	RetryAfter time.Duration // CodeUserActive: when the quiet period ends if the user stays still
}

func (e *Refused) Error() string { return e.Message }

// AllowDisplay reports whether the policy lets anything act on dpy.
func (p Policy) AllowDisplay(dpy string) error {
	if p.Disabled {
		return &Refused{Code: api.CodeActDisabled, Message: "acting is turned off in this daemon (ACU_ACT_ENABLED=false): screenshots, waits and the element map still work"}
	}
	if len(p.Displays) > 0 && !slices.Contains(p.Displays, dpy) {
		return &Refused{Code: api.CodeDisplayDenied, Field: "display",
			Message: fmt.Sprintf("acting on display %s is not allowed: ACU_ACT_DISPLAYS allows %v", dpy, p.Displays)}
	}
	return nil
}

// denied returns the deny-list entry matching any of names, or "".
func (p Policy) denied(names ...string) string {
	for _, re := range p.Deny {
		for _, n := range names {
			if n != "" && re.MatchString(n) {
				return re.String()
			}
		}
	}
	return ""
}

// CheckWindow refuses an effect (what) landing in w when the deny-list
// matches its title, class or instance; nil w (the root) is allowed.
func (p Policy) CheckWindow(w *display.Window, what string) error {
	if w == nil {
		return nil
	}
	if re := p.denied(w.Title, w.Class, w.Instance); re != "" {
		return &Refused{Code: api.CodeWindowDenied,
			Message: fmt.Sprintf("%s lands in window %q (class %s), which the deny-list refuses (ACU_ACT_DENY entry %q): acu does not act in it", what, w.Title, w.Class, re)}
	}
	return nil
}

// CheckElement refuses an effect on element id of app's window when the
// deny-list matches the application or the window's name.
func (p Policy) CheckElement(id, app, window string) error {
	if re := p.denied(app, window); re != "" {
		return &Refused{Code: api.CodeWindowDenied, Message: fmt.Sprintf("element %s is in %q of %s, which the deny-list refuses (ACU_ACT_DENY entry %q)", id, window, app, re)}
	}
	return nil
}

// watcher is what user-input detection needs: *input.Watch.
type watcher interface {
	Mark(ctx context.Context) error
	Foreign(ctx context.Context) (bool, string, error)
	SetOwnButtons(mask uint16)
}

// userCheck is the user-first check of one display: X11's userState
// (XInput2's clock, or the watch), or on Wayland the compositor's
// idle-notify watch once one is plugged in (wlUser).
type userCheck interface {
	// check reports the user active (a CodeUserActive refusal) when
	// input that is not acu's was seen within quiet.
	check(ctx context.Context, quiet time.Duration) error
	// checkBegin is check, then begin when it passes (an effect's
	// start): on Wayland one round trip to the compositor does both.
	checkBegin(ctx context.Context, quiet time.Duration) error
	// begin and end bracket acu's own input; ownButtons are the buttons
	// acu leaves held (an X key-button mask).
	begin()
	end(ctx context.Context, ownButtons uint16) error
	close()
}

// userState follows the user's input on one display: when it started and
// when it was last seen. With a clock (XInput2), the server's record of
// the user's input decides; without, the watch (pointer and idle time).
type userState struct {
	w     watcher
	clock *input.UserClock
	c     *display.Conn
	now   func() time.Time

	mu     sync.Mutex
	since  time.Time // start of the current spell of user input (zero: none)
	last   time.Time // the user's last input seen
	detail string
}

// check reports the user active (a CodeUserActive refusal) when input
// that is not acu's was seen within quiet. Seen input is marked so only
// new input counts next time.
func (u *userState) check(ctx context.Context, quiet time.Duration) error {
	if u.clock != nil {
		return u.checkClock(ctx, quiet)
	}
	foreign, detail, err := u.w.Foreign(ctx)
	if err != nil {
		return err
	}
	now := u.now()
	u.mu.Lock()
	defer u.mu.Unlock()
	if foreign {
		if u.since.IsZero() || now.Sub(u.last) >= quiet {
			u.since = now
		}
		u.last, u.detail = now, detail
		if err := u.w.Mark(ctx); err != nil {
			return err
		}
	}
	if u.since.IsZero() {
		return nil
	}
	if still := now.Sub(u.last); still < quiet {
		return &Refused{Code: api.CodeUserActive, ActiveFor: u.last.Sub(u.since) + still, RetryAfter: quiet - still,
			Message: fmt.Sprintf("the user is using this display (%s): acu does not fight the human for the pointer; retry after the user has been still for %s",
				u.detail, quiet)}
	}
	u.since = time.Time{}
	return nil
}

// checkClock is check by the server's clock: the user is active while a
// take-over holds the display, while the user holds a button or key, and
// for quiet after the user's last input as the server stamped it.
func (u *userState) checkClock(ctx context.Context, quiet time.Duration) error {
	if h, held, err := input.ReadHold(ctx, u.c, u.now()); err != nil {
		return err
	} else if held {
		return &Refused{Code: api.CodeUserActive, ActiveFor: u.now().Sub(h.Since), RetryAfter: quiet,
			Message: fmt.Sprintf("the user has taken this display over (%s): acu waits until the take-over ends", input.HoldDetail(h))}
	}
	in, err := u.clock.Read(ctx)
	if err != nil || !in.Seen {
		return err
	}
	if !in.Held && in.Age >= quiet {
		return nil
	}
	retry := quiet - in.Age
	detail := fmt.Sprintf("%s %s ago", in.Detail, in.Age.Round(time.Millisecond))
	if in.Held {
		retry, detail = quiet, "a button or key held down by the user"
	}
	return &Refused{Code: api.CodeUserActive, ActiveFor: in.Spell + in.Age, RetryAfter: retry,
		Message: fmt.Sprintf("the user is using this display (%s): acu does not fight the human for the pointer; retry after the user has been still for %s",
			detail, quiet)}
}

func (u *userState) checkBegin(ctx context.Context, quiet time.Duration) error {
	if err := u.check(ctx, quiet); err != nil {
		return err
	}
	u.begin()
	return nil
}

// begin and end bracket acu's own input, so the clock tells it from the
// user's; without a clock, mark records it with the watch.
func (u *userState) begin() {
	if u.clock != nil {
		u.clock.Begin()
	}
}

func (u *userState) end(ctx context.Context, ownButtons uint16) error {
	if u.clock != nil {
		u.clock.End()
		return nil
	}
	return u.mark(ctx, ownButtons)
}

func (u *userState) close() {
	if u.clock != nil {
		u.clock.Close()
	}
}

// mark records acu's own input as done, with the buttons it holds down.
func (u *userState) mark(ctx context.Context, ownButtons uint16) error {
	u.w.SetOwnButtons(ownButtons)
	return u.w.Mark(ctx)
}
