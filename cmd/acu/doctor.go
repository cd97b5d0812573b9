package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/notify"
	"github.com/acu-dev/acu/internal/store"
)

// runDoctor checks the set-up and says what to fix. It exits 1 when
// something needed for a smart wait is missing.
func runDoctor(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "doctor", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := loadConfig(e)
	if err != nil {
		return err
	}
	d := &doctor{e: e, c: c, log: newLogger(c, e.stderr)}
	for _, check := range []func(context.Context){
		d.display,
		func(ctx context.Context) { checkWayland(ctx, e, d.report, d.warn) },
		d.judge, d.notifiers,
		func(ctx context.Context) { checkDeadLetters(ctx, e, c, d.report) },
		d.relay, d.dataDir,
		func(ctx context.Context) { checkDaemon(ctx, e, c, d.report, d.warn) },
	} {
		check(ctx)
	}
	if d.bad > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("doctor: %d problem(s)", d.bad)}
	}
	return nil
}

// doctor prints one line a check, counting the problems.
type doctor struct {
	e   *env
	c   *config.Config
	log *slog.Logger
	bad int
}

func (d *doctor) report(ok bool, what, detail string) {
	mark := "ok  "
	if !ok {
		mark = "FAIL"
		d.bad++
	}
	fmt.Fprintf(d.e.stdout, "%s %-10s %s\n", mark, what, detail)
}

func (d *doctor) warn(what, detail string) { fmt.Fprintf(d.e.stdout, "warn %-10s %s\n", what, detail) }

func (d *doctor) display(ctx context.Context) {
	c := d.c
	if c.Display == "" {
		d.warn("display", "DISPLAY is not set: every wait must name a display (start one with `acu display start`)")
		return
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	conn, err := display.Open(dctx, c.Display, display.Options{})
	cancel()
	if err != nil {
		d.report(false, "display", err.Error())
		return
	}
	ext := conn.Ext
	d.report(true, "display", fmt.Sprintf("%s %dx%d depth %d; MIT-SHM %v, DAMAGE %v, XTEST %v", c.Display,
		conn.Screen.Width, conn.Screen.Height, conn.Screen.Depth, ext.SHM, ext.Damage, ext.XTest))
	conn.Close()
}

func (d *doctor) judge(ctx context.Context) {
	c := d.c
	_, choice, err := judge.Select(ctx, selectOptions(c, d.log))
	if err != nil {
		d.report(false, "judge", err.Error())
	} else {
		d.report(true, "judge", fmt.Sprintf("%s (model %q): %s", choice.Backend, choice.Model, choice.Reason))
	}
	if p, err := exec.LookPath(c.TesseractBinary); err != nil {
		d.warn("tesseract", "not found: the built-in OCR judge needs it (apt-get install tesseract-ocr tesseract-ocr-eng)")
	} else {
		d.report(true, "tesseract", p)
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		d.warn("tmux", "not found: pty:<session> targets fall back to a window capture")
	}
}

func (d *doctor) notifiers(context.Context) {
	c := d.c
	if len(c.Notifiers) == 0 {
		d.warn("notify", "ACU_NOTIFIERS is empty: agents learn of outcomes only from the API, events and MCP")
		return
	}
	ns, err := buildNotifiers(c, d.log)
	if err != nil {
		d.report(false, "notify", err.Error())
		return
	}
	for _, w := range notifierWarnings(ns) {
		d.warn("notify", w)
	}
	if err := notify.Check(ns); err != nil {
		d.report(false, "notify", err.Error()+" (wake-ups wait in the outbox until it works)")
	} else {
		d.report(true, "notify", fmt.Sprintf("%v", c.Notifiers))
	}
}

func (d *doctor) relay(context.Context) {
	if w := d.c.RelayAuthWarning(); w != "" {
		d.warn("relay", w)
	}
}

func (d *doctor) dataDir(context.Context) {
	c := d.c
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		d.report(false, "data dir", err.Error())
	} else if err := checkDataDir(c.DataDir); err != nil {
		d.report(false, "data dir", err.Error())
	} else if err := checkPrivateFile(c.TokenPath(), "token file"); err != nil {
		d.report(false, "data dir", err.Error())
	} else if f, err := os.CreateTemp(c.DataDir, ".doctor-*"); err != nil {
		d.report(false, "data dir", fmt.Sprintf("%s is not writable: %v", c.DataDir, err))
	} else {
		f.Close()
		os.Remove(f.Name())
		d.report(true, "data dir", c.DataDir)
	}
}

// checkDeadLetters lists the notifications given up on, read straight
// from the database (it works with the daemon down). A database that does
// not exist yet has none.
func checkDeadLetters(ctx context.Context, e *env, c *config.Config, report func(bool, string, string)) {
	if _, err := os.Stat(c.DB); err != nil && !store.IsPostgres(c.DB) {
		return
	}
	db, err := store.Open(ctx, c.DB, store.Options{})
	if err != nil {
		report(false, "outbox", err.Error())
		return
	}
	defer db.Close()
	dead, total, err := db.DeadLetters(ctx, 10)
	if err != nil {
		report(false, "outbox", err.Error())
		return
	}
	if total == 0 {
		report(true, "outbox", "no dead letters")
		return
	}
	report(false, "outbox", fmt.Sprintf("%d notification(s) dead-lettered (given up after ACU_NOTIFY_MAX_ATTEMPTS or an undeliverable message); newest:", total))
	for _, it := range dead {
		fmt.Fprintf(e.stdout, "     %-10s #%d %s run %s via %s after %d attempts: %s\n", "", it.ID, it.DeadAt.Local().Format(time.DateTime),
			it.RunID, it.Notifier, it.Attempts, oneLine(it.LastError, 200))
	}
}

