package main

import (
	"context"
	"fmt"
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
	log := newLogger(c, e.stderr)
	bad := 0
	report := func(ok bool, what, detail string) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			bad++
		}
		fmt.Fprintf(e.stdout, "%s %-10s %s\n", mark, what, detail)
	}
	warn := func(what, detail string) { fmt.Fprintf(e.stdout, "warn %-10s %s\n", what, detail) }

	// Display.
	if c.Display == "" {
		warn("display", "DISPLAY is not set: every wait must name a display (start one with `acu display start`)")
	} else {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := display.Open(dctx, c.Display, display.Options{})
		cancel()
		if err != nil {
			report(false, "display", err.Error())
		} else {
			ext := conn.Ext
			report(true, "display", fmt.Sprintf("%s %dx%d depth %d; MIT-SHM %v, DAMAGE %v, XTEST %v", c.Display,
				conn.Screen.Width, conn.Screen.Height, conn.Screen.Depth, ext.SHM, ext.Damage, ext.XTest))
			conn.Close()
		}
	}

	checkWayland(ctx, e, report, warn)

	// Judge.
	_, choice, err := judge.Select(ctx, selectOptions(c, log))
	if err != nil {
		report(false, "judge", err.Error())
	} else {
		report(true, "judge", fmt.Sprintf("%s (model %q): %s", choice.Backend, choice.Model, choice.Reason))
	}
	if p, err := exec.LookPath(c.TesseractBinary); err != nil {
		warn("tesseract", "not found: the built-in OCR judge needs it (apt-get install tesseract-ocr tesseract-ocr-eng)")
	} else {
		report(true, "tesseract", p)
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		warn("tmux", "not found: pty:<session> targets fall back to a window capture")
	}

	// Notifiers.
	if len(c.Notifiers) == 0 {
		warn("notify", "ACU_NOTIFIERS is empty: agents learn of outcomes only from the API, events and MCP")
	} else if ns, err := buildNotifiers(c, log); err != nil {
		report(false, "notify", err.Error())
	} else {
		for _, w := range notifierWarnings(ns) {
			warn("notify", w)
		}
		if err := notify.Check(ns); err != nil {
			report(false, "notify", err.Error()+" (wake-ups wait in the outbox until it works)")
		} else {
			report(true, "notify", fmt.Sprintf("%v", c.Notifiers))
		}
	}

	checkDeadLetters(ctx, e, c, report)

	// Relay.
	if w := c.RelayAuthWarning(); w != "" {
		warn("relay", w)
	}

	// State and daemon.
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		report(false, "data dir", err.Error())
	} else if err := checkDataDir(c.DataDir); err != nil {
		report(false, "data dir", err.Error())
	} else if err := checkPrivateFile(c.TokenPath(), "token file"); err != nil {
		report(false, "data dir", err.Error())
	} else if f, err := os.CreateTemp(c.DataDir, ".doctor-*"); err != nil {
		report(false, "data dir", fmt.Sprintf("%s is not writable: %v", c.DataDir, err))
	} else {
		f.Close()
		os.Remove(f.Name())
		report(true, "data dir", c.DataDir)
	}
	checkDaemon(ctx, e, c, report, warn)
	if bad > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("doctor: %d problem(s)", bad)}
	}
	return nil
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
	set := fs.String("set", "builtin", "labelled set: builtin (53 cases, vision and OCR), ocr (the OCR judge's 1,122 cases from real apps), or a directory with a labels.json (./ocr for a directory of that name)")
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
	var cases []judge.Case
	from := *set
	switch *set {
	case "builtin", "":
		cases, err = judge.BuiltinSet()
		from = "the built-in set"
	case "ocr":
		cases, err = judge.BuiltinOCRSet()
		from = "the built-in OCR set"
	default:
		cases, err = judge.LoadSet(*set)
	}
	if err != nil {
		return err
	}
	cases = judge.Sample(cases, *limit)
	list := []string{""} // the configured model
	if *models != "" {
		list = nil
		for _, m := range strings.Split(*models, ",") {
			if m = strings.TrimSpace(m); m == "" {
				return fmt.Errorf("bench judge: --model %q has an empty name: give models separated by commas, e.g. --model m1,m2", *models)
			}
			list = append(list, m)
		}
	}
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
