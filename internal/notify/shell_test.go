package notify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A template that splices {message} into code a shell or an interpreter
// runs is warned about; passing it as an argument of its own is not.
func TestExecWarnings(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		warn bool
	}{
		{`sh -c 'echo {message} >> /tmp/wakes'`, true},
		{`bash -lc "notify-send acu {message}"`, true},
		{`/usr/bin/env FOO=1 sh -ec 'echo "{message}"'`, true},
		{`busybox sh -c 'echo {message}'`, true},
		{`python3 -c 'print("{message}")'`, true},
		{`perl -e 'print "{message}"'`, true},
		{`sh -c 'printf "%s\n" "$1" >> /tmp/wakes' sh {message}`, false},
		{`sh -c 'notify-send acu "$ACU_MESSAGE"'`, false},
		{`notify-send acu {message}`, false},
		{`sh /usr/local/bin/wake.sh {message}`, false},
		{`python3 wake.py {message}`, false},
		{`openclaw system event --text {message} --mode now`, false},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			e, err := NewExec(ExecOptions{Command: tc.cmd})
			if err != nil {
				t.Fatal(err)
			}
			w := e.Warnings()
			if (len(w) > 0) != tc.warn {
				t.Fatalf("Warnings(%q) = %q, want a warning: %v", tc.cmd, w, tc.warn)
			}
			if tc.warn && (!strings.Contains(w[0], "runs as code") || !strings.Contains(w[0], "$ACU_MESSAGE")) {
				t.Errorf("warning %q does not say the risk and the way out", w[0])
			}
		})
	}
}

// A command that needs a shell gets the message in $ACU_MESSAGE and on
// standard input, verbatim: shell syntax in it stays text.
func TestExecMessageInEnvAndStdin(t *testing.T) {
	dir := t.TempDir()
	envOut, stdinOut, canary := filepath.Join(dir, "env"), filepath.Join(dir, "stdin"), filepath.Join(dir, "canary")
	e, err := NewExec(ExecOptions{Command: `sh -c 'printf %s "$ACU_MESSAGE" > "$1"; cat > "$2"; printf %s "$ACU_RUN_ID $ACU_EVENT $ACU_NOTIFY_KEY" >> "$1"' sh ` +
		quoteArg(envOut) + " " + quoteArg(stdinOut)})
	if err != nil {
		t.Fatal(err)
	}
	if w := e.Warnings(); len(w) != 0 {
		t.Errorf("Warnings() = %q, want none", w)
	}
	msg := "[smart_wait resolved] Job wait_1: \"$(touch " + canary + ")\" `id` ; rm -rf x\nline 2 → done"
	if err := e.Notify(t.Context(), Delivery{Message: msg, RunID: "wait_1", Event: "resolved", BaseKey: "wait_1:resolved"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(envOut); string(b) != msg+"wait_1 resolved wait_1:resolved" {
		t.Errorf("$ACU_MESSAGE… = %q, want %q", b, msg+"wait_1 resolved wait_1:resolved")
	}
	if b, _ := os.ReadFile(stdinOut); string(b) != msg {
		t.Errorf("stdin = %q, want %q", b, msg)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Errorf("the message ran as shell code: %s exists", canary)
	}
}
