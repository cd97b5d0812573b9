package notify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Defaults of ExecOptions.
const (
	DefaultOpenClawCLI = "openclaw"
	// DefaultExecTimeout bounds one exec attempt. The real OpenClaw CLI
	// took 5-22 s per call on a loaded machine; a kill after the gateway
	// accepted the event duplicates the wake on retry, so the bound is
	// generous (ACU_NOTIFY_EXEC_TIMEOUT).
	DefaultExecTimeout = 120 * time.Second
	DefaultMaxOutput   = 4 << 10
	// maxArgLen is Linux's MAX_ARG_STRLEN: execve refuses a longer argument.
	maxArgLen = 128 << 10
)

// Placeholders substituted inside the arguments of an exec command template.
// Substitution happens after the template is split into arguments and in one
// pass, so a message containing spaces, quotes or another placeholder stays
// one argument, verbatim.
const (
	PlaceholderMessage = "{message}"
	PlaceholderRunID   = "{run_id}"
	PlaceholderEvent   = "{event}"
	PlaceholderKey     = "{key}"
)

// ExecOptions configures the exec notifier.
type ExecOptions struct {
	// Name is the notifier's name in outbox rows; default "exec".
	Name string
	// CLI is the OpenClaw CLI used by the default command line
	// "<CLI> system event --text {message} --mode now"; default "openclaw".
	// It is one path, never split.
	CLI string
	// Command, when set, replaces the whole command line: a template split
	// by SplitCommand, whose arguments may hold {message}, {run_id}, {event}
	// and {key}. It must hold {message} in an argument after the program.
	Command string
	// Timeout bounds each attempt; the process group is killed after it.
	// Default DefaultExecTimeout (120 s).
	Timeout time.Duration
	// MaxOutput is how many bytes of the command's combined output (the tail)
	// are kept for the failure reason; default 4 KiB.
	MaxOutput int
	// Env is the command's environment; nil inherits acu's.
	Env []string
	// Dir is the working directory; empty means acu's.
	Dir    string
	Logger *slog.Logger
}

// Exec runs a command per delivery, never through a shell: the message is
// one argument of its own, and also in $ACU_MESSAGE and on standard input.
// Success is exit status 0.
type Exec struct {
	name      string
	argv      []string
	timeout   time.Duration
	maxOutput int
	env       []string
	dir       string
	log       *slog.Logger
}

