// Package config builds acu's effective configuration: defaults, then an
// optional config file, then ACU_* / AGENT_* environment variables, then
// command-line flags. Every setting records its variable name, its accepted
// values and a description, which `acu config` and the docs print. A bad
// value stops start-up with the variable's name and what is accepted; there
// is no silent fallback. Only cmd/acu calls Load; packages receive their own
// Options built from a Config.
package config

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/secret"
)

// Config is the effective configuration of one acu process.
type Config struct {
	// Daemon and state.
	DaemonHost  string
	DaemonPort  int
	AllowRemote bool
	AllowHosts  []string
	DataDir     string
	DB          string
	Token       secret.String
	TokenFile   string // ACU_TOKEN_FILE; Load reads it into Token
	LogFormat   string
	LogLevel    string
	MaxBody     int64
	// IdleExit is how long a daemon `acu mcp` started may go without a
	// live run or a client before it exits (ACU_IDLE_EXIT); 0: never.
	IdleExit time.Duration

	// Screen pipeline.
	Display        string
	FrameMaxDim    int
	FrameQuality   int
	FrameResize    string
	ExcludeWindows []string
	// LaunchEnvAllow: secret-looking variables launched programs get
	// anyway (ACU_LAUNCH_ENV_ALLOW).
	LaunchEnvAllow []string
	AllowRemoteX   bool
	MemoryLimit    int64 // bytes; 0: none

	// Run ownership.
	HostID     string        // ACU_HOST_ID: this machine's name in owner ids (default the host name)
	MachineID  string        // ACU_MACHINE_ID: this machine's id (default /etc/machine-id); see runs.MachineID
	OwnerLease time.Duration // ACU_OWNER_LEASE

	// Judges and model keys.
	VisionBackend     string
	VisionBaseURL     string
	VisionModel       string
	OpenRouterModel   string
	VisionSystem      string
	VisionMaxTokens   int
	VisionTemperature float64
	VisionTimeout     time.Duration
	OllamaURL         string
	OpenRouterAPIKey  secret.String
	AnthropicAPIKey   secret.String
	GeminiAPIKey      secret.String
	OpenAIAPIKey      secret.String
	TesseractBinary   string
	// JudgeA11y turns the accessibility judge on (ACU_JUDGE_A11Y).
	JudgeA11y bool
	// ModelPrices extends and overrides the built-in price table
	// (ACU_MODEL_PRICES; see prices.go).
	ModelPrices map[string]ModelPrice

	// Smart wait.
	PollInterval  time.Duration
	StrictTargets bool
	// JudgeConcurrency bounds the judge calls in flight (ACU_JUDGE_CONCURRENCY).
	JudgeConcurrency int
	DefaultTimeout   time.Duration
	MaxTimeout       time.Duration
	TmuxSocket       string
	EventRetention   time.Duration
	// KeepJudgedFrames stores the frame each wait judgement saw.
	KeepJudgedFrames bool

	// Recordings.
	RecordRuns        []string
	RecordFormat      string
	RecordMaxFPS      int
	RecordMax         int
	RecordMaxDuration time.Duration
	RecordDisk        int64  // bytes; 0: no budget
	LaunchArgv        string // ACU_LAUNCH_ARGV: LaunchArgvAdmin or LaunchArgvAct
	FFmpeg            string

	// Notifiers.
	Notifiers     []string
	OpenClawCLI   string
	NotifyCommand string
	// NotifyMaxAttempts: 0 retries forever.
	NotifyMaxAttempts int
	NotifyExecTimeout time.Duration
	WebhookURL        string
	WebhookSecret     secret.String
	WebhookToken      secret.String
	WebhookBody       string

	// Features with settings of their own, each in its own file of this
	// package (relay.go, agent.go, task.go) that appends its settings to
	// the table; read them through the accessor methods there.
	relay    RelayConfig
	agent    AgentConfig
	task     TaskConfig
	computer ComputerConfig
	act      ActConfig
	mcp      MCPConfig
}

// Setting describes one configuration value.
type Setting struct {
	Env      string // environment variable and config-file key
	Flag     string // flag name for `acu serve`; empty when there is none
	Default  string
	Accepted string // what is accepted, for error messages and docs
	Help     string
	Secret   bool
	// Safety marks a setting that limits what acu may do (where it acts,
	// who may call it, what it may spend). A misspelt name close to one of
	// these fails start-up instead of being ignored with a warning.
	Safety bool
	// emptyOK: a variable set to the empty string applies it (a list:
	// "empty for none"); for other settings an empty variable is as if unset.
	emptyOK bool

	set func(c *Config, v string) error
	get func(c *Config) string
}

