package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/acu-dev/acu/internal/agent"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/runlog"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/session"
	"github.com/acu-dev/acu/internal/store"
	wlframes "github.com/acu-dev/acu/internal/wayland/frames"
)

func init() {
	featureCommands = append(featureCommands,
		command{"agent", "run the desktop agent loop and its panel; `acu agent replay DIR` reviews a run", runAgent})
}

// agentService is the agent loop as `acu serve` and `acu agent` run it: the
// loop plus its own listener (ACU_AGENT_HOST:ACU_AGENT_PORT).
type agentService struct {
	a   *agent.Agent
	l   net.Listener
	log *slog.Logger
}

// newAgentService builds the agent from config on the daemon's parts: hub
// captures, reg records each session as a run (nil: none), ledger accounts
// model cost (nil: its own), token protects the endpoints. `acu serve` calls
// it when ACU_AGENT_ENABLED=true and runs its run method in its errgroup.
func newAgentService(c *config.Config, hub agent.Screens, g *gate.Gate, reg *runs.Registry, frames agent.FrameStore, ledger *llm.Ledger, token secret.String, log *slog.Logger) (*agentService, error) {
	ac := c.Agent()
	log = log.With("component", "agent")
	if !c.AllowRemote && !loopbackHost(ac.Host) {
		return nil, &config.Error{Env: "ACU_AGENT_HOST", Value: ac.Host, Source: "configuration",
			Accepted: "a loopback address, or set ACU_ALLOW_REMOTE=true: /inject moves this desktop's mouse",
			Err:      errors.New("binding beyond loopback needs an explicit opt-in")}
	}
	base, err := agent.BaseURL(ac.APIURL)
	if err != nil {
		return nil, &config.Error{Env: "ACU_AGENT_API_URL", Value: ac.APIURL, Source: "configuration", Accepted: "an http(s) URL", Err: err}
	}
	timeout := ac.HTTPTimeout
	if timeout <= 0 {
		log.Warn("ACU_AGENT_VLM_HTTP_TIMEOUT_SECONDS <= 0: each model call attempt may take up to 24 hours, so a hung endpoint stalls the loop that long")
		timeout = 24 * time.Hour
	}
	retries := ac.Retries
	if retries == 0 {
		retries = -1 // llm: 0 means its default, negative none
	}
	client, err := llm.New(llm.Options{Provider: llm.OpenAI, BaseURL: base, Model: ac.Model, APIKey: ac.APIKey,
		Timeout: timeout, MaxRetries: retries, Ledger: ledger, Logger: log.With("component", "llm"),
		Name: "agent", Service: "agent", KeyEnv: "ACU_AGENT_API_KEY", Prices: modelPrices(c)})
	if err != nil {
		return nil, fmt.Errorf("agent model client: %w", err)
	}
	if err := (session.Budget{MaxCost: ac.MaxCostUSD}).CheckPriced(client, ""); err != nil {
		return nil, unpricedLimit("ACU_AGENT_MAX_COST_USD", ac.MaxCostUSD, ac.Model, err)
	}
	layout, err := runlog.ParseLayout(ac.LogLayout)
	if err != nil {
		return nil, err
	}
	a, err := agent.New(agent.Options{
		Display: c.AgentDisplay(), Hub: hub, Gate: g, Model: client, Temperature: ac.Temperature, TopP: ac.TopP, MaxTokens: ac.MaxTokens,
		SystemPrompt: ac.SystemPrompt, Crop: ac.CaptureCrop, CaptureWidth: ac.CaptureWidth, CaptureHeight: ac.CaptureHeight,
		CaptureScalePercent: ac.CaptureScalePercent, CaptureDelay: ac.CaptureDelay, Physical: ac.PhysicalExecution,
		ActionDelay: ac.ActionDelay, ClickHold: clickHold(ac.ClickHold), DragSteps: ac.DragSteps, DragStepDelay: ac.DragStepDelay, UI: ac.UI, Annotator: ac.Annotator,
		RunsDir: c.AgentRunsDir(), LogLayout: layout, LogToFile: ac.LogToFile, Boot: ac.BootEnabled, BootText: ac.BootVLMOutput,
		MaxTurns: ac.MaxTurns, MaxCostUSD: ac.MaxCostUSD, Runs: reg, Frames: frames, Token: token, PanelFile: ac.PanelFile,
		Guard: guard.Guard{AllowedHosts: c.AllowHosts, ListenHost: ac.Host}, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", c.AgentAddr())
	if err != nil {
		return nil, &listenError{Component: "agent", Addr: c.AgentAddr(), Setting: "ACU_AGENT_PORT", Off: "ACU_AGENT_ENABLED=false", Err: err}
	}
	return &agentService{a: a, l: l, log: log}, nil
}

// keptFrames is the store of judged and turn frames, nil when
// ACU_KEEP_JUDGED_FRAMES is off.
func keptFrames(c *config.Config, db *store.DB) agent.FrameStore {
	if !c.KeepJudgedFrames || db == nil {
		return nil
	}
	return db
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// URL is the listener's base URL.
func (s *agentService) URL() string { return "http://" + s.l.Addr().String() }

// run serves the panel and API and runs the loop until ctx ends.
func (s *agentService) run(ctx context.Context) error {
	srv := &http.Server{Handler: s.a.Handler(), ReadHeaderTimeout: 10 * time.Second}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.a.Run(gctx) })
	g.Go(func() error {
		err := srv.Serve(s.l)
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	})
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	return g.Wait()
}

func runAgent(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "replay" {
		return runAgentReplay(ctx, e, args[1:])
	}
	fs := newFlags(e, "agent", "[flags]  |  acu agent replay [-serve ADDR] RUN_DIR\n\nSettings: ACU_AGENT_* (see `acu config --list`)")
	c, _, warnings, err := config.Load(e.getenv, e.environ, fs, args)
	if err != nil {
		return err
	}
	log := newLoggerLevel(c, c.Agent().LogLevel, e.stderr)
	for _, w := range warnings {
		log.Warn(w)
	}
	applyMemoryLimit(c, e.getenv, log)
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("create ACU_DATA_DIR %s: %w", c.DataDir, err)
	}
	token, err := ensureToken(c)
	if err != nil {
		return err
	}
	// The session is a run in acu's store either way, visible to `acu runs`.
	// This process never calls Recover: a running daemon owns that.
	parts, err := openWorkParts(ctx, c, log, nil, "agent")
	if err != nil {
		return err
	}
	defer parts.Close()
	g := gate.New(gateOptions(c, e, log)) // the daemon's policy: ACU_ACT_*
	defer g.Close()
	wl := wlframes.New(wlframes.Options{Exclude: c.ExcludeWindows, Logger: log.With("component", "wayland")})
	defer wl.Close()
	s, err := newAgentService(c, screens{x: parts.hub, wl: wl}, g, parts.runs, keptFrames(c, parts.db), nil, token, log)
	if err != nil {
		return err
	}
	log.Info("acu agent serving", "addr", s.URL(), "display", c.AgentDisplay(), "api_url", c.Agent().APIURL,
		"runs_dir", c.AgentRunsDir(), "token_file", c.TokenPath())
	fmt.Fprintf(e.stdout, "panel (one-time link, valid 2 minutes): %s\n", s.a.LoginURL(s.URL()))
	if !c.Agent().BootEnabled {
		fmt.Fprintf(e.stdout, "waiting for the first model output: curl -H \"Authorization: Bearer $(cat %s)\" -d '{\"vlm_text\":\"...\"}' %s/inject\n", c.TokenPath(), s.URL())
	}
	err = s.run(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// newLoggerLevel is newLogger with another level.
func newLoggerLevel(c *config.Config, level string, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func runAgentReplay(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "agent replay", "[-serve ADDR] RUN_DIR")
	addr := fs.String("serve", "", "serve a review page on this loopback address (127.0.0.1:0 picks a port) instead of printing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return &exitError{code: 2, msg: "acu agent replay: want one run directory, e.g. runs/run_0007"}
	}
	dir := fs.Arg(0)
	turns, err := runlog.Load(dir)
	if err != nil {
		return err
	}
	if *addr == "" {
		runlog.Print(e.stdout, dir, turns)
		return nil
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !loopbackHost(host) {
		return fmt.Errorf("-serve %q: want a loopback host:port such as 127.0.0.1:8099", *addr)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *addr, err)
	}
	srv := &http.Server{Handler: guard.Guard{}.Wrap(runlog.Handler(dir)), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stdout, "reviewing %s (%d turns) at http://%s/ (Ctrl-C to stop)\n", dir, len(turns), l.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// modelPrices is ACU_MODEL_PRICES as the model clients take it.
func modelPrices(c *config.Config) llm.PriceTable {
	if len(c.ModelPrices) == 0 {
		return nil
	}
	t := make(llm.PriceTable, len(c.ModelPrices))
	for m, p := range c.ModelPrices {
		t[m] = llm.Price{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok}
	}
	return t
}

// unpricedLimit is the start-up error of a cost limit that cannot be kept:
// its model has no price and its endpoint reports no cost, so every call's
// cost would be unknown.
func unpricedLimit(env string, limit float64, model string, err error) error {
	return fmt.Errorf("%s=%s: the cost limit cannot be kept, every call's cost would be unknown: %w; "+
		"set ACU_MODEL_PRICES=%s=IN:OUT (US dollars per million input and output tokens), "+
		"use an endpoint that reports its own cost (OpenRouter) or a local model server without a key, or set %s=0 for no limit",
		env, strconv.FormatFloat(limit, 'g', -1, 64), err, model, env)
}

// clickHold maps ACU_AGENT_CLICK_HOLD to agent.Options.ClickHold, whose
// zero means the input package's default: a setting of 0 means no hold.
func clickHold(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
