package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestActDefaults(t *testing.T) {
	getenv, environ := env(map[string]string{"HOME": "/home/u"})
	c, _, _, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Act()
	if !a.Enabled || len(a.Displays) != 0 || !a.PauseOnUser || a.UserQuiet != 3*time.Second || a.SessionIdle != 10*time.Minute || a.OCR || a.ClickHold != 2*time.Millisecond {
		t.Errorf("act defaults = %+v", a)
	}
	for _, title := range []string{"KeePassXC", "Passwords - 1Password", "Bitwarden"} {
		matched := false
		for _, re := range a.Deny {
			matched = matched || re.MatchString(title)
		}
		if !matched {
			t.Errorf("default deny-list does not refuse %q", title)
		}
	}
}

func TestActFromEnvironment(t *testing.T) {
	getenv, environ := env(map[string]string{"HOME": "/home/u", "ACU_ACT_ENABLED": "false", "ACU_ACT_DISPLAYS": ":1, :2",
		"ACU_ACT_DENY": `(?i)root@,^Secret\x2c too$`, "ACU_ACT_USER_QUIET": "500ms"})
	c, _, _, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Act()
	if a.Enabled || len(a.Displays) != 2 || a.Displays[1] != ":2" || len(a.Deny) != 2 || !a.Deny[1].MatchString("Secret, too") || a.UserQuiet != 500*time.Millisecond {
		t.Errorf("act settings = %+v", a)
	}
}

func TestActBadDeny(t *testing.T) {
	getenv, environ := env(map[string]string{"HOME": "/home/u", "ACU_ACT_DENY": "(unclosed"})
	_, _, _, err := Load(getenv, environ, nil, nil)
	var ce *Error
	if !errors.As(err, &ce) || ce.Env != "ACU_ACT_DENY" {
		t.Fatalf("Load = %v, want an error naming ACU_ACT_DENY", err)
	}
}

func TestActMisspeltDenyStops(t *testing.T) {
	getenv, environ := env(map[string]string{"HOME": "/home/u", "ACU_ACT_DNY": "(?i)vault"})
	if _, _, _, err := Load(getenv, environ, nil, nil); err == nil || !strings.Contains(err.Error(), "ACU_ACT_DENY") {
		t.Fatalf("Load with ACU_ACT_DNY = %v, want start-up stopped naming ACU_ACT_DENY", err)
	}
}

// TestActEmptyDenyIsNone: ACU_ACT_DENY set but empty is no deny-list, as
// its help says ("empty for none"), not the default's password managers.
func TestActEmptyDenyIsNone(t *testing.T) {
	getenv, environ := env(map[string]string{"HOME": "/home/u", "ACU_ACT_DENY": ""})
	c, _, _, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Act().Deny; len(d) != 0 {
		t.Errorf("ACU_ACT_DENY= gives the deny-list %v, want none", d)
	}
}