// Error is a configuration error that names the variable and what it accepts.
type Error struct {
	Env      string
	Value    string
	Accepted string
	Source   string // "environment", "flag", the config file's path
	Err      error
}

func (e *Error) Error() string {
	v := e.Value
	if len(v) > 60 {
		v = v[:60] + "…"
	}
	msg := fmt.Sprintf("%s=%q (from %s): %v", e.Env, v, e.Source, e.Err)
	if e.Accepted != "" {
		msg += "; accepted: " + e.Accepted
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Settings returns the table of every setting, in display order.
func Settings() []Setting { return settings }

// Defaults returns a Config holding every default (DataDir resolved with
// getenv for HOME and XDG_STATE_HOME).
func Defaults(getenv func(string) string) *Config {
	c := &Config{}
	for _, s := range settings {
		if err := s.set(c, s.Default); err != nil {
			panic(fmt.Sprintf("config: default of %s: %v", s.Env, err))
		}
	}
	c.DataDir = defaultDataDir(getenv)
	return c
}

func defaultDataDir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "acu")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "acu")
	}
	return filepath.Join(os.TempDir(), "acu")
}

// Load builds the configuration. fs may be nil; when given, Load registers a
// flag per setting that has one, plus -config, parses args, and applies the
// flags last. It returns the remaining positional arguments and a list of
// warnings (unknown ACU_* variables in the environment).
func Load(getenv func(string) string, environ []string, fs *flag.FlagSet, args []string) (*Config, []string, []string, error) {
	c := Defaults(getenv)
	flagVals := map[string]*string{}
	var configPath string
	if fs != nil {
		fs.StringVar(&configPath, "config", "", "config file of KEY=VALUE lines (default: ACU_CONFIG, else $XDG_CONFIG_HOME/acu/acu.env when present)")
		for _, s := range settings {
			if s.Flag == "" {
				continue
			}
			v := new(string)
			flagVals[s.Flag] = v
			help := s.Help + " (" + s.Env + ")"
			fs.StringVar(v, s.Flag, "", help)
		}
		if err := fs.Parse(args); err != nil {
			return nil, nil, nil, err
		}
		args = fs.Args()
	}
	// Config file.
	if configPath == "" {
		configPath = getenv("ACU_CONFIG")
	}
	explicit := configPath != ""
	if configPath == "" {
		base := getenv("XDG_CONFIG_HOME")
		if base == "" && getenv("HOME") != "" {
			base = filepath.Join(getenv("HOME"), ".config")
		}
		if base != "" {
			configPath = filepath.Join(base, "acu", "acu.env")
		}
	}
	if configPath != "" {
		f, err := os.Open(configPath)
		switch {
		case err == nil:
			err = applyFile(c, f, configPath)
			f.Close()
			if err != nil {
				return nil, nil, nil, err
			}
		case explicit || !errors.Is(err, os.ErrNotExist):
			return nil, nil, nil, fmt.Errorf("read config file %s: %w", configPath, err)
		}
	}
	// Environment.
	known := map[string]bool{"ACU_CONFIG": true}
	present := map[string]bool{} // set in the environment, possibly to ""
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		present[k] = true
	}
	for _, s := range settings {
		known[s.Env] = true
		if v := getenv(s.Env); v != "" || (s.emptyOK && present[s.Env]) {
			if err := s.set(c, v); err != nil {
				return nil, nil, nil, &Error{Env: s.Env, Value: maskIf(s, v), Accepted: s.Accepted, Source: "environment", Err: err}
			}
		}
	}
	warnings, err := unknownVariables(environ, known)
	if err != nil {
		return nil, nil, nil, err
	}
	sort.Strings(warnings)
	// Flags.
	if fs != nil {
		var ferr error
		fs.Visit(func(f *flag.Flag) {
			if ferr != nil {
				return
			}
			for _, s := range settings {
				if s.Flag == f.Name {
					if err := s.set(c, *flagVals[f.Name]); err != nil {
						ferr = &Error{Env: s.Env, Value: maskIf(s, *flagVals[f.Name]), Accepted: s.Accepted, Source: "flag -" + f.Name, Err: err}
					}
				}
			}
		})
		if ferr != nil {
			return nil, nil, nil, ferr
		}
	}
	if err := c.finish(); err != nil {
		return nil, nil, nil, err
	}
	return c, args, warnings, nil
}

