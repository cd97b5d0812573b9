package smartwait

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// tmuxArgs prefixes args with the configured server socket.
func (e *Engine) tmuxArgs(args ...string) []string {
	var out []string
	switch s := e.opts.TmuxSocket; {
	case s == "":
	case strings.Contains(s, "/"):
		out = append(out, "-S", s)
	default:
		out = append(out, "-L", s)
	}
	return append(out, args...)
}

// tmuxHasSession reports whether the tmux server knows session (exact name).
func (e *Engine) tmuxHasSession(ctx context.Context, session string) bool {
	if _, err := exec.LookPath(e.opts.TmuxBinary); err != nil {
		return false
	}
	cmd := exec.CommandContext(ctx, e.opts.TmuxBinary, e.tmuxArgs("has-session", "-t", "="+session)...)
	return cmd.Run() == nil
}

// tmuxCapture returns the visible text of the session's active pane.
func (e *Engine) tmuxCapture(ctx context.Context, session string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, e.opts.TmuxBinary, e.tmuxArgs("capture-pane", "-p", "-t", "="+session+":")...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tmux capture-pane of session %q: %w: %s", session, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
