package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// ActConfig holds the settings of acting over the wire (POST /v1/actions,
// the MCP act tools): whether it is on, where, the windows it never acts
// in, the user-first pause and the audit sessions. Its settings are
// appended to the table by this file's init.
type ActConfig struct {
	Enabled     bool
	Displays    []string
	Deny        []*regexp.Regexp
	PauseOnUser bool
	UserQuiet   time.Duration
	SessionIdle time.Duration
	OCR         bool
	ClickHold   time.Duration
}

// DefaultActDeny is ACU_ACT_DENY's default: password managers.
const DefaultActDeny = `(?i)keepass|1password|bitwarden|lastpass|enpass|password safe|seahorse`

// Act returns c's acting settings.
func (c *Config) Act() *ActConfig { return &c.act }

func init() {
	a := func(c *Config) *ActConfig { return c.Act() }
	settings = append(settings,
		safety(boolean("ACU_ACT_ENABLED", "", "true", "clients may act on the desktop over the API and MCP (POST /v1/actions): click, type, keys, drag, scroll",
			func(c *Config) *bool { return &a(c).Enabled })),
		safety(list("ACU_ACT_DISPLAYS", "", "", "displays clients may act on (comma-separated, as :99); empty allows every display",
			func(c *Config) *[]string { return &a(c).Displays })),
		safety(Setting{Env: "ACU_ACT_DENY", Default: DefaultActDeny, emptyOK: true, // set but empty: no deny-list
			Accepted: "comma-separated Go regular expressions (write a comma inside one as \\x2c); empty for none",
			Help:     "actions landing in a window whose title or class matches one are refused (403 window_denied); the default covers password managers (KeePassXC, 1Password, Bitwarden, LastPass, Enpass, Password Safe, Seahorse); add e.g. (?i)root@ for root shells",
			set: func(c *Config, v string) error {
				var out []*regexp.Regexp
				for _, part := range strings.Split(v, ",") {
					if part = strings.TrimSpace(part); part == "" {
						continue
					}
					re, err := regexp.Compile(part)
					if err != nil {
						return fmt.Errorf("entry %q is not a regular expression: %v", part, err)
					}
					out = append(out, re)
				}
				a(c).Deny = out
				return nil
			},
			get: func(c *Config) string {
				parts := make([]string, len(a(c).Deny))
				for i, re := range a(c).Deny {
					parts[i] = re.String()
				}
				return strings.Join(parts, ",")
			}}),
		safety(boolean("ACU_ACT_PAUSE_ON_INPUT", "", "true", "refuse actions (409 user_active) while the user makes input on that display, pointer or keyboard",
			func(c *Config) *bool { return &a(c).PauseOnUser })),
		duration("ACU_ACT_USER_QUIET", "", "3s", 100*time.Millisecond, time.Hour, "how long the user must have been still before acting resumes",
			func(c *Config) *time.Duration { return &a(c).UserQuiet }),
		duration("ACU_ACT_SESSION_IDLE", "", "10m", time.Second, 24*time.Hour, "a client's session run (the audit of its actions) ends after this long without a request",
			func(c *Config) *time.Duration { return &a(c).SessionIdle }),
		duration("ACU_ACT_CLICK_HOLD", "", "2ms", 0, time.Second, "how long a click over the API holds the button down (0: release at once)",
			func(c *Config) *time.Duration { return &a(c).ClickHold }),
		boolean("ACU_ACT_OCR", "", "false", "add Tesseract text to the element map of GET /v1/elements and element-id actions (slower; for windows without accessibility)",
			func(c *Config) *bool { return &a(c).OCR }),
	)
}