// ownedPrefixes are the environment prefixes acu owns: ACU_* and the
// relay seed's AGENT_*. A variable under one of them that names no setting
// is a typo until shown otherwise.
var ownedPrefixes = []string{"ACU_", "AGENT_"}

// reservedPrefix reports variables acu's own tests and benchmarks pass to
// their child processes; they are not settings.
func reservedPrefix(k string) bool {
	for _, p := range []string{"ACU_TEST_", "ACU_BENCH_"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// unknownVariables warns about every variable under an owned prefix that
// names no setting, with the nearest valid name, and fails when that
// nearest name is a safety setting: ACU_AGENT_CAPTUR_CROP must not leave
// the agent unsandboxed with only a log line to show for it.
func unknownVariables(environ []string, known map[string]bool) ([]string, error) {
	var warnings []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if known[k] || reservedPrefix(k) || !owned(k) {
			continue
		}
		near, ok := nearest(k)
		if ok && near.Safety {
			return nil, fmt.Errorf("environment variable %s names no setting; did you mean %s (%s)? That setting limits what acu may do, so acu will not start while it may be misspelt: fix or unset %s",
				k, near.Env, near.Help, k)
		}
		hint := ""
		if ok {
			hint = "; did you mean " + near.Env + "?"
		}
		warnings = append(warnings, fmt.Sprintf("unknown environment variable %s is ignored%s", k, hint))
	}
	sort.Strings(warnings)
	return warnings, nil
}

func owned(k string) bool {
	for _, p := range ownedPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

func maskIf(s Setting, v string) string {
	if s.Secret {
		return secret.String(v).String()
	}
	return v
}

func suggest(k string) string {
	if s, ok := nearest(k); ok {
		return "; did you mean " + s.Env + "?"
	}
	return ""
}

// nearest is the setting whose name is closest to k, within an edit
// distance of 3 (a dropped, doubled or swapped letter or two).
func nearest(k string) (Setting, bool) {
	var best Setting
	bestD := 4
	for _, s := range settings {
		if d := editDistance(k, s.Env); d < bestD {
			best, bestD = s, d
		}
	}
	return best, bestD < 4
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func applyFile(c *Config, r io.Reader, path string) error {
	byEnv := map[string]Setting{}
	for _, s := range settings {
		byEnv[s.Env] = s
	}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		t = strings.TrimPrefix(t, "export ")
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return fmt.Errorf("config file %s line %d: want KEY=VALUE, got %q", path, line, t)
		}
		k = strings.TrimSpace(k)
		v = unquote(strings.TrimSpace(v))
		s, ok := byEnv[k]
		if !ok {
			return fmt.Errorf("config file %s line %d: unknown setting %s%s (run `acu config --list` for all settings)", path, line, k, suggest(k))
		}
		if err := s.set(c, v); err != nil {
			return &Error{Env: k, Value: maskIf(s, v), Accepted: s.Accepted, Source: fmt.Sprintf("%s line %d", path, line), Err: err}
		}
	}
	return sc.Err()
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// finish resolves derived values and checks cross-field rules.
func (c *Config) finish() error {
	if c.DB == "" {
		c.DB = filepath.Join(c.DataDir, "acu.db")
	}
	if !c.AllowRemote && !isLoopbackHost(c.DaemonHost) {
		return &Error{Env: "ACU_DAEMON_HOST", Value: c.DaemonHost, Source: "configuration",
			Accepted: "a loopback address (127.0.0.1, ::1, localhost), or set ACU_ALLOW_REMOTE=true (flag -allow-remote) to bind beyond loopback",
			Err:      errors.New("binding beyond loopback needs an explicit opt-in")}
	}
	if err := c.checkRelayAuth(); err != nil {
		return err
	}
	for _, n := range c.Notifiers {
		switch n {
		case "exec":
		case "webhook":
			if c.WebhookURL == "" {
				return &Error{Env: "ACU_WEBHOOK_URL", Source: "configuration", Accepted: "an http(s) URL",
					Err: errors.New("the webhook notifier is enabled in ACU_NOTIFIERS but has no URL")}
			}
		default:
			return &Error{Env: "ACU_NOTIFIERS", Value: strings.Join(c.Notifiers, ","), Source: "configuration",
				Accepted: "a comma-separated list of exec, webhook", Err: fmt.Errorf("unknown notifier %q", n)}
		}
	}
	if c.TokenFile != "" {
		if c.Token.Set() {
			return &Error{Env: "ACU_TOKEN_FILE", Value: c.TokenFile, Source: "configuration",
				Accepted: "either ACU_TOKEN or ACU_TOKEN_FILE", Err: errors.New("ACU_TOKEN is set too: set one of them")}
		}
		tok, err := readTokenFile(c.TokenFile)
		if err != nil {
			return &Error{Env: "ACU_TOKEN_FILE", Value: c.TokenFile, Source: "configuration",
				Accepted: "a file holding the token, not readable by others (mode 0400 or 0440)", Err: err}
		}
		c.Token = tok
	}
	if c.MaxTimeout < c.DefaultTimeout {
		return &Error{Env: "ACU_WAIT_MAX_TIMEOUT", Value: c.MaxTimeout.String(), Source: "configuration",
			Accepted: "a duration at least ACU_WAIT_DEFAULT_TIMEOUT (" + c.DefaultTimeout.String() + ")", Err: errors.New("smaller than the default timeout")}
	}
	return nil
}

// readTokenFile reads a token kept in a file, such as a secret a container
// engine mounts. A file others can read is refused: it is the key to the
// desktop. Group-readable is allowed, as container engines and Kubernetes
// mount secrets for a process's group (defaultMode 0440 with fsGroup).
func readTokenFile(path string) (secret.String, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	if m := st.Mode().Perm(); m&0o007 != 0 {
		return "", fmt.Errorf("%s is readable or writable by others (mode %04o): anyone on the machine could control the desktop; chmod 600 it, or mount the secret with mode 0400 (podman --secret NAME,uid=UID,mode=0400; Kubernetes defaultMode: 0440)", path, m)
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("%s holds more than one line or word: it must hold the token alone", path)
	}
	return secret.String(tok), nil
}

// IsLoopbackHost reports whether host (a name or address, without port) is loopback.
func isLoopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.")
}

// TokenPath is where the daemon keeps its generated bearer token.
func (c *Config) TokenPath() string { return filepath.Join(c.DataDir, "token") }

// ScreenshotDir is where saved screenshots go.
func (c *Config) ScreenshotDir() string { return filepath.Join(c.DataDir, "screenshots") }

// RecordingDir is where recordings are written.
func (c *Config) RecordingDir() string { return filepath.Join(c.DataDir, "recordings") }

// Addr is the daemon's listen address.
func (c *Config) Addr() string {
	h := c.DaemonHost
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		h = "[" + h + "]"
	}
	return fmt.Sprintf("%s:%d", h, c.DaemonPort)
}

