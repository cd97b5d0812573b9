package config

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/acu-dev/acu/internal/secret"
)

// RelayConfig holds the relay feature's settings: the relay's listener
// (ACU_RELAY_*), its analysis loop (the seed's AGENT_* names, which are a
// compatibility contract; ACU_AGENT_* is the desktop agent's, a different
// feature) and the sense client (ACU_SENSE_*). Its settings are appended to
// the table by this file's init.
type RelayConfig struct {
	Enabled bool
	Host    string
	Port    int
	Token   secret.String
	// Auth is ACU_RELAY_AUTH: "token" (the default: every route but the
	// HUD page's files needs the token) or "none" (the seed's routes are
	// open to anyone on this machine, for the origin's clients, which send
	// no token; accepted only while Host is loopback).
	Auth string

	AgentEnabled        bool
	AgentIntervalMs     int
	AgentModel          string
	AgentMaxAgeMs       int
	AgentMaxTokens      int
	AgentTemperature    float64
	AgentPushToFeed     bool
	AgentLogVerbose     bool
	AgentBaseURL        string
	AgentDebounceMs     int
	AgentFallbackModels []string
	AgentTimeout        time.Duration

	SenseRelayURL     string
	SenseDisplay      string
	SenseMinInterval  time.Duration
	SenseOCRMaxPixels int
	SenseOCRMaxChars  int
	SenseIgnore       []string
	SenseQueue        int
}

// The values of ACU_RELAY_AUTH.
const (
	RelayAuthToken = "token"
	RelayAuthNone  = "none"
)

// Open reports whether ACU_RELAY_AUTH=none: the relay's routes need
// no token.
func (r *RelayConfig) Open() bool { return r.Auth == RelayAuthNone }

// RelayAuthWarning is what `acu serve`, `acu relay` and `acu doctor` say
// while ACU_RELAY_AUTH=none; empty otherwise.
func (c *Config) RelayAuthWarning() string {
	if !c.Relay().Open() {
		return ""
	}
	return "ACU_RELAY_AUTH=none: the relay at " + c.RelayAddr() + " needs no token, so every local user and program (a browser's pages excepted) can read the screen's OCR text it holds, post to the HUD and change its analysis loop; unset ACU_RELAY_AUTH once its clients send Authorization: Bearer <token>"
}

// checkRelayAuth refuses ACU_RELAY_AUTH=none unless the relay listens on
// loopback.
func (c *Config) checkRelayAuth() error {
	r := c.Relay()
	if r.Open() && !isLoopbackHost(r.Host) {
		return &Error{Env: "ACU_RELAY_AUTH", Value: r.Auth, Source: "configuration",
			Accepted: "token, or none only while ACU_RELAY_HOST is a loopback address (127.0.0.1, ::1, localhost)",
			Err:      fmt.Errorf("a relay without a token must listen on loopback, and ACU_RELAY_HOST is %q: set ACU_RELAY_HOST=127.0.0.1, or unset ACU_RELAY_AUTH and give the clients the token", r.Host)}
	}
	return nil
}

// Relay returns c's relay settings.
func (c *Config) Relay() *RelayConfig {
	return &c.relay
}

// RelayAddr is the relay's listen address, host:port.
func (c *Config) RelayAddr() string {
	r := c.Relay()
	return net.JoinHostPort(r.Host, strconv.Itoa(r.Port))
}

// RelayTokenPath is where the relay's generated bearer token is kept (used
// when ACU_RELAY_TOKEN is not set). It is not the daemon's token: the
// relay's clients get access to the screen's text, not to the mouse.
func (c *Config) RelayTokenPath() string { return filepath.Join(c.DataDir, "relay-token") }

