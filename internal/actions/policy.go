package actions

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/display"
)

// Policy says where acting is allowed.
type Policy struct {
	// Disabled turns acting off (ACU_ACT_ENABLED=false).
	Disabled bool
	// Displays limits acting to these displays; empty allows all
	// (ACU_ACT_DISPLAYS).
	Displays []string
	// Deny refuses actions landing in a window whose title, class or
	// instance (or, for elements, application) matches one (ACU_ACT_DENY).
	Deny []*regexp.Regexp
	// PauseOnUser refuses actions while the user makes input on the display
	// (ACU_ACT_PAUSE_ON_INPUT).
	PauseOnUser bool
	// Quiet is how long the user must have been still before acting
	// resumes (ACU_ACT_USER_QUIET); default DefaultQuiet.
	Quiet time.Duration
}

// DefaultQuiet is Policy.Quiet's default.
const DefaultQuiet = 3 * time.Second

func (p Policy) allowDisplay(dpy string) error {
	if p.Disabled {
		return &Error{Code: api.CodeActDisabled, Message: "acting is turned off in this daemon (ACU_ACT_ENABLED=false): screenshots, waits and the element map still work"}
	}
	if len(p.Displays) > 0 && !slices.Contains(p.Displays, dpy) {
		return &Error{Code: api.CodeDisplayDenied, Field: "display",
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

func (p Policy) checkWindow(w *display.Window, what string) error {
	if w == nil {
		return nil
	}
	if re := p.denied(w.Title, w.Class, w.Instance); re != "" {
		return &Error{Code: api.CodeWindowDenied,
			Message: fmt.Sprintf("%s lands in window %q (class %s), which the deny-list refuses (ACU_ACT_DENY entry %q): acu does not act in it", what, w.Title, w.Class, re)}
	}
	return nil
}

// watcher is what user-input detection needs: *input.Watch.
type watcher interface {
	Mark(ctx context.Context) error
	Foreign(ctx context.Context) (bool, string, error)
	SetOwnButtons(mask uint16)
}

// userState follows the user's input on one display: when it started and
// when it was last seen.
type userState struct {
	w   watcher
	now func() time.Time

	mu     sync.Mutex
	since  time.Time // start of the current spell of user input (zero: none)
	last   time.Time // the user's last input seen
	detail string
}

// check reports the user active (a CodeUserActive error) when input that is
// not acu's was seen within quiet. Seen input is marked so only new input
// counts next time.
func (u *userState) check(ctx context.Context, quiet time.Duration) error {
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
		return &Error{Code: api.CodeUserActive, ActiveFor: u.last.Sub(u.since) + still, RetryAfter: quiet - still,
			Message: fmt.Sprintf("the user is using this display (%s): acu does not fight the human for the pointer; retry after the user has been still for %s",
				u.detail, quiet)}
	}
	u.since = time.Time{}
	return nil
}

// mark records acu's own input as done, with the buttons it holds down.
func (u *userState) mark(ctx context.Context, ownButtons uint16) error {
	u.w.SetOwnButtons(ownButtons)
	return u.w.Mark(ctx)
}
