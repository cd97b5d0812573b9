package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/secret"
)

// settings is the one table of acu's configuration. Names and defaults of
// the seeds' variables are kept as they are: they are a compatibility
// contract with the systems acu replaces.
var settings = []Setting{
	// Daemon.
	safety(str("ACU_DAEMON_HOST", "host", "127.0.0.1", "a host name or IP address; beyond loopback needs ACU_ALLOW_REMOTE=true", "address the daemon listens on",
		func(c *Config) *string { return &c.DaemonHost })),
	integer("ACU_DAEMON_PORT", "port", "18790", 1, 65535, "port the daemon listens on", func(c *Config) *int { return &c.DaemonPort }),
	safety(boolean("ACU_ALLOW_REMOTE", "allow-remote", "false", "allow binding to a non-loopback address (the daemon can move the mouse: think first)",
		func(c *Config) *bool { return &c.AllowRemote })),
	safety(list("ACU_ALLOWED_HOSTS", "allowed-hosts", "", "extra Host header names accepted besides loopback ones (DNS-rebinding defence)",
		func(c *Config) *[]string { return &c.AllowHosts })),
	str("ACU_DATA_DIR", "data-dir", "", "a directory path", "state directory: database, token, screenshots (default $XDG_STATE_HOME/acu or ~/.local/state/acu)",
		func(c *Config) *string { return &c.DataDir }),
	str("ACU_DB", "db", "", "a file path, or a postgres:// URL", "the database: a SQLite file (default ACU_DATA_DIR/acu.db), or PostgreSQL for a fleet of daemons sharing one (see docs/fleet.md; its password is never printed)", func(c *Config) *string { return &c.DB }),
	safety(secretStr("ACU_TOKEN", "", "bearer token for the API (overrides the generated ACU_DATA_DIR/token)", func(c *Config) *secret.String { return &c.Token })),
	safety(str("ACU_TOKEN_FILE", "", "", "a file path, not readable by others (mode 0400 or 0440)", "a file holding the API's bearer token, such as a mounted secret (instead of ACU_TOKEN, which programs acu launches would inherit; overrides the generated ACU_DATA_DIR/token)",
		func(c *Config) *string { return &c.TokenFile })),
	enum("ACU_LOG_FORMAT", "log-format", "text", []string{"text", "json"}, "log format", func(c *Config) *string { return &c.LogFormat }),
	enum("ACU_LOG_LEVEL", "log-level", "info", []string{"debug", "info", "warn", "error"}, "log level", func(c *Config) *string { return &c.LogLevel }),
	duration("ACU_IDLE_EXIT", "", "30m", 0, 30*24*time.Hour, "a daemon `acu mcp` started (acu serve --detached) exits once it has had no live run (wait, task, agent session, action session, recording) and no client (a connected acu mcp, a request or stream in flight) for this long, so a short-lived MCP host leaves no daemon holding ports and displays; 0 never exits. A daemon you run or install as a service never exits for idleness",
		func(c *Config) *time.Duration { return &c.IdleExit }),
	integer64("ACU_MAX_BODY_BYTES", "", "1048576", 1024, 64<<20, "largest accepted API request body", func(c *Config) *int64 { return &c.MaxBody }),

	// Run ownership.
	str("ACU_HOST_ID", "host-id", "", "a name without spaces", "this machine's name in run owners (default the host name); each machine sharing a database needs its own",
		func(c *Config) *string { return &c.HostID }),
	str("ACU_MACHINE_ID", "", "", "an id without spaces", "this machine's id, told apart from other machines' when two share an ACU_HOST_ID (default /etc/machine-id, else one generated into ACU_DATA_DIR/machine-id)",
		func(c *Config) *string { return &c.MachineID }),
	duration("ACU_OWNER_LEASE", "", "15s", time.Second, time.Hour, "how long a process's hold on its live runs lasts without a heartbeat (renewed every third of it); another process takes over or ends the runs of one whose lease ran out",
		func(c *Config) *time.Duration { return &c.OwnerLease }),

	// Screen pipeline.
	str("DISPLAY", "display", "", "an X display name such as :99", "default X display for captures and input", func(c *Config) *string { return &c.Display }),
	integer("ACU_FRAME_MAX_DIM", "", "960", 64, 8192, "max pixel dimension of frames sent to the vision model", func(c *Config) *int { return &c.FrameMaxDim }),
	integer("ACU_FRAME_JPEG_QUALITY", "", "72", 1, 100, "JPEG quality of frames sent to the vision model", func(c *Config) *int { return &c.FrameQuality }),
	enum("ACU_FRAME_RESIZE", "", "exact", []string{"exact", "fast"}, "downsizing filter: exact (bit-identical to PIL's BILINEAR) or fast (within 2 levels, about 25% quicker)",
		func(c *Config) *string { return &c.FrameResize }),
	safety(list("ACU_EXCLUDE_WINDOWS", "", "", "windows whose title or class contains one of these (comma-separated, case-insensitive) are blacked out in every frame",
		func(c *Config) *[]string { return &c.ExcludeWindows })),
	safety(boolean("ACU_ALLOW_REMOTE_X", "", "false", "allow display names of the form HOST:N, which open a TCP connection to a remote X server (off: only :N, :N.S and unix:N)",
		func(c *Config) *bool { return &c.AllowRemoteX })),
	safety(list("ACU_LAUNCH_ENV_ALLOW", "", "", "variables that look secret (API keys, tokens, passwords, database URLs, ACU_*) but which launched programs should get all the same (comma-separated names); others never reach a launched program",
		func(c *Config) *[]string { return &c.LaunchEnvAllow })),

	byteSize("ACU_MEMORY_LIMIT", "", "120MiB", "soft memory limit of acu's Go heap (the runtime's GOMEMLIMIT, which wins when set): the collector works harder as the heap nears it; 0 turns it off. Raise it for many or large displays: about 4 MB of live frames per 1280x720 display",
		func(c *Config) *int64 { return &c.MemoryLimit }),

	// Judges.
	enum("ACU_VISION_BACKEND", "judge", "", []string{"", "openrouter", "ollama", "vllm", "claude", "gemini", "openai", "ocr"},
		"vision judge backend; empty picks one (a remote backend with a key, else a local Ollama, else the built-in OCR judge)",
		func(c *Config) *string { return &c.VisionBackend }),
	str("ACU_VISION_BASE_URL", "", "", "a URL up to and including /v1", "override the judge backend's endpoint (any OpenAI-compatible server)", func(c *Config) *string { return &c.VisionBaseURL }),
	str("ACU_VISION_MODEL", "", "", "a model name", "override the judge backend's model", func(c *Config) *string { return &c.VisionModel }),
	str("ACU_OPENROUTER_VISION_MODEL", "", "google/gemini-2.0-flash-lite-001", "an OpenRouter model id", "model for the OpenRouter backend", func(c *Config) *string { return &c.OpenRouterModel }),
	str("ACU_VISION_SYSTEM_INSTRUCTIONS", "", "", "text", "system prompt for the vision judge (empty: the built-in one)", func(c *Config) *string { return &c.VisionSystem }),
	integer("ACU_VISION_MAX_TOKENS", "", "150", 1, 8192, "max_tokens of a judge call", func(c *Config) *int { return &c.VisionMaxTokens }),
	float("ACU_VISION_TEMPERATURE", "", "0.1", 0, 2, "temperature of a judge call", func(c *Config) *float64 { return &c.VisionTemperature }),
	duration("ACU_VISION_TIMEOUT", "", "30s", time.Second, 10*time.Minute, "timeout of one judge call attempt", func(c *Config) *time.Duration { return &c.VisionTimeout }),
	str("ACU_OLLAMA_URL", "", "http://127.0.0.1:11434", "a URL", "local Ollama server probed when no backend is configured", func(c *Config) *string { return &c.OllamaURL }),
	secretStr("OPENROUTER_API_KEY", "", "OpenRouter API key", func(c *Config) *secret.String { return &c.OpenRouterAPIKey }),
	secretStr("ANTHROPIC_API_KEY", "", "Anthropic API key (claude backend)", func(c *Config) *secret.String { return &c.AnthropicAPIKey }),
	secretStr("GEMINI_API_KEY", "", "Google Gemini API key (gemini backend)", func(c *Config) *secret.String { return &c.GeminiAPIKey }),
	secretStr("OPENAI_API_KEY", "", "OpenAI API key (openai backend)", func(c *Config) *secret.String { return &c.OpenAIAPIKey }),
	str("ACU_TESSERACT", "", "tesseract", "a program name or path", "Tesseract binary for the OCR judge", func(c *Config) *string { return &c.TesseractBinary }),
	boolean("ACU_JUDGE_A11Y", "", "on", "the accessibility judge: on decides conditions about windows, controls, values and rows from the accessibility tree; off sends them, whole, to the OCR or vision judge (as on a display without a tree), and each such wait's plan event and `acu wait --explain` say so",
		func(c *Config) *bool { return &c.JudgeA11y }),

	// Smart wait.
	duration("ACU_POLL_INTERVAL", "", "1s", 50*time.Millisecond, time.Minute, "backstop interval between judgements when nothing changes (POLL_INTERVAL of the seed)",
		func(c *Config) *time.Duration { return &c.PollInterval }),
	boolean("ACU_WAIT_STRICT_TARGET", "", "false", "refuse a wait on a window that is not open yet (by default it waits for the window, judging NO until it appears)",
		func(c *Config) *bool { return &c.StrictTargets }),
	integer("ACU_JUDGE_CONCURRENCY", "", "32", 1, 1024, "most judge calls in flight across all waits; a wait whose turn has not come holds no frame and judges the newest one when its turn comes",
		func(c *Config) *int { return &c.JudgeConcurrency }),
	duration("ACU_WAIT_DEFAULT_TIMEOUT", "", "300s", time.Second, 24*time.Hour, "timeout of a wait that names none", func(c *Config) *time.Duration { return &c.DefaultTimeout }),
	duration("ACU_WAIT_MAX_TIMEOUT", "", "24h", time.Second, 7*24*time.Hour, "longest timeout a wait may ask for", func(c *Config) *time.Duration { return &c.MaxTimeout }),
	duration("ACU_EVENT_RETENTION", "", "720h", 0, 10*365*24*time.Hour, "progress events of runs that ended longer ago than this are deleted (runs, their lifecycle and results stay); 0 keeps everything",
		func(c *Config) *time.Duration { return &c.EventRetention }),
	boolean("ACU_KEEP_JUDGED_FRAMES", "", "true", "store the frame each wait judgement and each task iteration saw, for the run timeline (one copy per distinct screen: a static wait stores one; deleted with the run's events after ACU_EVENT_RETENTION)",
		func(c *Config) *bool { return &c.KeepJudgedFrames }),

	// Recordings.
	list("ACU_RECORD_RUNS", "", "", "run kinds recorded automatically from start to end, the file linked to the run: agent, task, session, computer (comma-separated; empty records none)",
		func(c *Config) *[]string { return &c.RecordRuns }),
	enum("ACU_RECORD_FORMAT", "", "mp4", []string{"mp4", "webm"}, "format of recordings: mp4 (H.264) or webm (VP8)", func(c *Config) *string { return &c.RecordFormat }),
	integer("ACU_RECORD_MAX_FPS", "", "10", 1, 60, "most frames a second a recording writes while the screen keeps changing (an idle screen writes none)",
		func(c *Config) *int { return &c.RecordMaxFPS }),
	integer("ACU_RECORD_MAX", "", "4", 1, 64, "most recordings running at once, started over the API or automatically (one ffmpeg each); one more answers 429",
		func(c *Config) *int { return &c.RecordMax }),
	duration("ACU_RECORD_MAX_DURATION", "", "4h", 10*time.Second, 7*24*time.Hour, "longest a recording lasts: it stops itself then (stopped: max_duration)",
		func(c *Config) *time.Duration { return &c.RecordMaxDuration }),
	byteSize("ACU_RECORD_DISK", "", "4GiB", "most bytes the recordings directory may hold: no recording starts past it (507) and a running one stops when it is reached (stopped: disk_budget); 0 for no budget",
		func(c *Config) *int64 { return &c.RecordDisk }),
	str("ACU_FFMPEG", "", "ffmpeg", "a program name or path", "ffmpeg binary for recordings", func(c *Config) *string { return &c.FFmpeg }),
	str("ACU_TMUX_SOCKET", "", "", "a tmux socket name (-L)", "tmux server for pty:<session> targets (empty: the default server)", func(c *Config) *string { return &c.TmuxSocket }),

	// Notifiers.
	list("ACU_NOTIFIERS", "notifiers", "exec", "which notifiers wake the agent: exec, webhook (comma-separated; empty for none)",
		func(c *Config) *[]string { return &c.Notifiers }),
	str("ACU_OPENCLAW_CLI", "", "openclaw", "a program name or path", "OpenClaw CLI the default exec notifier runs as `<cli> system event --text <message> --mode now`",
		func(c *Config) *string { return &c.OpenClawCLI }),
	str("ACU_NOTIFY_COMMAND", "", "", "a command line with a {message} placeholder, or naming $ACU_MESSAGE (no shell)", "replaces the exec notifier's whole command line; the message is also in $ACU_MESSAGE and on stdin. Never put {message} inside sh -c's script: it would run as shell code (warned at start)",
		func(c *Config) *string { return &c.NotifyCommand }),
	duration("ACU_NOTIFY_EXEC_TIMEOUT", "", "120s", time.Second, time.Hour, "how long one exec notifier attempt may run before its process group is killed and the attempt retried (a kill after the receiver accepted the message gives a duplicate wake: keep it well above the command's slowest run)",
		func(c *Config) *time.Duration { return &c.NotifyExecTimeout }),
	integer("ACU_NOTIFY_MAX_ATTEMPTS", "", "50", 0, 1000000, "failed delivery attempts after which a notification is dead-lettered (given up on, listed by `acu doctor`); 0 retries forever. 50 is about four hours of retries",
		func(c *Config) *int { return &c.NotifyMaxAttempts }),
	str("ACU_WEBHOOK_URL", "", "", "an http(s) URL", "webhook notifier target (e.g. OpenClaw's /hooks/wake)", func(c *Config) *string { return &c.WebhookURL }),
	secretStr("ACU_WEBHOOK_SECRET", "", "HMAC-SHA256 key for the webhook signature header", func(c *Config) *secret.String { return &c.WebhookSecret }),
	secretStr("ACU_WEBHOOK_TOKEN", "", "bearer token sent to the webhook", func(c *Config) *secret.String { return &c.WebhookToken }),
	str("ACU_WEBHOOK_BODY", "", "", "a Go text/template", "webhook body template (empty: {text, mode, runId, event})", func(c *Config) *string { return &c.WebhookBody }),
}

