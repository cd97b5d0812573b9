package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"

	"github.com/acu-dev/acu/internal/a11yjudge"
	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/handoff"
	"github.com/acu-dev/acu/internal/judge"
	"github.com/acu-dev/acu/internal/live"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/mcpserver"
	"github.com/acu-dev/acu/internal/notify"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/record"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/tasklog"
	wlframes "github.com/acu-dev/acu/internal/wayland/frames"
	"github.com/acu-dev/acu/internal/wayland/mutterframes"
)

// shutdownGrace bounds how long in-flight requests get at shutdown.
const shutdownGrace = 5 * time.Second

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "[flags]")
	detached := fs.Bool("detached", false, "run as a daemon `acu mcp` started: ignore SIGHUP (acu mcp also gives it a session of its own)")
	c, _, warnings, err := config.Load(e.getenv, e.environ, fs, args)
	if err != nil {
		return err
	}
	if *detached {
		signal.Ignore(syscall.SIGHUP)
	}
	log := newLogger(c, e.stderr)
	for _, w := range warnings {
		log.Warn(w)
	}
	applyMemoryLimit(c, e.getenv, log)
	// One daemon per data directory, and the port taken, before the store
	// is opened: a second daemon must not recover the first one's live runs.
	unlock, err := lockServe(c)
	if err != nil {
		return err
	}
	defer unlock()
	l, err := net.Listen("tcp", c.Addr())
	if err != nil {
		return fmt.Errorf("listen on %s: %w (another acu serve or another program holds the port? set ACU_DAEMON_PORT to a free port)", c.Addr(), err)
	}
	d, err := openDaemon(ctx, c, log)
	if err != nil {
		l.Close()
		return err
	}
	defer d.close()
	p, err := d.start(ctx, e, l, *detached, log)
	if err != nil {
		l.Close()
		return err
	}
	defer p.close()
	return d.serve(ctx, l, p, log)
}

// serveParts are what `acu serve` runs beside the API, and what it undoes
// when it stops.
type serveParts struct {
	relay *relayService // nil: off
	agent *agentService // nil: off
	idle  *idleWatch    // nil: the daemon never exits when idle
	undo  []func()      // run last first
}

func (p *serveParts) close() {
	for i := len(p.undo) - 1; i >= 0; i-- {
		p.undo[i]()
	}
	p.undo = nil
}

// start opens the gate, the services beside the API and the optional parts
// that run on listeners of their own.
func (d *daemon) start(ctx context.Context, e *env, l net.Listener, detached bool, log *slog.Logger) (_ *serveParts, err error) {
	c := d.cfg
	p := &serveParts{}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	d.sessionBus = e.getenv("DBUS_SESSION_BUS_ADDRESS")
	// The gate: every effect on the desktop (input, windows, clipboard,
	// launches) from every surface and engine, under one policy
	// (docs/security.md).
	d.desktop = gate.New(gateOptions(c, e, log))
	removePid, err := writePidFile(c)
	if err != nil {
		return nil, err
	}
	p.undo = append(p.undo, removePid)
	// ACU_ALLOW_REMOTE permits a wider bind; it is the address actually
	// bound that decides whether anyone beyond this machine can connect.
	if beyondLoopback(l.Addr()) {
		log.Warn("listening beyond loopback: anyone who can reach this address and has the token can move this desktop's mouse", "addr", l.Addr().String())
	}
	if c.MCP().Conformance {
		log.Warn(config.ConformanceWarning)
	}
	log.Info("acu serving", "addr", "http://"+l.Addr().String(), "version", Version, "epoch", d.runs.Epoch(),
		"judge", d.choice.Backend, "db", config.RedactDB(c.DB), "token_file", c.TokenPath())
	// The relay (ACU_RELAY_ENABLED, default on) and the desktop agent
	// (ACU_AGENT_ENABLED, default off) run beside the API on listeners of
	// their own.
	// A port another process holds turns that part off (degraded in
	// /health and acu doctor); waits and actions never depend on them.
	if p.relay, err = newRelayService(ctx, c, d.db, log); err != nil && !d.optionalOff(err, log) {
		return nil, err
	}
	// The action service holds each display's desktop stack (the gate's
	// connection and hands, the accessibility client): tasks build on it.
	if d.acts, err = d.openActions(log); err != nil {
		return nil, err
	}
	// Tasks (ACU_TASK_ENABLED, on when a task model is configured).
	if ts := d.serveTasks(ctx, e.getenv("HOME"), log); ts != nil {
		p.undo = append(p.undo, ts.Close) // ends a live task as cancelled, before the database closes
		d.tasks = ts.Orch
	}
	if c.Agent().Enabled {
		p.agent, err = newAgentService(c, d.screens(), d.desktop, d.runs, keptFrames(c, d.db), d.ledger, d.token, log)
		switch {
		case err == nil:
			log.Info("agent serving", "addr", p.agent.URL())
		case !d.optionalOff(err, log):
			return nil, err
		}
	}
	// A daemon acu mcp started exits once idle for ACU_IDLE_EXIT; one the
	// user runs or installed as a service never does.
	if detached && c.IdleExit > 0 {
		p.idle = newIdleWatch()
		d.track = p.idle.track
		log.Info("started by acu mcp: exits after ACU_IDLE_EXIT with no live run and no client", "idle_exit", c.IdleExit.String())
	}
	return p, nil
}