func checkDaemon(ctx context.Context, e *env, c *config.Config, report func(bool, string, string), warn func(string, string)) {
	cl, _, err := newClient(e)
	if err != nil {
		warn("daemon", err.Error())
		return
	}
	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	h, err := cl.Health(hctx)
	if err != nil {
		warn("daemon", fmt.Sprintf("not reachable at %s: start it with `acu serve`", c.Addr()))
		return
	}
	report(true, "daemon", fmt.Sprintf("%s version %s, %d live runs, token %s", c.Addr(), h.Version, h.LiveRuns, filepath.Clean(c.TokenPath())))
	// Optional parts the daemon runs without: waits and actions work.
	for _, p := range h.Degraded {
		warn(p.Component, fmt.Sprintf("off: the daemon could not listen on %s: %s; waits and actions work without it (set %s to a free port and restart acu serve)",
			p.Addr, p.Error, p.Setting))
	}
}

func runBench(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "tasks" {
		return runBenchTasks(ctx, e, args[1:])
	}
	if len(args) == 0 || args[0] != "judge" {
		return fmt.Errorf("bench: use `acu bench judge [--set builtin|ocr|DIR]` or `acu bench tasks [flags]`")
	}
	fs := newFlags(e, "bench judge", "[--set builtin|ocr|DIR] [--backend ocr|openrouter|...] [--model M1,M2,...] [--limit N]")
	set := fs.String("set", "builtin", "labelled set: builtin (53 cases, vision and OCR), ocr (the OCR judge's 1,948 cases from real apps), or a directory with a labels.json (./ocr for a directory of that name)")
	backend := fs.String("backend", "", "judge backend (default: as configured, see `acu doctor`)")
	models := fs.String("model", "", "comma-separated models to run the set through one after the other, each with the backend (default: the configured model); a summary line per model ends the output")
	limit := fs.Int("limit", 0, "run at most N cases, spread evenly over the set (a paid model's cost grows with every case); 0: all")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench judge: unexpected argument %q: flags only, e.g. `acu bench judge --backend openrouter --model m1,m2 --set ocr`", fs.Arg(0))
	}
	if *limit < 0 {
		return fmt.Errorf("bench judge: --limit %d: must be 0 (all cases) or more", *limit)
	}
	c, err := loadConfig(e)
	if err != nil {
		return err
	}
	if *backend != "" {
		c.VisionBackend = *backend
	}
	cases, from, err := judgeSet(*set)
	if err != nil {
		return err
	}
	list, err := modelList(*models)
	if err != nil {
		return err
	}
	return benchModels(ctx, e, c, list, judge.Sample(cases, *limit), from)
}

// judgeSet loads the labelled set --set names, and says which it is.
func judgeSet(set string) ([]judge.Case, string, error) {
	switch set {
	case "builtin", "":
		cases, err := judge.BuiltinSet()
		return cases, "the built-in set", err
	case "ocr":
		cases, err := judge.BuiltinOCRSet()
		return cases, "the built-in OCR set", err
	}
	cases, err := judge.LoadSet(set)
	return cases, set, err
}

// modelList splits --model; [""] is the configured model.
func modelList(models string) ([]string, error) {
	if models == "" {
		return []string{""}, nil
	}
	var list []string
	for _, m := range strings.Split(models, ",") {
		if m = strings.TrimSpace(m); m == "" {
			return nil, fmt.Errorf("bench judge: --model %q has an empty name: give models separated by commas, e.g. --model m1,m2", models)
		}
		list = append(list, m)
	}
	return list, nil
}

// benchModels runs cases through the judge of each model in turn, prints
// each report, and a line per model when there are several.
func benchModels(ctx context.Context, e *env, c *config.Config, list []string, cases []judge.Case, from string) error {
	var reports []judge.Report
	for _, m := range list {
		mc := *c
		if m != "" {
			if mc.VisionBackend == "" {
				return fmt.Errorf("bench judge: --model %s needs a backend: add --backend (openrouter, claude, gemini, openai, ollama, vllm) or set ACU_VISION_BACKEND", m)
			}
			mc.VisionModel = m
		}
		b, choice, err := judge.Select(ctx, selectOptions(&mc, newLogger(&mc, e.stderr)))
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "judge %s (model %q), %d cases from %s\n", choice.Backend, choice.Model, len(cases), from)
		r := judge.RunBench(ctx, b, cases)
		if r.Model == "" {
			r.Model = choice.Model
		}
		if err := r.Print(e.stdout); err != nil {
			return err
		}
		reports = append(reports, r)
		if ctx.Err() != nil {
			break
		}
	}
	if len(list) > 1 {
		fmt.Fprintln(e.stdout)
		return judge.PrintModels(e.stdout, reports)
	}
	return nil
}