// safety marks s as a safety setting (Setting.Safety).
func safety(s Setting) Setting {
	s.Safety = true
	return s
}

func str(env, flag, def, accepted, help string, p func(*Config) *string) Setting {
	return Setting{Env: env, Flag: flag, Default: def, Accepted: accepted, Help: help,
		set: func(c *Config, v string) error { *p(c) = v; return nil },
		get: func(c *Config) string { return *p(c) }}
}

func secretStr(env, def, help string, p func(*Config) *secret.String) Setting {
	return Setting{Env: env, Default: def, Accepted: "a secret string", Help: help, Secret: true,
		set: func(c *Config, v string) error { *p(c) = secret.String(v); return nil },
		get: func(c *Config) string { return p(c).Reveal() }}
}

func integer(env, flag, def string, lo, hi int, help string, p func(*Config) *int) Setting {
	return Setting{Env: env, Flag: flag, Default: def, Accepted: fmt.Sprintf("a whole number from %d to %d", lo, hi), Help: help,
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("not a whole number")
			}
			if n < lo || n > hi {
				return fmt.Errorf("out of range")
			}
			*p(c) = n
			return nil
		},
		get: func(c *Config) string { return strconv.Itoa(*p(c)) }}
}

func integer64(env, flag, def string, lo, hi int64, help string, p func(*Config) *int64) Setting {
	return Setting{Env: env, Flag: flag, Default: def, Accepted: fmt.Sprintf("a whole number from %d to %d", lo, hi), Help: help,
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return fmt.Errorf("not a whole number")
			}
			if n < lo || n > hi {
				return fmt.Errorf("out of range")
			}
			*p(c) = n
			return nil
		},
		get: func(c *Config) string { return strconv.FormatInt(*p(c), 10) }}
}