// serve runs the API and the parts beside it until ctx ends or one fails.
func (d *daemon) serve(ctx context.Context, l net.Listener, p *serveParts, log *slog.Logger) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.run(gctx, l, log) })
	if p.idle != nil {
		clients := daemonClientsPath(d.cfg)
		g.Go(func() error {
			return p.idle.run(gctx, d.cfg.IdleExit, func() bool { return len(d.runs.Live()) > 0 || clientsHold(clients) }, log)
		})
	}
	if p.relay != nil {
		g.Go(func() error { return p.relay.run(gctx) })
	}
	if p.agent != nil {
		g.Go(func() error { return p.agent.run(gctx) })
	}
	err := g.Wait()
	if errors.Is(err, context.Canceled) || errors.Is(err, errIdle) {
		err = nil
	}
	log.Info("acu stopped")
	return err
}

// daemon holds the wired parts of `acu serve`.
type daemon struct {
	cfg      *config.Config
	parts    *workParts
	db       *store.DB
	runs     *runs.Registry
	hub      *capture.Hub
	wayland  *wlframes.Hub     // the capture hub of Wayland displays, for waits (docs/wayland.md)
	gnome    *mutterframes.Hub // GNOME (mutter) displays' screen casts (screens.go)
	engine   *smartwait.Engine
	dispatch *notify.Dispatcher
	choice   judge.Choice
	// judgeClient is the vision judge's model client (nil for the OCR
	// judge); ledger accounts the cost of every model client.
	judgeClient *llm.Client
	acts        *actions.Service           // holds each display's desktop stack
	tasks       *orchestrator.Orchestrator // nil: tasks are off
	desktop     *gate.Gate                 // nil: the desktop routes answer 503
	ledger      *llm.Ledger
	token       secret.String
	metrics     *prometheus.Registry
	started     time.Time
	sessionBus  string // DBUS_SESSION_BUS_ADDRESS, to find accessibility buses
	// a11y decides the structural parts of waits from the accessibility
	// tree; textJudge is the OCR judge for their quoted-text rest when the
	// judge is a model (nil when it is the OCR judge itself).
	a11y      *a11yjudge.Judge
	textJudge judge.Backend
	// degraded are the optional parts off because they could not start;
	// set before the API serves.
	degraded []api.Degraded
	// track counts the API's requests for ACU_IDLE_EXIT (nil: not counted).
	track func() (done func())
}