// NewExec validates opts and returns the notifier.
func NewExec(opts ExecOptions) (*Exec, error) {
	e := &Exec{
		name:      cmp.Or(opts.Name, "exec"),
		timeout:   opts.Timeout,
		maxOutput: opts.MaxOutput,
		env:       opts.Env,
		dir:       opts.Dir,
		log:       opts.Logger,
	}
	if e.timeout <= 0 {
		e.timeout = DefaultExecTimeout
	}
	if e.maxOutput <= 0 {
		e.maxOutput = DefaultMaxOutput
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if opts.Command == "" {
		e.argv = []string{cmp.Or(opts.CLI, DefaultOpenClawCLI), "system", "event", "--text", PlaceholderMessage, "--mode", "now"}
		return e, nil
	}
	argv, err := SplitCommand(opts.Command)
	if err != nil {
		return nil, fmt.Errorf("exec notifier %q: %w", e.name, err)
	}
	if !hasPlaceholder(argv[1:], PlaceholderMessage) && !hasPlaceholder(argv[1:], EnvMessage) {
		return nil, fmt.Errorf("exec notifier %q: command template %q passes no %s argument and reads no $%s: add one so the agent receives the message", e.name, opts.Command, PlaceholderMessage, EnvMessage)
	}
	e.argv = argv
	return e, nil
}

func hasPlaceholder(args []string, p string) bool {
	for _, a := range args {
		if strings.Contains(a, p) {
			return true
		}
	}
	return false
}

// Name implements Notifier.
func (e *Exec) Name() string { return e.name }

// Argv returns the command template split into arguments, placeholders
// unsubstituted (for `acu doctor` and `acu config`).
func (e *Exec) Argv() []string { return append([]string(nil), e.argv...) }

// Check reports a program that cannot be found or run, so the problem shows
// at start-up and in `acu doctor` rather than at the first wake.
func (e *Exec) Check() error {
	if _, err := exec.LookPath(e.argv[0]); err != nil {
		return fmt.Errorf("exec notifier %q: program %q not found or not executable (%v): install it, or point ACU_OPENCLAW_CLI or ACU_NOTIFY_COMMAND at a program that exists", e.name, e.argv[0], unwrapExecErr(err))
	}
	return nil
}

func unwrapExecErr(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

// args substitutes the placeholders into every argument after the program.
func (e *Exec) args(d Delivery) []string {
	r := strings.NewReplacer(
		PlaceholderMessage, d.Message,
		PlaceholderRunID, d.RunID,
		PlaceholderEvent, d.Event,
		PlaceholderKey, d.BaseKey,
	)
	out := make([]string, len(e.argv)-1)
	for i, a := range e.argv[1:] {
		if strings.IndexByte(a, '{') >= 0 {
			a = r.Replace(a)
		}
		out[i] = a
	}
	return out
}

// Notify implements Notifier: it runs the command once and waits for it, at
// most the configured timeout, then kills its whole process group.
func (e *Exec) Notify(ctx context.Context, d Delivery) error {
	ctx, cancel := context.WithTimeoutCause(ctx, e.timeout, errAttemptTimeout)
	defer cancel()

	args := e.args(d)
	if strings.IndexByte(d.Message, 0) >= 0 {
		return &PermanentError{Err: fmt.Errorf("run %q: the message holds a NUL byte, which no program can receive: the message cannot be delivered by exec", e.argv[0])}
	}
	for _, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return &PermanentError{Err: fmt.Errorf("run %q: an argument holds a NUL byte, which no program can receive: the message cannot be delivered by exec", e.argv[0])}
		}
		if len(a) >= maxArgLen {
			return &PermanentError{Err: fmt.Errorf("run %q: an argument is %d bytes, over the kernel's %d-byte limit for one argument: the message cannot be delivered by exec", e.argv[0], len(a), maxArgLen)}
		}
	}
	env := e.env
	if env == nil {
		env = os.Environ()
	}
	cmd := exec.CommandContext(ctx, e.argv[0], args...)
	cmd.Env = append(env[:len(env):len(env)],
		EnvMessage+"="+d.Message, EnvRunID+"="+d.RunID, EnvEvent+"="+d.Event, EnvKey+"="+d.BaseKey)
	cmd.Stdin = strings.NewReader(d.Message)
	cmd.Dir = e.dir
	out := &tailBuffer{max: e.maxOutput}
	cmd.Stdout = out
	cmd.Stderr = out
	// A group of its own, so a timeout also kills what the command started
	// (sh -c 'sleep 100' must not outlive the attempt).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second

	start := time.Now()
	err := cmd.Run()
	e.log.Debug("exec notifier attempt", "notifier", e.name, "run_id", d.RunID, "key", d.Key,
		"attempt", d.Attempt, "took", time.Since(start), "err", err)
	if err == nil {
		return nil
	}
	reason := err.Error()
	if ctx.Err() != nil {
		if context.Cause(ctx) == errAttemptTimeout {
			reason = fmt.Sprintf("timed out after %s and was killed", e.timeout)
		} else {
			reason = "interrupted: " + context.Cause(ctx).Error()
		}
	}
	if o := out.String(); o != "" {
		return fmt.Errorf("run %q: %s; output: %s", e.argv[0], reason, o)
	}
	return fmt.Errorf("run %q: %s", e.argv[0], reason)
}

// tailBuffer keeps the last max bytes written to it. exec.Cmd calls Write
// from one goroutine when Stdout and Stderr are the same writer.
type tailBuffer struct {
	max     int
	buf     []byte
	dropped int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= b.max {
		b.dropped += len(b.buf) + len(p) - b.max
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return n, nil
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.dropped += over
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

func (b *tailBuffer) String() string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(b.buf), "\uFFFD"))
	if b.dropped > 0 && s != "" {
		return fmt.Sprintf("[%d bytes cut] …%s", b.dropped, s)
	}
	return s
}
