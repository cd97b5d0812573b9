package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/relay"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/sense"
	"github.com/acu-dev/acu/internal/store"
)

func init() {
	featureCommands = append(featureCommands,
		command{"relay", "run the feed/sense relay, its analysis loop and HUD page on their own; `acu relay open` prints a HUD login link", runRelay},
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
	token, err := ensureRelayToken(c)
	if err != nil {
		return nil, fmt.Errorf("relay token: %w", err)
	}
	log = log.With("component", "relay")
	opts := relay.Options{
		Agent: relay.AgentConfig{Enabled: rc.AgentEnabled, IntervalMs: int64(rc.AgentIntervalMs), Model: rc.AgentModel,
			MaxAgeMs: int64(rc.AgentMaxAgeMs), MaxTokens: rc.AgentMaxTokens, Temperature: rc.AgentTemperature,
			PushToFeed: rc.AgentPushToFeed, LogVerbose: rc.AgentLogVerbose, DebounceMs: int64(rc.AgentDebounceMs),
			FallbackModels: append([]string{}, rc.AgentFallbackModels...)},
		CallTimeout: rc.AgentTimeout,
		Guard:       guard.Guard{AllowedHosts: c.AllowHosts, ListenHost: rc.Host},
		Token:       token,
		Open:        rc.Open(),
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
			Timeout: rc.AgentTimeout, MaxRetries: 1, Name: "relay", Service: service, KeyEnv: "OPENROUTER_API_KEY", Prices: modelPrices(c),
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
		return nil, &listenError{Component: "relay", Addr: c.RelayAddr(), Setting: "ACU_RELAY_PORT", Off: "ACU_RELAY_ENABLED=false", Err: err}
	}
	tokenFile := c.RelayTokenPath()
	if rc.Token.Set() {
		tokenFile = "ACU_RELAY_TOKEN"
	}
	log.Info("relay serving", "addr", "http://"+l.Addr().String(), "hud", "`acu relay open` prints a one-time link", "token_file", tokenFile,
		"auth", rc.Auth, "epoch", r.Epoch(), "analysis", rc.AgentEnabled && opts.Model != nil, "model", rc.AgentModel)
	if w := c.RelayAuthWarning(); w != "" {
		log.Warn(w)
	}
	return &relayService{r: r, l: l, log: log}, nil
}

// run serves the relay and runs its analysis loop until ctx ends.
func (s *relayService) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.r.Serve(gctx, s.l) })
	g.Go(func() error { return s.r.Run(gctx) })
	return g.Wait()
}

// ensureRelayToken returns the relay's token: ACU_RELAY_TOKEN when set,
// else the token in ACU_DATA_DIR/relay-token, generated (0600) at first
// use. The relay requires it unless ACU_RELAY_AUTH=none (and even then for
// POST /auth/link, `acu relay open`): it serves the screen's text.
func ensureRelayToken(c *config.Config) (secret.String, error) {
	if t := c.Relay().Token; t.Set() {
		return t, nil
	}
	return ensureTokenFile(c.RelayTokenPath())
}

func runRelay(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "open" {
		return runRelayOpen(ctx, e, args[1:])
	}
	fs := newFlags(e, "relay", "[open] [flags]")
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
	token, err := ensureRelayToken(c)
	if err != nil {
		return fmt.Errorf("relay token: %w", err)
	}
	cl, err := sense.New(sense.Options{Display: dpy, RelayURL: rc.SenseRelayURL, Token: token, Screen: hub, OCR: eng,
		MinInterval: rc.SenseMinInterval, OCRMaxPixels: rc.SenseOCRMaxPixels, OCRMaxChars: rc.SenseOCRMaxChars,
		Ignore: exclude, Queue: rc.SenseQueue, Logger: log.With("component", "sense")})
	if err != nil {
		return err
	}
	return cl.Run(ctx)
}

// runRelayOpen prints a one-time link that logs a browser in to the HUD
// page; the page never sees the token, and no cookie is set.
func runRelayOpen(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "relay open", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := loadConfig(e)
	if err != nil {
		return err
	}
	rc := c.Relay()
	token := rc.Token
	if !token.Set() {
		b, err := os.ReadFile(c.RelayTokenPath())
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no relay token at %s: start the relay (`acu serve` or `acu relay`; it creates the token), or set ACU_RELAY_TOKEN", c.RelayTokenPath())
		}
		if err != nil {
			return fmt.Errorf("read relay token: %w", err)
		}
		token = secret.String(strings.TrimSpace(string(b)))
	}
	host := rc.Host
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	base := "http://" + net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(rc.Port))
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/auth/link", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token.Reveal())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("ask the relay at %s for a login link: %w (is it running? `acu serve` or `acu relay`)", base, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		var eb api.ErrorBody
		if json.Unmarshal(body, &eb) == nil && eb.Error.Message != "" {
			return fmt.Errorf("relay at %s: %s", base, eb.Error.Message)
		}
		return fmt.Errorf("relay at %s: %s", base, resp.Status)
	}
	var link relay.LoginLink
	if err := json.Unmarshal(body, &link); err != nil || link.URL == "" {
		return fmt.Errorf("relay at %s: unreadable login link", base)
	}
	fmt.Fprintln(e.stdout, link.URL)
	fmt.Fprintf(e.stderr, "one-time HUD link, valid until %s; the page swaps it for a session of its own (no cookie) and never sees the token\n", link.ExpiresAt.Local().Format(time.TimeOnly))
	return nil
}
