package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/config"
)

// Exit codes of acu wait.
const (
	exitResolved = 0
	exitFailure  = 1
	exitTimeout  = 2
)

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func runWait(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "wait", `"CONDITION" [flags]   e.g. acu wait '"Download complete" is visible' --timeout 60`)
	timeoutS := fs.String("timeout", "300", "seconds (or a duration like 5m) before giving up")
	target := fs.String("target", "screen", "screen, window:<title or id>, crop:x1,y1,x2,y2 (0..1000), pty:<tmux session>")
	dpy := fs.String("display", "", "X display (default: the daemon's DISPLAY)")
	host := fs.String("host", "", "in a fleet sharing one database: the host (ACU_HOST_ID) whose daemon runs the wait on its display")
	task := fs.String("task", "", "task id whose progress log gets the outcome")
	pollS := fs.String("poll", "", "backstop interval between judgements (default: ACU_POLL_INTERVAL)")
	strict := fs.Bool("strict-target", false, "fail at once when the target window is not open (default: wait for it to open)")
	detach := fs.Bool("detach", false, "print the job id and return at once")
	asJSON := fs.Bool("json", false, "print the final job as JSON")
	explain := fs.Bool("explain", false, "when the wait ends, say which judge decided each part of the condition and from what evidence, and what its judgements cost")
	// Flags before, after or around the condition ("--" ends them).
	cond, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	req := api.CreateWait{Criteria: strings.TrimSpace(strings.Join(cond, " ")), Target: *target, Display: *dpy, TaskID: *task, StrictTarget: *strict, Host: *host}
	if req.Criteria == "" {
		fs.Usage()
		return &exitError{code: exitFailure, msg: "wait: give the condition to wait for"}
	}
	if req.Timeout, req.PollInterval, err = waitTimes(*timeoutS, *pollS); err != nil {
		return err
	}
	cl, _, err := newClient(e)
	if err != nil {
		return err
	}
	job, err := cl.CreateWait(ctx, req)
	if err != nil {
		return err
	}
	if *detach {
		if *asJSON {
			return printJSON(e.stdout, job)
		}
		fmt.Fprintln(e.stdout, job.ID)
		return nil
	}
	return awaitWait(ctx, e, cl, job, *asJSON, *explain)
}

// waitTimes parses --timeout and --poll into seconds.
func waitTimes(timeoutS, pollS string) (timeout, poll float64, err error) {
	t, err := config.ParseDuration(timeoutS)
	if err != nil {
		return 0, 0, &exitError{code: exitFailure, msg: fmt.Sprintf("wait: --timeout %q: %v", timeoutS, err)}
	}
	var p time.Duration
	if pollS != "" {
		if p, err = config.ParseDuration(pollS); err != nil {
			return 0, 0, &exitError{code: exitFailure, msg: fmt.Sprintf("wait: --poll %q: %v", pollS, err)}
		}
	}
	return t.Seconds(), p.Seconds(), nil
}

// awaitWait follows job to its end and prints it (explain: then which judge
// decided what); the exit status says how it ended.
func awaitWait(ctx context.Context, e *env, cl *api.Client, job api.Wait, asJSON, explain bool) error {
	final, err := followWait(ctx, cl, job, e, asJSON)
	if err != nil {
		if ctx.Err() != nil {
			// Interrupted: the job keeps running in the daemon.
			fmt.Fprintf(e.stderr, "\nacu: stopped waiting; job %s keeps running (acu waits cancel %s)\n", job.ID, job.ID)
			return &exitError{code: 130}
		}
		return err
	}
	if asJSON {
		if err := printJSON(e.stdout, final); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(e.stdout, final.Message)
	}
	if explain {
		out := e.stdout
		if asJSON {
			out = e.stderr // stdout stays one JSON document
		}
		if err := explainWait(ctx, cl, out, final); err != nil {
			return err
		}
	}
	switch final.State {
	case "resolved":
		return nil
	case "timeout":
		return &exitError{code: exitTimeout}
	default:
		return &exitError{code: exitFailure, msg: fmt.Sprintf("wait %s ended %s: %s", final.ID, final.State, final.Reason)}
	}
}

// followWait shows progress until the job's run ends and returns the final job.
func followWait(ctx context.Context, cl *api.Client, job api.Wait, e *env, quiet bool) (api.Wait, error) {
	tty := isTerminal(e.stderr) && !quiet
	p := &progress{job: job, tty: tty, w: e.stderr, quiet: quiet}
	fctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = cl.Follow(fctx, api.EventQuery{RunID: job.ID, Streams: []string{"verdict", "lifecycle", "update"}, FromStart: true}, func(ev api.Event) error {
			p.event(ev)
			return nil
		})
	}()
	if tty {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(500 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-fctx.Done():
					return
				case <-t.C:
					p.draw()
				}
			}
		}()
	}
	defer func() { stop(); wg.Wait(); p.done() }()
	for {
		remaining := time.Until(job.Deadline) + 10*time.Second
		_, err := cl.WaitRun(ctx, job.ID, min(max(remaining, 5*time.Second), 10*time.Minute))
		if api.IsCode(err, api.CodeWaitTimeout) {
			if j, gerr := cl.GetWait(ctx, job.ID); gerr == nil {
				job = j // the clock may have been reset by an update
			}
			continue
		}
		if err != nil {
			return api.Wait{}, err
		}
		return cl.GetWait(ctx, job.ID)
	}
}

// progress renders a live line on a terminal, and plain lines otherwise.
type progress struct {
	mu    sync.Mutex
	job   api.Wait
	tty   bool
	quiet bool
	w     interface{ Write([]byte) (int, error) }
	last  string
	evals int
	drawn bool
}

func (p *progress) event(ev api.Event) {
	if ev.Stream != "verdict" {
		return
	}
	var v struct {
		Met      bool    `json:"met"`
		Evidence string  `json:"evidence"`
		Error    string  `json:"error"`
		Skipped  bool    `json:"skipped"`
		Latency  float64 `json:"latencyMs"`
	}
	if json.Unmarshal(ev.Data, &v) != nil || v.Skipped {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.evals++
	switch {
	case v.Error != "":
		p.last = "judge error: " + v.Error
	case v.Met:
		p.last = "YES: " + v.Evidence
	default:
		p.last = "NO: " + v.Evidence
	}
	if p.quiet {
		return
	}
	if !p.tty {
		fmt.Fprintf(p.w, "[%s/%s] %s\n", p.elapsed(), secs(p.job.Timeout), p.last)
		return
	}
	p.drawLocked()
}

func (p *progress) elapsed() string {
	return time.Since(p.job.CreatedAt).Truncate(time.Second).String()
}

func secs(s float64) string { return (time.Duration(s * float64(time.Second))).String() }

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drawLocked()
}

func (p *progress) drawLocked() {
	line := fmt.Sprintf("⏳ %s/%s  %d judgements  %s", p.elapsed(), secs(p.job.Timeout), p.evals, p.last)
	if r := []rune(line); len(r) > 110 {
		line = string(r[:109]) + "…"
	}
	fmt.Fprintf(p.w, "\r\x1b[2K%s", line)
	p.drawn = true
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[2K")
	}
}