func openDaemon(ctx context.Context, c *config.Config, log *slog.Logger) (*daemon, error) {
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create ACU_DATA_DIR %s: %w", c.DataDir, err)
	}
	token, err := ensureToken(c)
	if err != nil {
		return nil, err
	}
	d := &daemon{cfg: c, started: time.Now().UTC(), ledger: llm.NewLedger()}
	ok := false
	defer func() {
		if !ok {
			d.close()
		}
	}()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	parts, err := openWorkParts(ctx, c, log, reg, "serve")
	if err != nil {
		return nil, err
	}
	d.parts, d.db, d.runs, d.hub = parts, parts.db, parts.runs, parts.hub
	sel := selectOptions(c, log)
	sel.Client.Metrics = llm.NewMetrics(reg)
	sel.Client.Ledger = d.ledger
	sel.NewClient = func(o llm.Options) (*llm.Client, error) {
		cl, err := llm.New(o)
		d.judgeClient = cl
		return cl, err
	}
	backend, choice, err := judge.Select(ctx, sel)
	noJudge := ""
	if err != nil {
		// Runs, tasks, the relay and actions work without a judge: start
		// anyway, and let waits fail saying what to install or set.
		noJudge = err.Error()
		backend, choice = nil, judge.Choice{Backend: "none", Reason: "no judge: " + noJudge}
		log.Error("no judge: waits are refused until one is available (install tesseract-ocr, or set a model key such as OPENROUTER_API_KEY, and restart)", "problem", noJudge)
	} else {
		log.Info("judge chosen", "backend", choice.Backend, "model", choice.Model, "reason", choice.Reason)
	}
	d.choice = choice

	notifiers, err := buildNotifiers(c, log)
	if err != nil {
		return nil, err
	}
	for _, w := range notifierWarnings(notifiers) {
		log.Warn(w)
	}
	if err := notify.Check(notifiers); err != nil {
		log.Warn("a notifier cannot deliver yet; wake-ups are kept in the outbox and retried until it can", "problem", err)
	}
	if d.dispatch, err = notify.NewDispatcher(d.db, notify.DispatcherOptions{Notifiers: notifiers, Owner: d.runs.OwnerID(),
		MaxAttempts: maxAttempts(c), Logger: log.With("component", "notify"), Registerer: reg}); err != nil {
		return nil, err
	}
	var frames smartwait.FrameStore
	if c.KeepJudgedFrames {
		frames = d.db
	}
	d.wayland = wlframes.New(wlframes.Options{Exclude: c.ExcludeWindows, Logger: log.With("component", "wayland")})
	d.gnome = mutterframes.New(mutterframes.Options{Bus: func() string { return d.sessionBus }, Exclude: c.ExcludeWindows, Logger: log.With("component", "gnome")})
	d.a11y, d.textJudge = openStructureJudges(c, d, choice, log)
	d.engine = smartwait.New(smartwait.Options{
		Runs: d.runs, Capture: d.screens(), Judge: backend, NoJudge: noJudge, Store: d.db, Notify: d.dispatch, Frames: frames,
		Structure: d.a11y, Text: d.textJudge, StructureOff: structureOff(c),
		ScreenshotDir: c.ScreenshotDir(), PollInterval: c.PollInterval, MaxTimeout: c.MaxTimeout,
		DefaultDisplay: c.Display, TmuxSocket: c.TmuxSocket, Logger: log.With("component", "smartwait"), Registerer: reg,
		StrictTargets: c.StrictTargets, JudgeConcurrency: c.JudgeConcurrency, Host: d.runs.Host(),
	})
	d.runs.SetHooks(func(run runs.Run, lost runs.Owner) { d.notifyOrphaned(ctx, run, lost, log) }, d.endedElsewhere)
	d.token = token
	d.metrics = reg
	ok = true
	return d, nil
}

