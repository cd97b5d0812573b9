package capture

import (
	"errors"
	"fmt"
	"image"
	"strconv"
	"strings"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/frame"
)

// Kind is the kind of a target.
type Kind int

// Target kinds.
const (
	Screen Kind = iota // the whole display
	Window             // one top-level window, by title substring or id
	Crop               // a rectangle in 0..1000 normalized screen coordinates
	PTY                // a terminal session: captured as the whole display
)

// Target is what to capture on a display.
type Target struct {
	Kind Kind
	// Query is the window name or id as given (Window), or the session
	// (PTY).
	Query string
	// ID is the window id when Query is a decimal or 0x-hex number.
	ID uint32
	// Crop is x1,y1,x2,y2 in 0..1000 of the screen (Crop).
	Crop [4]int
}

// ParseTarget parses "screen" (also ""), "window:<name or id>",
// "crop:x1,y1,x2,y2" (0..1000, x1<x2, y1<y2) and "pty:<session>".
func ParseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	kind, arg, hasArg := strings.Cut(s, ":")
	switch strings.ToLower(kind) {
	case "", "screen":
		if hasArg {
			return Target{}, fmt.Errorf("target %q: screen takes no argument (the display is given separately)", s)
		}
		return Target{Kind: Screen}, nil
	case "window":
		arg = strings.TrimSpace(arg)
		if arg == "" {
			return Target{}, fmt.Errorf("target %q: want window:<title substring or id>", s)
		}
		t := Target{Kind: Window, Query: arg}
		if id, ok := parseID(arg); ok {
			t.ID = id
		}
		return t, nil
	case "crop":
		parts := strings.Split(arg, ",")
		if len(parts) != 4 {
			return Target{}, fmt.Errorf("target %q: want crop:x1,y1,x2,y2 in 0..1000", s)
		}
		var c [4]int
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 0 || n > 1000 {
				return Target{}, fmt.Errorf("target %q: coordinate %q must be an integer in 0..1000", s, p)
			}
			c[i] = n
		}
		if c[0] >= c[2] || c[1] >= c[3] {
			return Target{}, fmt.Errorf("target %q: want x1 < x2 and y1 < y2", s)
		}
		return Target{Kind: Crop, Crop: c}, nil
	case "pty":
		if strings.TrimSpace(arg) == "" {
			return Target{}, fmt.Errorf("target %q: want pty:<session>", s)
		}
		return Target{Kind: PTY, Query: strings.TrimSpace(arg)}, nil
	}
	return Target{}, fmt.Errorf("target %q: want screen, window:<name or id>, crop:x1,y1,x2,y2 or pty:<session>", s)
}

func parseID(s string) (uint32, bool) {
	var n uint64
	var err error
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		n, err = strconv.ParseUint(h, 16, 32)
	} else {
		n, err = strconv.ParseUint(s, 10, 32)
	}
	return uint32(n), err == nil && n != 0
}

// String returns the target in ParseTarget's syntax.
func (t Target) String() string {
	switch t.Kind {
	case Window:
		return "window:" + t.Query
	case Crop:
		return fmt.Sprintf("crop:%d,%d,%d,%d", t.Crop[0], t.Crop[1], t.Crop[2], t.Crop[3])
	case PTY:
		return "pty:" + t.Query
	}
	return "screen"
}

// CropRect converts a 0..1000 normalized rectangle to pixels on a w*h
// screen, exactly as input maps its working area (frame.CropRect).
func CropRect(c [4]int, w, h int) image.Rectangle { return frame.CropRect(c, w, h) }

// Resolved is a target resolved on a display at one moment.
type Resolved struct {
	Target  Target
	Display string
	// Window is the matched window (Window targets).
	Window display.Window
	// Rect is the captured rectangle in screen pixels (the whole screen
	// for Screen and PTY targets).
	Rect image.Rectangle
	// Label is the frame's Target string: "screen", "window:0x1a00003",
	// "crop:100,100,900,900".
	Label string
}

// TargetError says a window target matched no window or several; it lists
// the candidates (all windows, or the matching ones).
type TargetError struct {
	Display    string
	Target     string
	Ambiguous  bool
	Candidates []display.Window
}

// ErrTarget is matched by every *TargetError (errors.Is).
var ErrTarget = errors.New("target matches no single window")

func (e *TargetError) Error() string {
	var b strings.Builder
	if e.Ambiguous {
		fmt.Fprintf(&b, "target %s on %s matches %d windows; use a longer title or the id:", e.Target, e.Display, len(e.Candidates))
	} else {
		fmt.Fprintf(&b, "target %s on %s matches no window", e.Target, e.Display)
		if len(e.Candidates) == 0 {
			b.WriteString(" (the display has none)")
			return b.String()
		}
		b.WriteString("; windows:")
	}
	for i, w := range e.Candidates {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s %q", w.IDString(), w.Title)
		if w.Class != "" {
			fmt.Fprintf(&b, " (%s)", w.Class)
		}
	}
	return b.String()
}

// Is makes errors.Is(err, ErrTarget) hold.
func (e *TargetError) Is(target error) bool { return target == ErrTarget }

// match finds the window a Window target names among ws.
func match(t Target, ws []display.Window) (display.Window, []display.Window, bool) {
	if t.ID != 0 {
		for _, w := range ws {
			if w.ID == t.ID {
				return w, nil, true
			}
		}
	}
	q := strings.ToLower(t.Query)
	var subs, exact []display.Window
	for _, w := range ws {
		if !w.Mapped {
			continue
		}
		title := strings.ToLower(w.Title)
		if strings.Contains(title, q) {
			subs = append(subs, w)
			if title == q {
				exact = append(exact, w)
			}
		}
	}
	if len(subs) == 0 {
		for _, w := range ws {
			if w.Mapped && (strings.EqualFold(w.Class, t.Query) || strings.EqualFold(w.Instance, t.Query)) {
				subs = append(subs, w)
			}
		}
	}
	switch {
	case len(subs) == 1:
		return subs[0], nil, true
	case len(exact) == 1:
		return exact[0], nil, true
	}
	return display.Window{}, subs, false
}
