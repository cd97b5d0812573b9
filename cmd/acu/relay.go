package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/relay"
	"github.com/acu-dev/acu/internal/sense"
	"github.com/acu-dev/acu/internal/store"
)

func init() {
	featureCommands = append(featureCommands,
		command{"relay", "run the feed/sense relay, its analysis loop and HUD page on their own", runRelay},
		command{"sense", "watch a display and post screen events to the relay", runSense},
	)
}

// relayService is the relay as `acu serve` and `acu relay` run it: its own
// listener (ACU_RELAY_HOST:ACU_RELAY_PORT) and the analysis loop.
type relayService struct {
	r   *relay.Relay
	l   net.Listener
	log *slog.Logger
}

// newRelayService builds the relay from config; db (may be nil) keeps the
// analysis history. It returns nil, nil when ACU_RELAY_ENABLED=false.
// `acu serve` calls it after opening the daemon and runs its run method in
// its errgroup.
func newRelayService(ctx context.Context, c *config.Config, db *store.DB, log *slog.Logger) (*relayService, error) {
	rc := c.Relay()
	if !rc.Enabled {
		return nil, nil
	}
	log = log.With("component", "relay")
	opts := relay.Options{
		Agent: relay.AgentConfig{Enabled: rc.AgentEnabled, IntervalMs: int64(rc.AgentIntervalMs), Model: rc.AgentModel,
			MaxAgeMs: int64(rc.AgentMaxAgeMs), MaxTokens: rc.AgentMaxTokens, Temperature: rc.AgentTemperature,
			PushToFeed: rc.AgentPushToFeed, LogVerbose: rc.AgentLogVerbose, DebounceMs: int64(rc.AgentDebounceMs),
			FallbackModels: append([]string{}, rc.AgentFallbackModels...)},
		CallTimeout: rc.AgentTimeout,
		Guard:       guard.Guard{AllowedHosts: c.AllowHosts, ListenHost: rc.Host},
		Token:       rc.Token,
		Logger:      log,
	}
	if db != nil {
		opts.History = db
	}
	openRouter := strings.Contains(rc.AgentBaseURL, "openrouter.ai")
	switch {
	case !rc.AgentEnabled:
	case openRouter && !c.OpenRouterAPIKey.Set():
		log.Warn("the analysis loop is off: set OPENROUTER_API_KEY, or AGENT_BASE_URL to an OpenAI-compatible server that needs no key")
	default:
		service := "openai-compatible"
		if openRouter {
			service = "openrouter"
		}
		m, err := llm.New(llm.Options{Provider: llm.OpenAI, BaseURL: rc.AgentBaseURL, Model: rc.AgentModel, APIKey: c.OpenRouterAPIKey,
			Timeout: rc.AgentTimeout, MaxRetries: 1, Name: "relay", Service: service, KeyEnv: "OPENROUTER_API_KEY",
			Headers: map[string]string{"X-Title": "acu"}, Logger: log.With("component", "llm")})
		if err != nil {
			return nil, fmt.Errorf("relay model client (AGENT_BASE_URL): %w", err)
		}
		opts.Model = m
	}
	r, err := relay.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", c.RelayAddr())
	if err != nil {
		return nil, fmt.Errorf("relay: listen on %s: %w (another relay running? set ACU_RELAY_PORT, or ACU_RELAY_ENABLED=false)", c.RelayAddr(), err)
	}
	log.Info("relay serving", "addr", "http://"+l.Addr().String(), "hud", "http://"+l.Addr().String()+"/", "epoch", r.Epoch(),
		"analysis", rc.AgentEnabled && opts.Model != nil, "model", rc.AgentModel)
	return &relayService{r: r, l: l, log: log}, nil
}

// run serves the relay and runs its analysis loop until ctx ends.
func (s *relayService) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.r.Serve(gctx, s.l) })
	g.Go(func() error { return s.r.Run(gctx) })
	return g.Wait()
}

func runRelay(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "relay", "[flags]")
	c, _, warnings, err := config.Load(e.getenv, e.environ, fs, args)
	if err != nil {
		return err
	}
	log := newLogger(c, e.stderr)
	for _, w := range warnings {
		log.Warn(w)
	}
	applyMemoryLimit(c, e.getenv, log)
	c.Relay().Enabled = true
	db, err := store.Open(ctx, c.DB, store.Options{Logger: log.With("component", "store")})
	if err != nil {
		return err
	}
	defer db.Close()
	s, err := newRelayService(ctx, c, db, log)
	if err != nil {
		return err
	}
	err = s.run(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	log.Info("relay stopped")
	return err
}

func runSense(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "sense", "[flags]")
	c, _, warnings, err := config.Load(e.getenv, e.environ, fs, args)
	if err != nil {
		return err
	}
	log := newLogger(c, e.stderr)
	for _, w := range warnings {
		log.Warn(w)
	}
	applyMemoryLimit(c, e.getenv, log)
	rc := c.Relay()
	dpy := rc.SenseDisplay
	if dpy == "" {
		dpy = c.Display
	}
	exclude := append(append([]string{}, c.ExcludeWindows...), rc.SenseIgnore...)
	hub, err := capture.NewHub(capture.Options{Logger: log.With("component", "capture"), Exclude: exclude, AllowRemote: c.AllowRemoteX})
	if err != nil {
		return err
	}
	defer hub.Close()
	eng, err := ocr.New(ocr.Options{Binary: c.TesseractBinary, Logger: log.With("component", "ocr")})
	if err != nil {
		return err
	}
	cl, err := sense.New(sense.Options{Display: dpy, RelayURL: rc.SenseRelayURL, Token: rc.Token, Screen: hub, OCR: eng,
		MinInterval: rc.SenseMinInterval, OCRMaxPixels: rc.SenseOCRMaxPixels, OCRMaxChars: rc.SenseOCRMaxChars,
		Ignore: rc.SenseIgnore, Queue: rc.SenseQueue, Logger: log.With("component", "sense")})
	if err != nil {
		return err
	}
	return cl.Run(ctx)
}
