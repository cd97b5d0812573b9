package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// runInstall writes systemd user units that keep the daemon up.
func runInstall(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "install", "--user [--force] [--dry-run]")
	user := fs.Bool("user", false, "write systemd user units under $XDG_CONFIG_HOME/systemd/user (default ~/.config/systemd/user)")
	force := fs.Bool("force", false, "replace a unit file that differs from the one acu would write")
	dry := fs.Bool("dry-run", false, "print the unit instead of writing it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !*user {
		fs.Usage()
		return fmt.Errorf("install: pass --user (acu installs systemd user units only: the daemon drives your own X session)")
	}
	c, err := loadConfig(e)
	if err != nil {
		return err
	}
	self, err := acuBinary()
	if err != nil {
		return err
	}
	dataDir, err := filepath.Abs(c.DataDir)
	if err != nil {
		return err
	}
	dir, err := userUnitDir(e.getenv)
	if err != nil {
		return err
	}
	unit := serviceUnit(self, dataDir, e.getenv)
	path := filepath.Join(dir, "acu.service")
	if *dry {
		fmt.Fprintf(e.stdout, "# %s\n%s", path, unit)
		return nil
	}
	if old, err := os.ReadFile(path); err == nil && !bytes.Equal(old, []byte(unit)) && !*force {
		return fmt.Errorf("%s exists and differs from the unit acu would write: pass --force to replace it (or --dry-run to compare)", path)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(e.stdout, `wrote %s

Enable and start it:
  systemctl --user daemon-reload
  systemctl --user import-environment DISPLAY XAUTHORITY   # the X session the daemon drives
  systemctl --user enable --now acu.service
Keep it running after you log out (optional):
  loginctl enable-linger "$USER"
Check it: systemctl --user status acu.service; acu doctor
Remove it: systemctl --user disable --now acu.service && rm %s

With the daemon up, acu mcp relays to it and never starts one of its own.
`, path, path)
	return nil
}

// acuBinary is the path of this acu binary, symbolic links resolved.
func acuBinary() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the acu binary: %w", err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return "", fmt.Errorf("find the acu binary: %w", err)
	}
	return self, nil
}

// userUnitDir is systemd's user unit directory: $XDG_CONFIG_HOME/systemd/user,
// else ~/.config/systemd/user.
func userUnitDir(getenv func(string) string) (string, error) {
	base := getenv("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) { // the XDG spec ignores relative values
		home := getenv("HOME")
		if home == "" {
			return "", fmt.Errorf("install: neither XDG_CONFIG_HOME nor HOME is set: cannot find the systemd user unit directory")
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "systemd", "user"), nil
}

// serviceUnit is acu.service: `acu serve` on dataDir, restarted when it
// fails. ACU_CONFIG and ACU_DAEMON_PORT are kept when they are set here, so
// the unit's daemon is the one this environment's `acu mcp` looks for.
func serviceUnit(bin, dataDir string, getenv func(string) string) string {
	var b strings.Builder
	b.WriteString(`[Unit]
Description=acu daemon: smart waits, screenshots and input on the X desktop for LLM agents
After=graphical-session.target

[Service]
Type=simple
`)
	fmt.Fprintf(&b, "ExecStart=%s serve\n", execQuote(bin))
	fmt.Fprintf(&b, "Environment=%s\n", systemdQuote("ACU_DATA_DIR="+dataDir))
	for _, k := range []string{"ACU_CONFIG", "ACU_DAEMON_PORT"} {
		if v := getenv(k); v != "" {
			if k == "ACU_CONFIG" && !filepath.IsAbs(v) {
				if abs, err := filepath.Abs(v); err == nil {
					v = abs
				}
			}
			fmt.Fprintf(&b, "Environment=%s\n", systemdQuote(k+"="+v))
		}
	}
	b.WriteString(`Restart=on-failure
RestartSec=2
# SIGTERM: acu stops taking requests, leaves live waits in the store and
# resumes them at the next start.
KillMode=mixed
TimeoutStopSec=30

[Install]
WantedBy=default.target
`)
	return b.String()
}

// systemdQuote quotes s for a unit file's Environment: double quotes,
// backslash escapes, and % doubled so systemd does not read a specifier.
func systemdQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `%`, `%%`)
	return `"` + r.Replace(s) + `"`
}

// execQuote quotes s for ExecStart, where $ also expands variables.
func execQuote(s string) string { return strings.ReplaceAll(systemdQuote(s), "$", "$$") }
