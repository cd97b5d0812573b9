package display

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseName(t *testing.T) {
	ok := map[string]Name{
		":0":        {Number: 0},
		":99":       {Number: 99},
		":99.0":     {Number: 99},
		":1.2":      {Number: 1, Screen: 2},
		"unix:7":    {Number: 7},
		"unix:7.1":  {Number: 7, Screen: 1},
		":59535":    {Number: 59535},
		":00012":    {Number: 12},
		"unix:0.00": {Number: 0},
	}
	for in, want := range ok {
		got, err := ParseName(in, false)
		if err != nil || got != want {
			t.Errorf("ParseName(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := []string{"", ":", ":0/x", ":0/", "a/b:0", "tcp/host:0", "/tmp/sock:0", ":x", ":-1", ":+1", ": 1",
		":1.", ":1.x", ":1.2.3", ":123456", ":59536", "0", "unix", "localhost:0", "127.0.0.1:0", "host:0.0",
		"::1:0", "[::1]:0", ":1\x00", "\x00:1", ":1\n", strings.Repeat("a", 300) + ":1", "unix:1/x", ":1.300"}
	for _, in := range bad {
		if _, err := ParseName(in, false); !errors.Is(err, ErrBadName) {
			t.Errorf("ParseName(%q) = %v, want ErrBadName", in, err)
		}
	}
	// Remote names only when allowed, and then with a host.
	if n, err := ParseName("localhost:3.1", true); err != nil || n != (Name{Host: "localhost", Number: 3, Screen: 1}) {
		t.Errorf("ParseName(localhost:3.1, remote) = %+v, %v", n, err)
	}
	for _, in := range []string{"tcp/host:0", "ho st:0", "-x:0", "a/b:0", ":0/x"} {
		if _, err := ParseName(in, true); !errors.Is(err, ErrBadName) {
			t.Errorf("ParseName(%q, remote) = %v, want ErrBadName", in, err)
		}
	}
	_, err := ParseName("example.org:0", false)
	if err == nil || !strings.Contains(err.Error(), "ACU_ALLOW_REMOTE_X") {
		t.Errorf("remote name refused without naming the setting: %v", err)
	}
}

// TestOpenRefusesBeforeConnecting: a refused name never reaches xgb (which
// panics on ":0/x") and never opens a TCP connection (HOST:N dials port
// 6000+N).
func TestOpenRefusesBeforeConnecting(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := Open(ctx, ":0/x", Options{}); !errors.Is(err, ErrBadName) {
		t.Fatalf("Open(:0/x) = %v, want ErrBadName", err)
	}
	l, n := listenX(t)
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	name := "127.0.0.1:" + n
	if _, err := Open(ctx, name, Options{}); !errors.Is(err, ErrBadName) {
		t.Fatalf("Open(%s) = %v, want ErrBadName", name, err)
	}
	// With remote X allowed, the same name does dial: the listener is the
	// proof that it was refused above and not merely unreachable.
	_, err := Open(ctx, name, Options{AllowRemote: true})
	if err == nil {
		t.Fatalf("Open(%s) against a plain TCP listener succeeded", name)
	}
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatalf("Open(%s) with AllowRemote never connected to 127.0.0.1:6000+%s", name, n)
	}
}

// listenX listens on 127.0.0.1 at 6000+N for some free N and returns N.
func listenX(t *testing.T) (net.Listener, string) {
	t.Helper()
	for n := 40; n < 400; n++ {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(6000+n))
		if err == nil {
			t.Cleanup(func() { l.Close() })
			// A server that accepts and closes makes xgb's handshake fail fast.
			return l, strconv.Itoa(n)
		}
	}
	t.Skip("no free port in 6040..6399")
	return nil, ""
}

var localName = regexp.MustCompile(`^(unix)?:[0-9]{1,5}(\.[0-9]{1,5})?$`)

// FuzzParseName: never panics, and what it accepts as local is of the
// documented forms only, with numbers in range.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{":0", ":99.1", "unix:3", ":0/x", "a/b:1", "host:0", "/tmp/x:0", ":1.2.3", ""} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, remote bool) {
		n, err := ParseName(s, remote)
		if err != nil {
			if !errors.Is(err, ErrBadName) {
				t.Fatalf("ParseName(%q) error %v does not wrap ErrBadName", s, err)
			}
			return
		}
		if n.Number < 0 || n.Number > 65535-6000 || n.Screen < 0 || n.Screen > 255 {
			t.Fatalf("ParseName(%q) = %+v: out of range", s, n)
		}
		if n.Host == "" && !localName.MatchString(s) {
			t.Fatalf("ParseName(%q) accepted a local name of no documented form", s)
		}
		if n.Host != "" && (!remote || strings.ContainsAny(n.Host, "/: ")) {
			t.Fatalf("ParseName(%q, %v) = host %q", s, remote, n.Host)
		}
	})
}
