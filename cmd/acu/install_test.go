package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInstallUser runs `acu install --user` and reads what it wrote. There
// is no systemd here: the test checks the files, not their activation.
func TestInstallUser(t *testing.T) {
	env, dataDir, port := newEnv(t, ":0")
	bin, err := filepath.EvalSymlinks(acuBin)
	if err != nil {
		t.Fatal(err)
	}
	want := `[Unit]
Description=acu daemon: smart waits, screenshots and input on the X desktop for LLM agents
After=graphical-session.target

[Service]
Type=simple
ExecStart="` + bin + `" serve
Environment="ACU_DATA_DIR=` + dataDir + `"
Environment="ACU_DAEMON_PORT=` + strconv.Itoa(port) + `"
Restart=on-failure
RestartSec=2
# SIGTERM: acu stops taking requests, leaves live waits in the store and
# resumes them at the next start.
KillMode=mixed
TimeoutStopSec=30

[Install]
WantedBy=default.target
`
	// newEnv sets XDG_CONFIG_HOME to the data directory.
	unit := filepath.Join(dataDir, "systemd", "user", "acu.service")
	out, errOut, code := acu(t, env, "install", "--user")
	if code != 0 {
		t.Fatalf("acu install --user = %d: %s", code, errOut)
	}
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatalf("acu install --user wrote no %s: %v (stdout %q)", unit, err, out)
	}
	if d := cmp.Diff(want, string(b)); d != "" {
		t.Errorf("acu.service (-want +got):\n%s", d)
	}
	for _, s := range []string{"wrote " + unit, "systemctl --user daemon-reload", "systemctl --user enable --now acu.service", "import-environment DISPLAY"} {
		if !strings.Contains(out, s) {
			t.Errorf("acu install --user printed %q, want it to say %q", out, s)
		}
	}

	// Again: the same unit, no complaint. Edited by hand: kept unless --force.
	if _, errOut, code := acu(t, env, "install", "--user"); code != 0 {
		t.Errorf("second acu install --user = %d: %s", code, errOut)
	}
	if err := os.WriteFile(unit, []byte("[Service]\nExecStart=/bin/true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := acu(t, env, "install", "--user"); code == 0 || !strings.Contains(errOut, "--force") {
		t.Errorf("acu install --user over an edited unit = %d %q, want a refusal naming --force", code, errOut)
	}
	if _, errOut, code := acu(t, env, "install", "--user", "--force"); code != 0 {
		t.Errorf("acu install --user --force = %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(unit); string(b) != want {
		t.Errorf("after --force the unit is %q", b)
	}

	// --dry-run prints and writes nothing.
	dry := filepath.Join(t.TempDir(), "cfg")
	out, _, code = acu(t, append(env, "XDG_CONFIG_HOME="+dry), "install", "--user", "--dry-run")
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("acu install --user --dry-run = %d %q", code, out)
	}
	if _, err := os.Stat(dry); !os.IsNotExist(err) {
		t.Errorf("--dry-run created %s", dry)
	}

	// Without --user: refused.
	if _, errOut, code := acu(t, env, "install"); code == 0 || !strings.Contains(errOut, "--user") {
		t.Errorf("acu install = %d %q, want a refusal naming --user", code, errOut)
	}
}

func TestUserUnitDir(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{"XDG_CONFIG_HOME", map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/a"}, "/x/cfg/systemd/user", false},
		{"HOME", map[string]string{"HOME": "/home/a"}, "/home/a/.config/systemd/user", false},
		{"relative XDG_CONFIG_HOME ignored", map[string]string{"XDG_CONFIG_HOME": "cfg", "HOME": "/home/a"}, "/home/a/.config/systemd/user", false},
		{"neither", map[string]string{}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := userUnitDir(func(k string) string { return tt.env[k] })
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("userUnitDir = %q, %v; want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestSystemdQuote(t *testing.T) {
	for in, want := range map[string]string{
		`/usr/bin/acu`:          `"/usr/bin/acu"`,
		`/opt/my acu/acu`:       `"/opt/my acu/acu"`,
		`/home/a/100%/x`:        `"/home/a/100%%/x"`,
		`/home/"q"\b`:           `"/home/\"q\"\\b"`,
		`ACU_DATA_DIR=/s/$HOME`: `"ACU_DATA_DIR=/s/$HOME"`,
	} {
		if got := systemdQuote(in); got != want {
			t.Errorf("systemdQuote(%s) = %s, want %s", in, got, want)
		}
	}
	if got := execQuote(`/opt/$x/acu`); got != `"/opt/$$x/acu"` {
		t.Errorf("execQuote = %s", got)
	}
}
