package judge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/secret"
)

// Keys are the provider API keys found in the environment.
type Keys struct {
	OpenRouter secret.String // OPENROUTER_API_KEY
	Anthropic  secret.String // ANTHROPIC_API_KEY
	Gemini     secret.String // GEMINI_API_KEY
	OpenAI     secret.String // OPENAI_API_KEY
}

// SelectOptions is the judge configuration, as cmd/acu loads it.
type SelectOptions struct {
	Backend         string // ACU_VISION_BACKEND; "" chooses automatically
	BaseURL         string // ACU_VISION_BASE_URL: overrides the backend's endpoint (up to and including /v1)
	Model           string // ACU_VISION_MODEL: overrides the backend's model
	OpenRouterModel string // ACU_OPENROUTER_VISION_MODEL; default google/gemini-2.0-flash-lite-001
	Keys            Keys
	OllamaURL       string        // Ollama's native root; default http://127.0.0.1:11434
	ProbeTimeout    time.Duration // how long to wait for Ollama to answer; default 300 ms

	// Vision judge settings (ACU_VISION_SYSTEM_INSTRUCTIONS, ACU_FRAME_MAX_DIM, ...).
	System      string
	MaxTokens   int
	Temperature float64 // sent as is (ACU_VISION_TEMPERATURE, whose default is 0.1)
	MaxDim      int
	Quality     int
	Timeout     time.Duration // per judgement, across retries; 0: none beyond the client's (Client.Timeout is per attempt)

	// Client is the template for the model client: timeouts, retries,
	// metrics, ledger, logger. Select fills in Provider, BaseURL, Model,
	// APIKey, Service, KeyEnv, and Name ("judge" when empty).
	Client llm.Options
	// NewClient builds the client; nil means llm.New.
	NewClient func(llm.Options) (*llm.Client, error)

	OCR        ocr.Options // for the OCR judge
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Choice says which backend was selected and why, for `acu doctor`.
type Choice struct {
	Backend string
	Model   string
	BaseURL string
	Reason  string
}

type backendDef struct {
	provider llm.Provider
	baseURL  string
	model    string
	keyEnv   string
	key      func(Keys) secret.String
}

// DefaultOpenRouterModel is the seed's default judge model.
const DefaultOpenRouterModel = "google/gemini-2.0-flash-lite-001"

var backendDefs = map[string]backendDef{
	OpenRouter: {llm.OpenAI, "https://openrouter.ai/api/v1", DefaultOpenRouterModel, "OPENROUTER_API_KEY", func(k Keys) secret.String { return k.OpenRouter }},
	Claude:     {llm.Anthropic, "", "claude-haiku-4-5", "ANTHROPIC_API_KEY", func(k Keys) secret.String { return k.Anthropic }},
	Gemini:     {llm.Gemini, "", "gemini-2.0-flash-lite", "GEMINI_API_KEY", func(k Keys) secret.String { return k.Gemini }},
	OpenAI:     {llm.OpenAI, "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY", func(k Keys) secret.String { return k.OpenAI }},
	Ollama:     {llm.OpenAI, "", "minicpm-v", "", nil},
	VLLM:       {llm.OpenAI, "http://127.0.0.1:8000/v1", "", "", nil},
}

// remoteOrder is the order keys are tried in when no backend is configured.
var remoteOrder = []string{OpenRouter, Claude, Gemini, OpenAI}

// DefaultOllamaURL is where Ollama listens unless configured.
const DefaultOllamaURL = "http://127.0.0.1:11434"

// Select builds the configured judge. An explicit backend wins; with none, a
// remote backend whose key is present is used (OpenRouter, Claude, Gemini,
// OpenAI, in that order), else Ollama when it answers on its local port,
// else the built-in OCR judge.
func Select(ctx context.Context, o SelectOptions) (Backend, Choice, error) {
	if o.OllamaURL == "" {
		o.OllamaURL = DefaultOllamaURL
	}
	o.OllamaURL = strings.TrimRight(o.OllamaURL, "/")
	if o.OpenRouterModel == "" {
		o.OpenRouterModel = DefaultOpenRouterModel
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 300 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	name := strings.ToLower(strings.TrimSpace(o.Backend))
	var reason string
	switch {
	case name == OCR:
		return selectOCR(o, "ACU_VISION_BACKEND=ocr: the built-in Tesseract judge (offline, free; decides conditions about quoted visible text)")
	case name != "":
		if _, ok := backendDefs[name]; !ok {
			return nil, Choice{}, fmt.Errorf("ACU_VISION_BACKEND %q: must be one of %s, or empty to choose automatically", o.Backend, strings.Join(Backends, ", "))
		}
		reason = "ACU_VISION_BACKEND=" + name
	default:
		for _, b := range remoteOrder {
			if d := backendDefs[b]; d.key(o.Keys).Set() {
				name, reason = b, fmt.Sprintf("ACU_VISION_BACKEND is not set and %s is present", d.keyEnv)
				break
			}
		}
		if name == "" && o.BaseURL != "" {
			name, reason = VLLM, "ACU_VISION_BACKEND is not set, no API key is present, and ACU_VISION_BASE_URL names an OpenAI-compatible server"
		}
		if name == "" {
			if err := probeOllama(ctx, o); err == nil {
				name, reason = Ollama, fmt.Sprintf("ACU_VISION_BACKEND is not set, no API key is present, and Ollama answers at %s", o.OllamaURL)
			} else {
				return selectOCR(o, fmt.Sprintf("ACU_VISION_BACKEND is not set, no API key is present (OPENROUTER_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, OPENAI_API_KEY), and no Ollama answers at %s, so the built-in Tesseract judge is used: it decides conditions about quoted visible text only", o.OllamaURL))
			}
		}
	}
	d := backendDefs[name]
	co := o.Client
	co.Provider = d.provider
	co.BaseURL = d.baseURL
	co.Model = d.model
	co.Service = name
	co.KeyEnv = d.keyEnv
	if co.Name == "" {
		co.Name = "judge"
	}
	switch name {
	case OpenRouter:
		co.Model = o.OpenRouterModel
	case Ollama:
		co.BaseURL = o.OllamaURL + "/v1"
	}
	if d.key != nil {
		co.APIKey = d.key(o.Keys)
		if !co.APIKey.Set() {
			return nil, Choice{}, fmt.Errorf("vision backend %s needs an API key: set %s", name, d.keyEnv)
		}
	}
	if o.BaseURL != "" {
		co.BaseURL = strings.TrimRight(o.BaseURL, "/")
		reason += "; endpoint from ACU_VISION_BASE_URL"
	}
	if o.Model != "" {
		co.Model = o.Model
		reason += "; model from ACU_VISION_MODEL"
	}
	if co.Model == "" {
		return nil, Choice{}, fmt.Errorf("vision backend %s has no default model: set ACU_VISION_MODEL to the model the server serves", name)
	}
	if co.Logger == nil {
		co.Logger = o.Logger
	}
	newClient := o.NewClient
	if newClient == nil {
		newClient = llm.New
	}
	client, err := newClient(co)
	if err != nil {
		return nil, Choice{}, fmt.Errorf("vision backend %s: %w", name, err)
	}
	v, err := NewVision(VisionOptions{
		Client:      client,
		Backend:     name,
		Model:       co.Model,
		System:      o.System,
		MaxTokens:   o.MaxTokens,
		Temperature: &o.Temperature,
		MaxDim:      o.MaxDim,
		Quality:     o.Quality,
		Timeout:     o.Timeout,
		Logger:      o.Logger,
	})
	if err != nil {
		return nil, Choice{}, err
	}
	base := co.BaseURL
	if base == "" {
		base = "the " + string(d.provider) + " default"
	}
	ch := Choice{Backend: name, Model: co.Model, BaseURL: co.BaseURL,
		Reason: fmt.Sprintf("vision judge %s, model %s at %s: %s.", name, co.Model, base, reason)}
	return v, ch, nil
}

func selectOCR(o SelectOptions, reason string) (Backend, Choice, error) {
	oo := o.OCR
	if oo.Logger == nil {
		oo.Logger = o.Logger
	}
	e, err := ocr.New(oo)
	if err != nil {
		return nil, Choice{}, fmt.Errorf("ocr judge: %w", err)
	}
	j, err := NewOCR(OCROptions{Engine: e, Logger: o.Logger})
	if err != nil {
		return nil, Choice{}, err
	}
	return j, Choice{Backend: OCR, Model: "tesseract", Reason: reason + "."}, nil
}

// probeOllama asks Ollama's version endpoint, bounded by ProbeTimeout.
func probeOllama(ctx context.Context, o SelectOptions) error {
	ctx, cancel := context.WithTimeout(ctx, o.ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.OllamaURL+"/api/version", nil)
	if err != nil {
		return err
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ollama at %s answered %s", o.OllamaURL, resp.Status)
	}
	return nil
}