func float(env, flag, def string, lo, hi float64, help string, p func(*Config) *float64) Setting {
	return Setting{Env: env, Flag: flag, Default: def, Accepted: fmt.Sprintf("a number from %g to %g", lo, hi), Help: help,
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return fmt.Errorf("not a number")
			}
			if f < lo || f > hi {
				return fmt.Errorf("out of range")
			}
			*p(c) = f
			return nil
		},
		get: func(c *Config) string { return strconv.FormatFloat(*p(c), 'g', -1, 64) }}
}

// duration accepts Go durations ("1.5s", "300ms") and bare numbers of seconds
// ("300"), since the seeds give timeouts in seconds.
func duration(env, flag, def string, lo, hi time.Duration, help string, p func(*Config) *time.Duration) Setting {
	return Setting{Env: env, Flag: flag, Default: def, Accepted: fmt.Sprintf("a duration from %s to %s (\"1.5s\", \"300ms\", or seconds as a number)", lo, hi), Help: help,
		set: func(c *Config, v string) error {
			d, err := ParseDuration(v)
			if err != nil {
				return err
			}
			if d < lo || d > hi {
				return fmt.Errorf("out of range")
			}
			*p(c) = d
			return nil
		},
		get: func(c *Config) string { return p(c).String() }}
}