// DialAddr is where a client on this machine reaches the daemon: Addr,
// except that a daemon listening on every address (0.0.0.0 or ::, as in a
// container) is dialled on loopback, so the Host a client sends, and the
// links the daemon makes from it (acu open), name 127.0.0.1.
func (c *Config) DialAddr() string {
	switch strings.Trim(c.DaemonHost, "[]") {
	case "0.0.0.0", "":
		return fmt.Sprintf("127.0.0.1:%d", c.DaemonPort)
	case "::":
		return fmt.Sprintf("[::1]:%d", c.DaemonPort)
	}
	return c.Addr()
}

// Dump writes every setting as KEY=VALUE with secrets redacted.
func (c *Config) Dump(w io.Writer, withHelp bool) {
	for _, s := range settings {
		v := s.get(c)
		if s.Secret && v != "" {
			v = "REDACTED"
		}
		if s.Env == "ACU_DB" {
			v = RedactDB(v)
		}
		if withHelp {
			fmt.Fprintf(w, "# %s\n#   accepted: %s; default: %q", s.Help, s.Accepted, s.Default)
			if s.Flag != "" {
				fmt.Fprintf(w, "; flag: -%s", s.Flag)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s=%s\n", s.Env, v)
	}
}

// RedactDB returns the database setting (ACU_DB) fit for logs and output:
// a PostgreSQL URL's password replaced by REDACTED; a file path as is.
func RedactDB(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.User == nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return v
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "REDACTED")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "REDACTED")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
