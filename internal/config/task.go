package config

import (
	"time"

	"github.com/acu-dev/acu/internal/secret"
)

// TaskConfig holds the task orchestrator's settings (`acu run`, POST
// /v1/tasks, the MCP tool run_task): the display, one model endpoint with a
// model per role (fast agent, planner, verifier), the loop's limits and the
// element map's sources. Its settings are appended to the table by this
// file's init.
type TaskConfig struct {
	Enabled bool
	Display string

	Provider string
	BaseURL  string
	APIKey   secret.String

	FastModel     string
	PlannerModel  string
	VerifierModel string

	MaxIterations int
	// MaxCostUSD ends a task once its model calls cost this many US
	// dollars (0: no limit).
	MaxCostUSD  float64
	CallTimeout time.Duration
	MaxTokens   int

	OCR         bool
	Screenshots bool
	// FastScreenshot sends the fast agent and the progress checker a
	// screenshot with the elements' ids drawn on it.
	FastScreenshot bool
	PauseOnUser    bool
	PauseQuiet     time.Duration
	RecoverAfter   time.Duration
	Split          bool
	AppDirs        []string
}

// Task returns c's task settings.
func (c *Config) Task() *TaskConfig {
	return &c.task
}

// TaskDisplay is the display tasks run on: ACU_TASK_DISPLAY, else DISPLAY.
func (c *Config) TaskDisplay() string {
	if d := c.Task().Display; d != "" {
		return d
	}
	return c.Display
}

// TaskAPIKey is the key of the task models: ACU_TASK_API_KEY, else the key
// of the provider's usual variable (OPENROUTER_API_KEY for the default
// OpenAI-compatible endpoint, ANTHROPIC_API_KEY, GEMINI_API_KEY), and the
// name of the variable it came from.
func (c *Config) TaskAPIKey() (secret.String, string) {
	t := c.Task()
	if t.APIKey != "" {
		return t.APIKey, "ACU_TASK_API_KEY"
	}
	switch t.Provider {
	case "anthropic":
		return c.AnthropicAPIKey, "ANTHROPIC_API_KEY"
	case "gemini":
		return c.GeminiAPIKey, "GEMINI_API_KEY"
	}
	return c.OpenRouterAPIKey, "OPENROUTER_API_KEY"
}

func init() {
	t := func(c *Config) *TaskConfig { return c.Task() }
	settings = append(settings,
		boolean("ACU_TASK_ENABLED", "", "true", "`acu serve` accepts tasks (POST /v1/tasks, MCP run_task) when a task model key or endpoint is configured",
			func(c *Config) *bool { return &t(c).Enabled }),
		str("ACU_TASK_DISPLAY", "", "", "an X display name such as :0, or a Wayland socket (wayland-1 or its path)", "display tasks run on (default DISPLAY)", func(c *Config) *string { return &t(c).Display }),
		enum("ACU_TASK_PROVIDER", "", "openai", []string{"openai", "anthropic", "gemini"},
			"wire format of the task models' endpoint (openai: any OpenAI-compatible server such as OpenRouter, vLLM, Ollama)",
			func(c *Config) *string { return &t(c).Provider }),
		str("ACU_TASK_BASE_URL", "", "https://openrouter.ai/api/v1", "a URL (up to and including /v1 for openai)", "endpoint of the task models",
			func(c *Config) *string { return &t(c).BaseURL }),
		secretStr("ACU_TASK_API_KEY", "", "key of the task models' endpoint (default: OPENROUTER_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY by provider)",
			func(c *Config) *secret.String { return &t(c).APIKey }),
		str("ACU_TASK_FAST_MODEL", "", "anthropic/claude-haiku-4.5", "a model id", "the fast agent's model: acts every iteration and checks progress",
			func(c *Config) *string { return &t(c).FastModel }),
		str("ACU_TASK_PLANNER_MODEL", "", "anthropic/claude-opus-4.1", "a model id", "the planning agent's model: strategy at the start and on recovery",
			func(c *Config) *string { return &t(c).PlannerModel }),
		str("ACU_TASK_VERIFIER_MODEL", "", "anthropic/claude-haiku-4.5", "a model id", "the completion verifier's model",
			func(c *Config) *string { return &t(c).VerifierModel }),
		safety(integer("ACU_TASK_MAX_ITERATIONS", "", "50", 1, 1000, "iterations before a task fails", func(c *Config) *int { return &t(c).MaxIterations })),
		safety(float("ACU_TASK_MAX_COST_USD", "", "0", 0, 1e6, "end a task once its model calls (fast agent, planner, verifier) cost this many US dollars, or one comes back with no cost (0: no limit; local models cost 0)",
			func(c *Config) *float64 { return &t(c).MaxCostUSD })),
		duration("ACU_TASK_CALL_TIMEOUT", "", "90s", time.Second, 30*time.Minute, "timeout of one model call of a task", func(c *Config) *time.Duration { return &t(c).CallTimeout }),
		integer("ACU_TASK_MAX_TOKENS", "", "1024", 64, 32768, "max_tokens of the fast agent (the planner gets twice as many)", func(c *Config) *int { return &t(c).MaxTokens }),
		boolean("ACU_TASK_OCR", "", "true", "add Tesseract text to element maps (what the accessibility tree lacks)", func(c *Config) *bool { return &t(c).OCR }),
		boolean("ACU_TASK_SCREENSHOTS", "", "true", "send a screenshot to the planner and the verifier besides the element map", func(c *Config) *bool { return &t(c).Screenshots }),
		boolean("ACU_TASK_FAST_SCREENSHOT", "", "true", "send the fast agent and the progress checker a screenshot each iteration with every element's id drawn on it (set-of-marks); false for a text-only fast model", func(c *Config) *bool { return &t(c).FastScreenshot }),
		safety(boolean("ACU_TASK_PAUSE_ON_INPUT", "", "true", "pause a task while someone else makes input, pointer or keyboard (recorded as an intervention)", func(c *Config) *bool { return &t(c).PauseOnUser })),
		duration("ACU_TASK_PAUSE_QUIET", "", "5s", 100*time.Millisecond, time.Hour, "how long the user's input must stop before a paused task resumes",
			func(c *Config) *time.Duration { return &t(c).PauseQuiet }),
		duration("ACU_TASK_RECOVER_AFTER", "", "10s", 0, time.Hour,
			"how long the element map must stay unchanged (besides 4 unchanged maps in a row) before stagnation recovery acts; a model waiting for a slow application gets this long (0: the count alone)",
			func(c *Config) *time.Duration { return &t(c).RecoverAfter }),
		boolean("ACU_TASK_SPLIT", "", "true", "tile two windows side by side when the planner recommends splitting the work", func(c *Config) *bool { return &t(c).Split }),
		list("ACU_TASK_APP_DIRS", "", "/usr/share/applications,/usr/local/share/applications", "directories of desktop entries listed to the planner as installed applications (~/.local/share/applications is added)",
			func(c *Config) *[]string { return &t(c).AppDirs }),
	)
}