func byteSize(env, flag, def, help string, p func(*Config) *int64) Setting {
	return Setting{Env: env, Flag: flag, Default: def, Accepted: "a size such as 120MiB, 512MB, 1GiB, or bytes as a number; 0 for none", Help: help,
		set: func(c *Config, v string) error {
			n, err := ParseByteSize(v)
			if err != nil {
				return err
			}
			*p(c) = n
			return nil
		},
		get: func(c *Config) string { return FormatByteSize(*p(c)) }}
}

var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}

// ParseByteSize parses "120MiB", "512MB", "1GiB", "1048576" (bytes).
func ParseByteSize(v string) (int64, error) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<50)/mult {
		return 0, fmt.Errorf("not a size")
	}
	return n * mult, nil
}

// FormatByteSize prints a size the way ParseByteSize reads it.
func FormatByteSize(n int64) string {
	for _, u := range sizeUnits[:3] {
		if n >= u.mult && n%u.mult == 0 && (u.mult == 1<<30 || n%(u.mult<<10) != 0) {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseDuration parses a Go duration or a number of seconds.
func ParseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("not a duration")
	}
	return d, nil
}

func boolean(env, flag, def, help string, p func(*Config) *bool) Setting {
	return Setting{Env: env, Flag: flag, Default: def, Accepted: "true or false (1/0, yes/no)", Help: help,
		set: func(c *Config, v string) error {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "1", "true", "yes", "on":
				*p(c) = true
			case "0", "false", "no", "off":
				*p(c) = false
			default:
				return fmt.Errorf("not a boolean")
			}
			return nil
		},
		get: func(c *Config) string { return strconv.FormatBool(*p(c)) }}
}

func enum(env, flag, def string, values []string, help string, p func(*Config) *string) Setting {
	shown := make([]string, 0, len(values))
	for _, v := range values {
		if v == "" {
			shown = append(shown, "(empty)")
			continue
		}
		shown = append(shown, v)
	}
	return Setting{Env: env, Flag: flag, Default: def, Accepted: "one of " + strings.Join(shown, ", "), Help: help,
		set: func(c *Config, v string) error {
			v = strings.ToLower(strings.TrimSpace(v))
			for _, ok := range values {
				if v == ok {
					*p(c) = v
					return nil
				}
			}
			return fmt.Errorf("unknown value")
		},
		get: func(c *Config) string { return *p(c) }}
}

func list(env, flag, def, help string, p func(*Config) *[]string) Setting {
	return Setting{Env: env, Flag: flag, Default: def, Accepted: "a comma-separated list (set but empty: none)", Help: help, emptyOK: true,
		set: func(c *Config, v string) error {
			var out []string
			for _, part := range strings.Split(v, ",") {
				if part = strings.TrimSpace(part); part != "" {
					out = append(out, part)
				}
			}
			*p(c) = out
			return nil
		},
		get: func(c *Config) string { return strings.Join(*p(c), ",") }}
}
