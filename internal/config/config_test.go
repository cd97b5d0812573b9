package config

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) (func(string) string, []string) {
	var environ []string
	for k, v := range m {
		environ = append(environ, k+"="+v)
	}
	return func(k string) string { return m[k] }, environ
}

func TestDefaults(t *testing.T) {
	getenv, environ := env(map[string]string{"HOME": "/home/u"})
	c, _, warnings, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr() != "127.0.0.1:18790" {
		t.Errorf("Addr() = %q, want 127.0.0.1:18790", c.Addr())
	}
	if c.DataDir != "/home/u/.local/state/acu" || c.DB != "/home/u/.local/state/acu/acu.db" {
		t.Errorf("DataDir, DB = %q, %q", c.DataDir, c.DB)
	}
	if c.FrameMaxDim != 960 || c.FrameQuality != 72 || c.OpenRouterModel != "google/gemini-2.0-flash-lite-001" || c.PollInterval != time.Second || c.EventRetention != 720*time.Hour {
		t.Errorf("seed defaults wrong: %+v", c)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %v", warnings)
	}
}

func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "acu.env")
	os.WriteFile(file, []byte("# comment\nACU_DAEMON_PORT=1111\nACU_FRAME_MAX_DIM=800\nexport ACU_POLL_INTERVAL=\"2s\"\n"), 0o600)
	getenv, environ := env(map[string]string{"ACU_CONFIG": file, "ACU_DAEMON_PORT": "2222", "ACU_DATA_DIR": dir})
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c, rest, _, err := Load(getenv, environ, fs, []string{"-port", "3333", "extra"})
	if err != nil {
		t.Fatal(err)
	}
	if c.DaemonPort != 3333 || c.FrameMaxDim != 800 || c.PollInterval != 2*time.Second || c.DB != filepath.Join(dir, "acu.db") {
		t.Errorf("got port %d maxdim %d poll %s db %s", c.DaemonPort, c.FrameMaxDim, c.PollInterval, c.DB)
	}
	if len(rest) != 1 || rest[0] != "extra" {
		t.Errorf("rest = %v", rest)
	}
}

func TestBadValuesNameTheVariable(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantEnv string
		want    string
	}{
		{"port not a number", map[string]string{"ACU_DAEMON_PORT": "http"}, "ACU_DAEMON_PORT", "1 to 65535"},
		{"port out of range", map[string]string{"ACU_DAEMON_PORT": "70000"}, "ACU_DAEMON_PORT", "out of range"},
		{"unknown backend", map[string]string{"ACU_VISION_BACKEND": "gpt9"}, "ACU_VISION_BACKEND", "openrouter, ollama"},
		{"bad duration", map[string]string{"ACU_POLL_INTERVAL": "soon"}, "ACU_POLL_INTERVAL", "duration"},
		{"remote bind", map[string]string{"ACU_DAEMON_HOST": "0.0.0.0"}, "ACU_DAEMON_HOST", "ACU_ALLOW_REMOTE"},
		{"bad notifier", map[string]string{"ACU_NOTIFIERS": "exec,pager"}, "ACU_NOTIFIERS", "exec, webhook"},
		{"webhook without url", map[string]string{"ACU_NOTIFIERS": "webhook"}, "ACU_WEBHOOK_URL", "no URL"},
		{"a11y judge neither on nor off", map[string]string{"ACU_JUDGE_A11Y": "maybe"}, "ACU_JUDGE_A11Y", "true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv, environ := env(tt.env)
			_, _, _, err := Load(getenv, environ, nil, nil)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load() error = %v, want *config.Error", err)
			}
			if ce.Env != tt.wantEnv || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.wantEnv) {
				t.Errorf("Load() error = %q, want it to name %s and say %q", err, tt.wantEnv, tt.want)
			}
		})
	}
}

func TestRemoteBindWithOptIn(t *testing.T) {
	getenv, environ := env(map[string]string{"ACU_DAEMON_HOST": "0.0.0.0", "ACU_ALLOW_REMOTE": "true"})
	if _, _, _, err := Load(getenv, environ, nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownVariablesWarnAndFileRejects(t *testing.T) {
	getenv, environ := env(map[string]string{"ACU_DAEMON_PROT": "1"})
	_, _, warnings, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "did you mean ACU_DAEMON_PORT") {
		t.Errorf("warnings = %v", warnings)
	}
	file := filepath.Join(t.TempDir(), "acu.env")
	os.WriteFile(file, []byte("ACU_DAEMON_PROT=1\n"), 0o600)
	getenv, environ = env(map[string]string{"ACU_CONFIG": file})
	if _, _, _, err := Load(getenv, environ, nil, nil); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("Load() error = %v, want unknown setting at line 1", err)
	}
}