// run serves the API on l and runs the engines until ctx ends, then shuts
// down in order: the listener stops taking requests, in-flight requests get
// shutdownGrace, the wait engine leaves live jobs live in the store (the
// next start resumes them), the dispatcher stops between attempts.
func (d *daemon) run(ctx context.Context, l net.Listener, log *slog.Logger) error {
	// Each MCP session calls the API with its caller's own token and is
	// bound to it (another token with its id is refused).
	mcpOpts := mcpserver.Options{Version: Version, Logger: log.With("component", "mcp"), Conformance: d.cfg.MCP().Conformance}
	mcpEP := newMCPEndpoint("http://"+l.Addr().String(), d.token, mcpOpts, log.With("component", "mcp"))
	defer mcpEP.Wait()
	sv, err := d.openServices(mcpEP, log)
	if err != nil {
		return err
	}
	// Runs left live by stopped processes, and runs other daemons of a
	// fleet created for this host, before any new work.
	claim := func(run runs.Run) bool { return d.claim(sv.fleet, sv.recorder, run) }
	if err := d.runs.Recover(ctx, claim); err != nil {
		return fmt.Errorf("recover runs left live by stopped processes: %w", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	d.runEngines(gctx, g, claim, log)
	// The tasks stop before the action service closes the desktop stacks
	// they act through.
	actsCtx, stopActs := context.WithCancel(context.WithoutCancel(gctx))
	g.Go(func() error { return d.acts.Run(actsCtx) })
	g.Go(func() error {
		<-gctx.Done()
		if d.tasks != nil {
			d.tasks.Close()
		}
		stopActs()
		return nil
	})
	g.Go(func() error { return sv.fleet.Run(gctx) })
	g.Go(func() error { return sv.live.Run(gctx) })
	g.Go(func() error { return sv.recorder.Run(gctx) })
	g.Go(func() error { return sv.server.Serve(gctx, l, shutdownGrace) })
	return g.Wait()
}

// services are the daemon's features that the API serves, beside the
// engines openDaemon made.
type services struct {
	live     *live.Service
	recorder *record.Recorder
	fleet    *handoff.Handoff
	server   *server.Server
}

// openServices builds the live view, the recorder, the fleet hand-off and the
// API server over every service.
func (d *daemon) openServices(mcpEP *mcpEndpoint, log *slog.Logger) (*services, error) {
	c := d.cfg
	sv := &services{live: live.New(live.Options{Capture: d.screens(), DefaultDisplay: c.Display,
		Takeover: live.TakeoverOptions{Runs: d.runs, Gate: d.desktop, Logger: log.With("component", "live")}})}
	var err error
	sv.recorder, err = record.New(record.Options{Capture: d.screens(), Runs: d.runs, Dir: c.RecordingDir(), FFmpeg: c.FFmpeg,
		DefaultDisplay: c.Display, Format: c.RecordFormat, MaxFPS: c.RecordMaxFPS, Auto: c.RecordRuns,
		Max: c.RecordMax, MaxDuration: c.RecordMaxDuration, DiskBudget: diskBudget(c.RecordDisk), Logger: log.With("component", "record")})
	if err != nil {
		return nil, err
	}
	if len(c.RecordRuns) > 0 {
		if err := sv.recorder.Check(); err != nil {
			return nil, &config.Error{Env: "ACU_RECORD_RUNS", Value: strings.Join(c.RecordRuns, ","), Source: "configuration",
				Accepted: "empty, or install ffmpeg (or set ACU_FFMPEG)", Err: err}
		}
	}
	// Action requests for other hosts of a fleet, and theirs for this one.
	sv.fleet = handoff.New(handoff.Options{Runs: d.runs, Answer: server.ErrorResponse, Logger: log.With("component", "handoff"),
		Act: func(ctx context.Context, client, remote string, req api.ActRequest) (api.ActResponse, error) {
			return d.acts.Act(ctx, actions.Caller{Client: client, Remote: remote}, req)
		}})
	o := server.Options{
		Token: d.token, TokenHint: c.TokenPath(), AllowedHosts: c.AllowHosts, ListenHost: c.DaemonHost,
		MaxBody: c.MaxBody, Version: Version, Epoch: d.runs.Epoch(), Logger: log.With("component", "http"),
		LookupToken: lookupToken(d.db),
		// `acu token revoke` runs in another process: the open requests'
		// tokens are looked up every 500 ms while any is open.
		Revocation: server.Revocation{Revoked: d.db.RevokedTokens, OnRevoke: mcpEP.Revoke},
		TaskLogs:   tasklog.New(d.db),
		Metrics:    d.metrics, Runs: d.runs, Waits: d.engine, Screenshots: &screenshotter{hub: d.hub, cfg: c},
		Health:     d.health,
		Actions:    d.acts,
		Live:       sv.live,
		Frames:     d.db,
		Recordings: sv.recorder,
		Cancellers: map[string]func(ctx context.Context, id, reason string) error{"wait": d.cancelWait},
		Fleet:      d.runs,
		Handoff:    sv.fleet,
		Extra:      map[string]http.Handler{"/mcp": mcpEP.Handler()},
		LaunchArgv: c.LaunchArgv,
		Track:      d.track,
	}
	if d.desktop != nil {
		o.Desktop = d.desktop
	}
	if d.tasks != nil {
		o.Tasks = d.tasks
		o.Cancellers[orchestrator.Kind] = d.tasks.Cancel
	}
	sv.server = server.New(o)
	return sv, nil
}

// runEngines runs the wait engine, the notifier, the sweep of runs of
// stopped processes, a fleet's wake-ups and the event pruning in g.
func (d *daemon) runEngines(ctx context.Context, g *errgroup.Group, claim func(runs.Run) bool, log *slog.Logger) {
	c := d.cfg
	g.Go(func() error { return d.engine.Run(ctx) })
	g.Go(func() error { return d.dispatch.Run(ctx) })
	// Runs of a process that stops while the daemon runs (a killed `acu
	// agent`) are taken over or ended once its lease ends.
	g.Go(func() error { d.runs.Sweep(ctx, c.OwnerLease/3, claim); return nil })
	if store.IsPostgres(c.DB) {
		// A fleet: other daemons' events and runs created for this host
		// wake this one at once.
		host := d.runs.Host()
		g.Go(func() error {
			return d.db.Listen(ctx, func(channel, payload string) {
				switch channel {
				case store.ChannelEvents:
					d.runs.WakeTail()
				case store.ChannelClaims:
					if payload == host {
						d.runs.Kick()
					}
				default: // (re)connected: catch up on both
					d.runs.WakeTail()
					d.runs.Kick()
				}
			}, store.ChannelEvents, store.ChannelClaims)
		})
	}
	if c.EventRetention > 0 {
		g.Go(func() error { d.pruneEvents(ctx, log); return nil })
	}
}

// pruneEvents deletes old runs' progress events (ACU_EVENT_RETENTION) at
// start and then hourly, until ctx ends.
func (d *daemon) pruneEvents(ctx context.Context, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		before := time.Now().Add(-d.cfg.EventRetention)
		if n, err := d.db.PruneEvents(ctx, before); err != nil {
			if ctx.Err() == nil {
				log.Warn("prune old events", "err", err)
			}
		} else if n > 0 {
			log.Info("pruned progress events of old runs", "events", n, "ended_before", before.UTC().Format(time.RFC3339))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// gateOptions are the gate's settings: the ACU_ACT_* policy and the
// device's click hold, the launcher's desktop entries and environment.
func gateOptions(c *config.Config, e *env, log *slog.Logger) gate.Options {
	ac := c.Act()
	o := gate.Options{DefaultDisplay: c.Display, AllowRemote: c.AllowRemoteX, AppDirs: gate.AppDirs(e.getenv), Env: e.environ, EnvAllow: c.LaunchEnvAllow, Exclude: c.ExcludeWindows,
		Policy: gate.Policy{Disabled: !ac.Enabled, Displays: ac.Displays, Deny: ac.Deny, PauseOnUser: ac.PauseOnUser, Quiet: ac.UserQuiet},
		Input:  gate.InputOptions{ClickDelay: ac.ClickHold}, Logger: log.With("component", "gate")}
	if ac.ClickHold == 0 {
		o.Input.ClickDelay = -1 // no hold at all
	}
	return o
}

// openActions builds the action service (POST /v1/actions, GET
// /v1/elements, GET /v1/screenshot) on the daemon's hub, runs and settle,
// with the ACU_ACT_* settings.
func (d *daemon) openActions(log *slog.Logger) (*actions.Service, error) {
	c := d.cfg
	ac := c.Act()
	o := actions.Options{Hub: d.hub, Screens: d.screens(), Runs: d.runs, Settle: d.engine, DefaultDisplay: c.Display, SessionBus: d.sessionBus,
		Gate: d.desktop, Exclude: c.ExcludeWindows, SessionIdle: ac.SessionIdle, FrameQuality: c.FrameQuality, FrameMaxDim: c.FrameMaxDim, Logger: log.With("component", "actions")}
	if ac.OCR {
		eng, err := ocr.New(ocr.Options{Binary: c.TesseractBinary, Scale: elements.OCRScale, Logger: log.With("component", "ocr")})
		if err != nil {
			return nil, fmt.Errorf("OCR for the element map: %w (install tesseract-ocr or set ACU_ACT_OCR=false)", err)
		}
		o.OCR = eng
	}
	return actions.New(o)
}

func (d *daemon) cancelWait(ctx context.Context, id, reason string) error {
	_, err := d.engine.Cancel(ctx, id, reason)
	return err
}

func (d *daemon) health(ctx context.Context) api.Health {
	h := api.Health{Status: "ok", Version: Version, Epoch: d.runs.Epoch(), Started: d.started,
		LiveRuns: len(d.runs.Live()),
		Judge:    &api.JudgeInfo{Backend: d.choice.Backend, Model: d.choice.Model, Reason: d.choice.Reason}}
	if d.choice.Backend == "none" {
		h.Status = "degraded"
		h.Problems = append(h.Problems, "judge: "+d.choice.Reason+"; waits are refused until one is available (install tesseract-ocr, or set a model key such as OPENROUTER_API_KEY, and restart)")
	}
	if err := d.db.Health(ctx); err != nil {
		h.Status = "degraded"
		h.Problems = append(h.Problems, "store: "+err.Error())
	}
	if d.choice.Backend == judge.OCR {
		if _, err := exec.LookPath(d.cfg.TesseractBinary); err != nil {
			h.Status = "degraded"
			h.Problems = append(h.Problems, fmt.Sprintf("judge: the OCR judge's Tesseract (%s) is gone: %v; waits cannot be judged until it is back (apt-get install tesseract-ocr tesseract-ocr-eng, or set ACU_TESSERACT)", d.cfg.TesseractBinary, unwrapExec(err)))
		}
	}
	if d.judgeClient != nil {
		jh := d.judgeClient.Health()
		h.Breakers = map[string]string{"judge": jh.State}
		if jh.State != "closed" {
			h.Status = "degraded"
			h.Problems = append(h.Problems, fmt.Sprintf("the judge's model client is %s after %d failures: %s", jh.State, jh.ConsecutiveFailures, jh.LastError))
		}
	}
	d.degradedHealth(&h)
	return h
}

// unwrapExec drops os/exec's repetition of the program name.
func unwrapExec(err error) error {
	if ee, ok := errors.AsType[*exec.Error](err); ok {
		return ee.Err
	}
	return err
}

func (d *daemon) close() {
	if d.a11y != nil {
		d.a11y.Close()
	}
	if d.desktop != nil {
		d.desktop.Close()
	}
	if d.wayland != nil {
		d.wayland.Close()
	}
	if d.gnome != nil {
		d.gnome.Close()
	}
	switch {
	case d.parts != nil:
		d.parts.Close()
	case d.db != nil:
		d.db.Close()
	}
}

func selectOptions(c *config.Config, log *slog.Logger) judge.SelectOptions {
	return judge.SelectOptions{
		Backend: c.VisionBackend, BaseURL: c.VisionBaseURL, Model: c.VisionModel, OpenRouterModel: c.OpenRouterModel,
		Keys:      judge.Keys{OpenRouter: c.OpenRouterAPIKey, Anthropic: c.AnthropicAPIKey, Gemini: c.GeminiAPIKey, OpenAI: c.OpenAIAPIKey},
		OllamaURL: c.OllamaURL, System: c.VisionSystem, MaxTokens: c.VisionMaxTokens, Temperature: c.VisionTemperature,
		MaxDim: c.FrameMaxDim, Quality: c.FrameQuality,
		Client: llm.Options{Timeout: c.VisionTimeout, Logger: log.With("component", "llm"), Prices: modelPrices(c),
			Headers: map[string]string{"X-Title": "acu"}},
		OCR:    ocr.Options{Binary: c.TesseractBinary},
		Logger: log.With("component", "judge"),
	}
}

// notifierWarnings collects the risks notifiers see in their own
// configuration (a shell running {message} as code), for start-up and
// `acu doctor`.
func notifierWarnings(ns []notify.Notifier) []string {
	var out []string
	for _, n := range ns {
		if w, ok := n.(interface{ Warnings() []string }); ok {
			out = append(out, w.Warnings()...)
		}
	}
	return out
}

// maxAttempts maps ACU_NOTIFY_MAX_ATTEMPTS (0: forever) to the
// dispatcher's option (negative: forever).
func maxAttempts(c *config.Config) int {
	if c.NotifyMaxAttempts == 0 {
		return -1
	}
	return c.NotifyMaxAttempts
}

func buildNotifiers(c *config.Config, log *slog.Logger) ([]notify.Notifier, error) {
	return notify.Build(c.Notifiers,
		notify.ExecOptions{CLI: c.OpenClawCLI, Command: c.NotifyCommand, Timeout: c.NotifyExecTimeout, Logger: log.With("component", "notify")},
		notify.WebhookOptions{URL: c.WebhookURL, Token: c.WebhookToken, Secret: c.WebhookSecret, BodyTemplate: c.WebhookBody,
			Logger: log.With("component", "notify")})
}

// screenshotter serves GET /v1/screenshot from the capture hub.
type screenshotter struct {
	hub *capture.Hub
	cfg *config.Config
}

func (s *screenshotter) Screenshot(ctx context.Context, dpy, target string, jpeg bool) (server.Shot, error) {
	if dpy == "" {
		dpy = s.cfg.Display
	}
	t, err := capture.ParseTarget(target)
	if err != nil {
		return server.Shot{}, err
	}
	res, err := s.hub.Resolve(ctx, dpy, t)
	if err != nil {
		return server.Shot{}, err
	}
	f, err := s.hub.Capture(ctx, dpy, t)
	if err != nil {
		return server.Shot{}, err
	}
	defer f.Release() // encoded below: the hub may reuse its buffer after
	shot := server.Shot{Width: f.W, Height: f.H, FrameWidth: f.W, FrameHeight: f.H,
		OriginX: res.Rect.Min.X, OriginY: res.Rect.Min.Y, Target: f.Target}
	if shot.ScreenWidth, shot.ScreenHeight, err = s.hub.ScreenSize(ctx, dpy); err != nil {
		return server.Shot{}, err
	}
	if jpeg {
		shot.Width, shot.Height = frame.TargetSize(f.W, f.H, s.cfg.FrameMaxDim)
		shot.Data, err = f.JPEG(s.cfg.FrameMaxDim, s.cfg.FrameQuality)
	} else {
		shot.Data, err = f.PNG()
	}
	return shot, err
}

// notifyOrphaned tells the agent (through the notifiers) that a run lost
// its host's daemon: it is kept, and resumes when that host's daemon
// starts again.
func (d *daemon) notifyOrphaned(ctx context.Context, run runs.Run, lost runs.Owner, log *slog.Logger) {
	msg := fmt.Sprintf("[acu orphaned] Run %s (%s): the daemon of host %s stopped (acu %s, pid %d); the run is kept and resumes when acu serve starts there again.",
		run.ID, run.Kind, run.Host, firstOf(lost.Program, "serve"), lost.PID)
	n := notify.Notification{Key: run.ID + ":orphaned:" + lost.ID, RunID: run.ID, Event: "orphaned", Message: msg}
	if err := d.dispatch.Notify(context.WithoutCancel(ctx), n); err != nil {
		log.Error("notify an orphaned run", "run_id", run.ID, "err", err)
	}
}

// diskBudget is ACU_RECORD_DISK for the recorder: 0 there means none.
func diskBudget(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// claim takes a run Recover offers: a wait resumes (or starts, created
// for this host elsewhere); a task or an action request another daemon
// created for this host and nobody has run yet starts here. A task or
// action some process already ran is not run again (it could repeat what
// was done): Recover ends it.
func (d *daemon) claim(fleet *handoff.Handoff, rec *record.Recorder, run runs.Run) bool {
	fresh := run.Owner == "" && run.Status != runs.StatusOrphaned
	switch run.Kind {
	case record.RunKind:
		// A recording whose daemon died: its file is made playable up to
		// its last second and the run ended with what it holds.
		return rec.Adopt(run)
	case smartwait.KindWait:
		return d.engine.Claim(run)
	case handoff.Kind:
		return fresh && fleet.Claim(run)
	case orchestrator.Kind:
		return fresh && d.tasks != nil && d.tasks.Adopt(run)
	}
	return false
}

// endedElsewhere stops this daemon's work on a run another process ended
// (a cancel through another daemon of the fleet).
func (d *daemon) endedElsewhere(run runs.Run) {
	switch run.Kind {
	case smartwait.KindWait:
		d.engine.EndedElsewhere(run)
	case orchestrator.Kind:
		if d.tasks != nil {
			_ = d.tasks.Cancel(context.Background(), run.ID, firstOf(run.Error, "ended by another process"))
		}
	}
}

// beyondLoopback reports whether a listener's address accepts connections
// from other machines: anything but a loopback IP (0.0.0.0 and :: included).
func beyondLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return !ok || !ta.IP.IsLoopback()
}
