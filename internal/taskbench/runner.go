package taskbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Options configures Run.
type Options struct {
	// Bin is the acu binary the engines run.
	Bin    string
	Engine Engine
	// Model names the models in the report ("scripted", "openai/gpt-4.1").
	Model string
	// WorkDir holds each task's directory (kept for review); default a
	// temporary directory.
	WorkDir string
	// Log receives the engines' output and progress lines; nil discards.
	Log io.Writer
	// Before is called before each task's engine starts (the scripted CI
	// model resets its script there).
	Before func(t Task, work string)
	// Progress is called after each task.
	Progress func(TaskResult)
	Logger   *slog.Logger
}

// Run runs the tasks one by one, each on a fresh desktop, and reports.
func Run(ctx context.Context, tasks []Task, o Options) (*Report, error) {
	if o.Engine == nil {
		return nil, fmt.Errorf("taskbench: no engine")
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	// The engines' stdout and stderr are copied by separate goroutines.
	o.Log = &syncWriter{w: o.Log}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.WorkDir != "" {
		// The session bus listens in the work directory, and the
		// applications start in it: a relative path would name another
		// place from each of them.
		abs, err := filepath.Abs(o.WorkDir)
		if err != nil {
			return nil, fmt.Errorf("taskbench: work directory %s: %w", o.WorkDir, err)
		}
		o.WorkDir = abs
	}
	if o.WorkDir == "" {
		d, err := os.MkdirTemp("", "acu-bench-tasks-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		o.WorkDir = d
	}
	rep := &Report{Engine: o.Engine.Name(), Model: o.Model, Started: time.Now().UTC()}
	start := time.Now()
	for _, t := range tasks {
		if ctx.Err() != nil {
			break
		}
		r := runOne(ctx, t, o)
		rep.Tasks = append(rep.Tasks, r)
		if o.Progress != nil {
			o.Progress(r)
		}
	}
	rep.WallSeconds = time.Since(start).Seconds()
	rep.total()
	return rep, ctx.Err()
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func runOne(ctx context.Context, t Task, o Options) (r TaskResult) {
	r = TaskResult{ID: t.ID, Title: t.Title, Tags: t.Tags}
	for _, n := range t.Needs {
		if _, err := exec.LookPath(n); err != nil {
			r.Skipped = fmt.Sprintf("%s is not installed (scripts/install-deps.sh installs it)", n)
			return r
		}
	}
	work := filepath.Join(o.WorkDir, t.ID)
	_ = os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o700); err != nil {
		r.Error = err.Error()
		return r
	}
	fmt.Fprintf(o.Log, "== task %s: %s\n", t.ID, t.Prompt)
	for name, v := range t.Files {
		b, err := t.fileContent(v)
		if err == nil {
			p := filepath.Join(work, name)
			if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
				err = os.WriteFile(p, b, 0o600)
			}
		}
		if err != nil {
			r.Error = fmt.Sprintf("setup file %s: %v", name, err)
			return r
		}
	}
	d, err := startDesktop(ctx, work, o.Logger)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer d.close()
	for _, p := range t.Setup {
		if err := d.setup(ctx, p); err != nil {
			r.Error = err.Error()
			return r
		}
	}
	if o.Before != nil {
		o.Before(t, work)
	}
	data := filepath.Join(work, "acu")
	if err := os.MkdirAll(data, 0o700); err != nil {
		r.Error = err.Error()
		return r
	}
	tctx, cancel := context.WithTimeout(ctx, time.Duration(t.TimeLimit))
	start := time.Now()
	out := o.Engine.Run(tctx, Job{Bin: o.Bin, Task: t, Display: d.Display(), Env: d.EngineEnv(), DataDir: data, Log: o.Log})
	cancel()
	r.WallSeconds = time.Since(start).Seconds()
	r.Engine = out
	r.Steps, r.ModelSeconds, r.CostUSD, r.CostUnknown = out.Steps, out.ModelMs/1000, out.CostUSD, out.CostUnknown
	if err := d.checkSettled(ctx, t.Check); err != nil {
		r.Check = err.Error()
	} else {
		r.Success = true
	}
	d.dump(o.Log)
	for _, argv := range t.Teardown {
		if _, err := d.run(ctx, append([]string(nil), argv...)); err != nil {
			fmt.Fprintf(o.Log, "teardown of %s: %v\n", t.ID, err)
		}
	}
	fmt.Fprintf(o.Log, "== task %s: success %v (%s) %s\n", t.ID, r.Success, out.Status, r.Check)
	return r
}