func TestDumpRedactsSecrets(t *testing.T) {
	getenv, environ := env(map[string]string{"OPENROUTER_API_KEY": "sk-or-secret", "ACU_TOKEN": "tok-secret"})
	c, _, _, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	c.Dump(&b, true)
	if strings.Contains(b.String(), "sk-or-secret") || strings.Contains(b.String(), "tok-secret") {
		t.Errorf("Dump leaks a secret:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "OPENROUTER_API_KEY=REDACTED") {
		t.Errorf("Dump does not show the key as REDACTED")
	}
	c.Dump(io.Discard, false)
}

// TestTyposUnderEveryOwnedPrefix (issue 17 item 12): a misspelt name under
// ACU_AGENT_, ACU_RELAY_, ACU_TASK_ or the relay seed's AGENT_ warns with
// the nearest valid name; one near a safety setting stops start-up.
func TestTyposUnderEveryOwnedPrefix(t *testing.T) {
	for typo, want := range map[string]string{
		"ACU_AGENT_MODLE":       "ACU_AGENT_MODEL",
		"ACU_RELAY_CALL_TIMOUT": "ACU_RELAY_CALL_TIMEOUT",
		"ACU_TASK_FAST_MODLE":   "ACU_TASK_FAST_MODEL",
		"AGENT_INTERVAL_SM":     "AGENT_INTERVAL_MS",
		"AGENT_MODLE":           "AGENT_MODEL",
	} {
		getenv, environ := env(map[string]string{typo: "x"})
		_, _, warnings, err := Load(getenv, environ, nil, nil)
		if err != nil {
			t.Errorf("%s: Load() error %v, want a warning", typo, err)
			continue
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], typo) || !strings.Contains(warnings[0], "did you mean "+want+"?") {
			t.Errorf("%s: warnings = %v, want one naming %s", typo, warnings, want)
		}
	}
	for typo, want := range map[string]string{
		"ACU_AGENT_CAPTUR_CROP":       "ACU_AGENT_CAPTURE_CROP",
		"ACU_AGENT_MAX_COST_US":       "ACU_AGENT_MAX_COST_USD",
		"ACU_AGENT_PHYSICAL_EXECUTON": "ACU_AGENT_PHYSICAL_EXECUTION",
		"ACU_EXCLUDE_WINDOW":          "ACU_EXCLUDE_WINDOWS",
		"ACU_TASK_PAUSE_ON_IMPUT":     "ACU_TASK_PAUSE_ON_INPUT",
		"ACU_RELAY_TOKN":              "ACU_RELAY_TOKEN",
	} {
		getenv, environ := env(map[string]string{typo: "s3cret-value"})
		_, _, _, err := Load(getenv, environ, nil, nil)
		if err == nil || !strings.Contains(err.Error(), typo) || !strings.Contains(err.Error(), "did you mean "+want) {
			t.Errorf("%s: Load() error = %v, want a refusal naming %s", typo, err, want)
			continue
		}
		if strings.Contains(err.Error(), "s3cret-value") {
			t.Errorf("%s: the error shows the variable's value: %v", typo, err)
		}
	}
	// Variables acu's own tests pass to child processes, and names far
	// from every setting under other prefixes, are left alone.
	getenv, environ := env(map[string]string{"ACU_TEST_HELPER": "1", "ACU_BENCH_X": "1", "PATH": "/bin", "SSH_AGENT_PID": "1"})
	if _, _, warnings, err := Load(getenv, environ, nil, nil); err != nil || len(warnings) != 0 {
		t.Errorf("Load() = %v, %v; want no warnings", warnings, err)
	}
}