func init() {
	r := func(c *Config) *RelayConfig { return c.Relay() }
	settings = append(settings,
		// Relay listener.
		boolean("ACU_RELAY_ENABLED", "", "true", "`acu serve` also starts the feed/sense relay and its HUD page",
			func(c *Config) *bool { return &r(c).Enabled }),
		safety(str("ACU_RELAY_HOST", "", "127.0.0.1", "a host name or IP address", "address the relay listens on",
			func(c *Config) *string { return &r(c).Host })),
		integer("ACU_RELAY_PORT", "", "18791", 1, 65535, "port the relay listens on (the seed's 18791)", func(c *Config) *int { return &r(c).Port }),
		safety(enum("ACU_RELAY_AUTH", "", RelayAuthToken, []string{RelayAuthToken, RelayAuthNone},
			"who may use the relay: token (Authorization: Bearer, the default) or none (the seed's routes open to every local user and program, for clients that send no token; loopback ACU_RELAY_HOST only, warned about at every start)",
			func(c *Config) *string { return &r(c).Auth })),
		safety(secretStr("ACU_RELAY_TOKEN", "", "bearer token the relay requires (overrides the one generated in ACU_DATA_DIR/relay-token, which `acu sense` reads too)",
			func(c *Config) *secret.String { return &r(c).Token })),

		// The relay's analysis loop: the seed's AGENT_* variables.
		boolean("AGENT_ENABLED", "", "true", "run the relay's analysis loop (needs OPENROUTER_API_KEY, or AGENT_BASE_URL of a server without keys)",
			func(c *Config) *bool { return &r(c).AgentEnabled }),
		integer("AGENT_INTERVAL_MS", "", "30000", 100, 86400000, "milliseconds between analysis ticks", func(c *Config) *int { return &r(c).AgentIntervalMs }),
		str("AGENT_MODEL", "", "google/gemini-2.5-flash-lite", "a model id", "model of the analysis loop", func(c *Config) *string { return &r(c).AgentModel }),
		integer("AGENT_MAX_AGE_MS", "", "120000", 1000, 86400000, "context window of the analysis loop, in milliseconds", func(c *Config) *int { return &r(c).AgentMaxAgeMs }),
		integer("AGENT_MAX_TOKENS", "", "200", 1, 32768, "max_tokens of an analysis call", func(c *Config) *int { return &r(c).AgentMaxTokens }),
		float("AGENT_TEMPERATURE", "", "0.3", 0, 2, "temperature of an analysis call", func(c *Config) *float64 { return &r(c).AgentTemperature }),
		boolean("AGENT_PUSH_TO_FEED", "", "true", "push each new hud line to the feed as \"[🧠] <hud>\"", func(c *Config) *bool { return &r(c).AgentPushToFeed }),
		boolean("AGENT_LOG_VERBOSE", "", "false", "log every tick of the analysis loop", func(c *Config) *bool { return &r(c).AgentLogVerbose }),
		str("AGENT_BASE_URL", "", "https://openrouter.ai/api/v1", "a URL up to and including /v1", "OpenAI-compatible endpoint of the analysis loop",
			func(c *Config) *string { return &r(c).AgentBaseURL }),
		integer("AGENT_DEBOUNCE_MS", "", "0", 0, 3600000, "tick this many milliseconds after new input (0: only every AGENT_INTERVAL_MS)",
			func(c *Config) *int { return &r(c).AgentDebounceMs }),
		list("AGENT_FALLBACK_MODELS", "", "", "models tried in order when AGENT_MODEL fails (comma-separated)",
			func(c *Config) *[]string { return &r(c).AgentFallbackModels }),
		duration("ACU_RELAY_CALL_TIMEOUT", "", "30s", time.Second, 10*time.Minute, "timeout of one analysis call (each fallback gets its own)",
			func(c *Config) *time.Duration { return &r(c).AgentTimeout }),

		// The sense client.
		str("ACU_SENSE_RELAY_URL", "", "http://127.0.0.1:18791", "an http URL", "relay `acu sense` posts events to", func(c *Config) *string { return &r(c).SenseRelayURL }),
		str("ACU_SENSE_DISPLAY", "", "", "an X display name such as :0", "display `acu sense` watches (default DISPLAY)", func(c *Config) *string { return &r(c).SenseDisplay }),
		duration("ACU_SENSE_MIN_INTERVAL", "", "2s", 50*time.Millisecond, time.Hour, "shortest time between two screen events of `acu sense` (its rate limit)",
			func(c *Config) *time.Duration { return &r(c).SenseMinInterval }),
		integer("ACU_SENSE_OCR_MAX_PIXELS", "", "2073600", 10000, 33177600, "largest area `acu sense` OCRs at once; larger regions are cut to the changed part",
			func(c *Config) *int { return &r(c).SenseOCRMaxPixels }),
		integer("ACU_SENSE_OCR_MAX_CHARS", "", "4000", 100, 1000000, "longest OCR text `acu sense` sends in one event", func(c *Config) *int { return &r(c).SenseOCRMaxChars }),
		safety(list("ACU_SENSE_IGNORE", "", "keepassxc,1password,bitwarden,pinentry", "windows never captured by `acu sense`: title or class containing one of these (comma-separated, case-insensitive)",
			func(c *Config) *[]string { return &r(c).SenseIgnore })),
		integer("ACU_SENSE_QUEUE", "", "64", 1, 100000, "events `acu sense` keeps while the relay is down (oldest dropped)", func(c *Config) *int { return &r(c).SenseQueue }),
	)
}
