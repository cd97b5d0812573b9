package display

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadName is returned (wrapped) for a display name acu will not connect
// to: malformed, or naming a remote host while remote X is not allowed.
var ErrBadName = errors.New("bad X display name")

// maxNameLen bounds a display name; real ones are a few bytes.
const maxNameLen = 255

// Name is a parsed X display name.
type Name struct {
	Host   string // "" for the local server; set only when remote X is allowed
	Number int    // the display number N of ":N"
	Screen int    // the screen S of ":N.S"
}

// ParseName checks an X display name before anything connects to it.
// Accepted: ":N", ":N.S", "unix:N" and "unix:N.S", all local (a Unix
// socket). "HOST:N" and "HOST:N.S" make the X library open a TCP connection
// to HOST, port 6000+N: refused unless allowRemote. Everything else (socket
// paths, "proto/host:N", spaces, control bytes) is refused: xgb parses such
// names loosely, and some of them make it panic.
func ParseName(name string, allowRemote bool) (Name, error) {
	bad := func(why string) (Name, error) {
		shown := name
		if len(shown) > 40 {
			shown = shown[:40] + "…"
		}
		return Name{}, fmt.Errorf("%w %q: %s; use :N, :N.S or unix:N (for example :99)", ErrBadName, shown, why)
	}
	if name == "" {
		return bad("empty")
	}
	if len(name) > maxNameLen {
		return bad(fmt.Sprintf("longer than %d bytes", maxNameLen))
	}
	colon := strings.LastIndexByte(name, ':')
	if colon < 0 {
		return bad("no ':' before the display number")
	}
	host, rest := name[:colon], name[colon+1:]
	num, scr, hasScr := strings.Cut(rest, ".")
	var n Name
	var err error
	if n.Number, err = decimal(num, 65535-6000); err != nil {
		return bad("the display number " + err.Error())
	}
	if hasScr {
		if n.Screen, err = decimal(scr, 255); err != nil {
			return bad("the screen number " + err.Error())
		}
	}
	switch {
	case host == "" || host == "unix":
	case !validHost(host):
		return bad("the host part is not a host name or address")
	case !allowRemote:
		return bad("a host before ':' connects to a remote X server over TCP, which is off; set ACU_ALLOW_REMOTE_X=true to allow it")
	default:
		n.Host = host
	}
	return n, nil
}

// decimal parses a plain non-negative decimal of at most max: no sign, no
// spaces, at most 5 digits.
func decimal(s string, max int) (int, error) {
	if s == "" || len(s) > 5 {
		return 0, errors.New("must be 1 to 5 digits")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("must be digits only")
		}
	}
	v, _ := strconv.Atoi(s)
	if v > max {
		return 0, fmt.Errorf("must be at most %d", max)
	}
	return v, nil
}

// validHost accepts DNS names and IPv4 addresses (letters, digits, '-',
// '.'), and bracket-free IPv6 is not accepted: xgb splits at the last ':'.
func validHost(h string) bool {
	if len(h) > 253 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return h[0] != '-' && h[0] != '.'
}

// PanicError turns a recovered panic from code that touches X into an
// error, so a goroutine can end its work cleanly instead of killing the
// process. Use it in a deferred func that calls recover itself.
func PanicError(what string, r any) error {
	return fmt.Errorf("%s: internal error talking to X (recovered panic: %v); the display connection is dropped and retried", what, r)
}