func TestMemoryLimit(t *testing.T) {
	for in, want := range map[string]int64{"": 120 << 20, "0": 0, "256MiB": 256 << 20, "1GiB": 1 << 30, "500MB": 500e6, "1048576": 1 << 20, " 64 MiB ": 64 << 20} {
		m := map[string]string{}
		if in != "" {
			m["ACU_MEMORY_LIMIT"] = in
		}
		getenv, environ := env(m)
		c, _, _, err := Load(getenv, environ, nil, nil)
		if err != nil || c.MemoryLimit != want {
			t.Errorf("ACU_MEMORY_LIMIT=%q: %d, %v; want %d", in, c.MemoryLimit, err, want)
		}
	}
	for _, in := range []string{"-1", "12XB", "MiB", "1.5GiB", "99999999999GiB"} {
		getenv, environ := env(map[string]string{"ACU_MEMORY_LIMIT": in})
		if _, _, _, err := Load(getenv, environ, nil, nil); err == nil || !strings.Contains(err.Error(), "ACU_MEMORY_LIMIT") {
			t.Errorf("ACU_MEMORY_LIMIT=%q: error %v, want one naming the variable", in, err)
		}
	}
	for n, want := range map[int64]string{120 << 20: "120MiB", 1 << 30: "1GiB", 1536: "1536", 3 << 10: "3KiB", 0: "0"} {
		if got := FormatByteSize(n); got != want {
			t.Errorf("FormatByteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// ACU_NOTIFIERS= (set but empty) means no notifier, as documented; unset
// keeps the default. An empty non-list variable stays "as if unset".
func TestEmptyListMeansNone(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"unset", map[string]string{"HOME": "/home/u"}, []string{"exec"}},
		{"empty", map[string]string{"HOME": "/home/u", "ACU_NOTIFIERS": ""}, nil},
		{"blank", map[string]string{"HOME": "/home/u", "ACU_NOTIFIERS": " "}, nil},
		{"webhook", map[string]string{"HOME": "/home/u", "ACU_NOTIFIERS": "webhook", "ACU_WEBHOOK_URL": "http://127.0.0.1:1/h"}, []string{"webhook"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv, environ := env(tc.env)
			c, _, _, err := Load(getenv, environ, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Notifiers, tc.want) {
				t.Errorf("Notifiers = %q, want %q", c.Notifiers, tc.want)
			}
		})
	}
	getenv, environ := env(map[string]string{"HOME": "/home/u", "ACU_DAEMON_PORT": ""})
	c, _, _, err := Load(getenv, environ, nil, nil)
	if err != nil || c.DaemonPort != 18790 {
		t.Errorf("ACU_DAEMON_PORT= gives port %d, %v; want the default", c.DaemonPort, err)
	}
}

// A PostgreSQL password in ACU_DB never reaches acu config's output or a
// log line; a SQLite path is shown as is.
func TestRedactDB(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/acu/acu.db":                               "/var/lib/acu/acu.db",
		"postgres://acu:s3cret@db:5432/acu?sslmode=require": "postgres://acu:REDACTED@db:5432/acu?sslmode=require",
		"postgresql://acu@db/acu?password=s3cret":           "postgresql://acu@db/acu?password=REDACTED",
		"postgres://acu@db/acu":                             "postgres://acu@db/acu",
	} {
		if got := RedactDB(in); got != want {
			t.Errorf("RedactDB(%q) = %q, want %q", in, got, want)
		}
	}
	getenv, environ := env(map[string]string{"HOME": "/home/u", "ACU_DB": "postgres://acu:s3cret@db/acu"})
	c, _, _, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	c.Dump(&b, false)
	if strings.Contains(b.String(), "s3cret") || !strings.Contains(b.String(), "ACU_DB=postgres://acu:REDACTED@db/acu") {
		t.Errorf("acu config shows ACU_DB as:\n%s", grepLine(b.String(), "ACU_DB"))
	}
}

func grepLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// ACU_JUDGE_A11Y is on by default and off with off (or false, 0, no).
func TestJudgeA11ySetting(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{{"", true}, {"on", true}, {"off", false}, {"OFF", false}, {"false", false}, {"1", true}} {
		vars := map[string]string{}
		if tc.value != "" {
			vars["ACU_JUDGE_A11Y"] = tc.value
		}
		getenv, environ := env(vars)
		c, _, _, err := Load(getenv, environ, nil, nil)
		if err != nil {
			t.Fatalf("ACU_JUDGE_A11Y=%q: %v", tc.value, err)
		}
		if c.JudgeA11y != tc.want {
			t.Errorf("ACU_JUDGE_A11Y=%q: JudgeA11y = %v, want %v", tc.value, c.JudgeA11y, tc.want)
		}
	}
}
