package launch_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/launch"
)

func TestIsSecret(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        bool
	}{
		{"OPENROUTER_API_KEY", "sk-or-1", true},
		{"ANTHROPIC_API_KEY", "x", true},
		{"ACU_WEBHOOK_SECRET", "x", true},
		{"ACU_DATA_DIR", "/home/u/.local/state/acu", true},
		{"AGENT_MODEL", "m", true},
		{"GITHUB_TOKEN", "ghp_x", true},
		{"AWS_SECRET_ACCESS_KEY", "x", true},
		{"AWS_ACCESS_KEY_ID", "x", true},
		{"SMTP_PASSWORD", "x", true},
		{"smtp_pass", "x", true},
		{"DATABASE_URL", "sqlite:///x", true},
		{"PGPASSWORD", "x", true},
		{"SENTRY_DSN", "https://k@sentry/1", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", "/k.json", true},
		{"BACKUP_TARGET", "postgres://acu:pw@db:5432/acu", true}, // by its value
		{"HOME", "/home/u", false},
		{"PATH", "/usr/bin", false},
		{"XAUTHORITY", "/home/u/.Xauthority", false},
		{"DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus", false},
		{"LANG", "C.UTF-8", false},
		{"HTTP_PROXY", "http://proxy:3128", false},
		{"HOMEPAGE", "https://user@example.com/", false}, // a user, no password
	} {
		if got := launch.IsSecret(tt.name, tt.value); got != tt.want {
			t.Errorf("IsSecret(%q, %q) = %v, want %v", tt.name, tt.value, got, tt.want)
		}
	}
}

func TestCheckEnv(t *testing.T) {
	if err := launch.CheckEnv(map[string]string{"LANG": "de_DE.UTF-8", "_X1": ""}); err != nil {
		t.Errorf("CheckEnv(valid) = %v", err)
	}
	for k, v := range map[string]string{"": "x", "1A": "x", "A-B": "x", "A=B": "x", "OK": "a\x00b"} {
		if err := launch.CheckEnv(map[string]string{k: v}); err == nil {
			t.Errorf("CheckEnv(%q=%q) = nil, want an error", k, v)
		}
	}
}

// TestLaunchedEnvHasNoSecrets: a real child started with Env sees none of
// the daemon's secrets, sees the allowed one and everything ordinary.
func TestLaunchedEnvHasNoSecrets(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env")
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/u", "LANG=C.UTF-8",
		"OPENROUTER_API_KEY=sk-or-secret", "ACU_WEBHOOK_SECRET=hook-secret", "ACU_TOKEN=acu_secret",
		"DATABASE_URL=postgres://acu:pw@db/acu", "PGPASSWORD=pgpw", "GITHUB_TOKEN=ghp_secret", "AGENT_API_KEY=agent-secret",
		"MY_API_KEY=wanted"}
	env := launch.Env(base, ":42", "", []string{"MY_API_KEY"})
	p, err := launch.Start(launch.Spec{Argv: []string{"sh", "-c", "env > " + out}, Env: env}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, kv := range got {
		for _, s := range []string{"secret", "pgpw", "pw@"} {
			if strings.Contains(kv, s) {
				t.Errorf("child's environment has %q", kv)
			}
		}
	}
	for _, want := range []string{"HOME=/home/u", "LANG=C.UTF-8", "DISPLAY=:42", "MY_API_KEY=wanted"} {
		if !slices.Contains(got, want) {
			t.Errorf("child's environment lacks %s:\n%s", want, b)
		}
	}
}
