package config

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/annotate"
	"github.com/acu-dev/acu/internal/secret"
)

// AgentConfig holds the desktop agent loop's settings (`acu agent`): every
// key of the seed's config.py as ACU_AGENT_<KEY>, plus acu's limits and the
// annotator choice. Its settings are appended to the table by this file's
// init.
type AgentConfig struct {
	// Enabled makes `acu serve` run the agent loop too; `acu agent` always
	// runs it.
	Enabled  bool
	Host     string
	Port     int
	LogLevel string
	// LogToFile writes main.log into each run directory.
	LogToFile bool
	// UIConfig is UI_CONFIG as given (JSON); UI is it parsed over the
	// defaults.
	UIConfig string
	UI       annotate.Config

	APIURL       string
	APIKey       secret.String
	Model        string
	Temperature  float64
	TopP         float64
	MaxTokens    int
	HTTPTimeout  time.Duration // VLM_HTTP_TIMEOUT_SECONDS; <= 0 is the seed's infinite, run as 24 h
	Retries      int
	SystemPrompt string

	Display             string
	CaptureCrop         [4]int
	CaptureWidth        int
	CaptureHeight       int
	CaptureScalePercent int
	CaptureDelay        time.Duration

	PhysicalExecution bool
	ActionDelay       time.Duration
	ClickHold         time.Duration
	DragSteps         int
	DragStepDelay     time.Duration

	RunsDir   string
	PanelFile string
	LogLayout string

	BootEnabled   bool
	BootVLMOutput string

	MaxTurns   int
	MaxCostUSD float64
	Annotator  string
}

// Agent returns c's agent settings.
func (c *Config) Agent() *AgentConfig {
	return &c.agent
}

// AgentAddr is the agent's listen address, host:port.
func (c *Config) AgentAddr() string {
	a := c.Agent()
	return net.JoinHostPort(a.Host, strconv.Itoa(a.Port))
}

// AgentRunsDir is where the agent's run directories go: ACU_AGENT_RUNS_DIR,
// else ACU_DATA_DIR/agent-runs.
func (c *Config) AgentRunsDir() string {
	if d := c.Agent().RunsDir; d != "" {
		return d
	}
	return filepath.Join(c.DataDir, "agent-runs")
}

// AgentDisplay is the display the agent drives: ACU_AGENT_DISPLAY, else
// DISPLAY.
func (c *Config) AgentDisplay() string {
	if d := c.Agent().Display; d != "" {
		return d
	}
	return c.Display
}

// DefaultBootOutput is BOOT_VLM_OUTPUT's default: no action, so the first
// turn only looks at the screen.
const DefaultBootOutput = `{"observation":"Starting. Nothing done yet: I look at the screen first.","bboxes":[],"actions":[]}`

// ParseCrop reads CAPTURE_CROP: the seed's JSON {"x1":0,"y1":0,"x2":1000,"y2":1000}
// or "x1,y1,x2,y2", each 0..1000 with x1<x2 and y1<y2.
func ParseCrop(v string) ([4]int, error) {
	v = strings.TrimSpace(v)
	var c [4]int
	if strings.HasPrefix(v, "{") {
		var m map[string]float64
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			return c, fmt.Errorf("not a JSON object of numbers")
		}
		for i, k := range []string{"x1", "y1", "x2", "y2"} {
			f, ok := m[k]
			if !ok {
				return c, fmt.Errorf("missing %s", k)
			}
			c[i] = int(f + 0.5)
		}
	} else {
		parts := strings.Split(v, ",")
		if len(parts) != 4 {
			return c, fmt.Errorf("want four numbers")
		}
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return c, fmt.Errorf("%q is not a whole number", p)
			}
			c[i] = n
		}
	}
	for _, n := range c {
		if n < 0 || n > 1000 {
			return c, fmt.Errorf("coordinates must be within 0..1000")
		}
	}
	if c[0] >= c[2] || c[1] >= c[3] {
		return c, fmt.Errorf("want x1 < x2 and y1 < y2")
	}
	return c, nil
}

func init() {
	g := func(c *Config) *AgentConfig { return c.Agent() }
	secs := func(env, def string, lo, hi time.Duration, help string, p func(*Config) *time.Duration) Setting {
		return duration(env, "", def, lo, hi, help, p)
	}
	settings = append(settings,
		// HTTP and logging.
		boolean("ACU_AGENT_ENABLED", "", "false", "`acu serve` also runs the desktop agent loop and its panel (`acu agent` runs it on its own)",
			func(c *Config) *bool { return &g(c).Enabled }),
		safety(str("ACU_AGENT_HOST", "", "127.0.0.1", "a host name or IP address", "address the agent's panel and API listen on (HOST of the seed)",
			func(c *Config) *string { return &g(c).Host })),
		integer("ACU_AGENT_PORT", "", "1234", 1, 65535, "port of the agent's panel and API (PORT of the seed)", func(c *Config) *int { return &g(c).Port }),
		enum("ACU_AGENT_LOG_LEVEL", "", "info", []string{"debug", "info", "warn", "error"}, "log level of `acu agent` and main.log (LOG_LEVEL)",
			func(c *Config) *string { return &g(c).LogLevel }),
		boolean("ACU_AGENT_LOG_TO_FILE", "", "true", "write main.log into each run directory (LOG_TO_FILE)", func(c *Config) *bool { return &g(c).LogToFile }),
		Setting{Env: "ACU_AGENT_UI_CONFIG", Default: "", Accepted: "a JSON object with executed_heat, bbox_heat (and labels) keys, as the seed's UI_CONFIG",
			Help: "overlays burned into each screenshot (UI_CONFIG); keys left out keep their defaults",
			set: func(c *Config, v string) error {
				ui, err := annotate.ParseConfig(v)
				if err != nil {
					return err
				}
				g(c).UIConfig, g(c).UI = v, ui
				return nil
			},
			get: func(c *Config) string { return g(c).UIConfig }},

		// Model.
		str("ACU_AGENT_API_URL", "", "http://127.0.0.1:1235/v1/chat/completions", "an http(s) URL: the chat completions URL or the base up to /v1",
			"OpenAI-compatible endpoint of the agent's model (API_URL)", func(c *Config) *string { return &g(c).APIURL }),
		secretStr("ACU_AGENT_API_KEY", "", "bearer key for ACU_AGENT_API_URL (empty: none, for local servers)", func(c *Config) *secret.String { return &g(c).APIKey }),
		str("ACU_AGENT_MODEL", "", "local-model", "a model name", "model sent in each request (MODEL)", func(c *Config) *string { return &g(c).Model }),
		float("ACU_AGENT_TEMPERATURE", "", "0.7", 0, 2, "sampling temperature (TEMPERATURE)", func(c *Config) *float64 { return &g(c).Temperature }),
		float("ACU_AGENT_TOP_P", "", "0.9", 0, 1, "nucleus sampling top_p (TOP_P)", func(c *Config) *float64 { return &g(c).TopP }),
		integer("ACU_AGENT_MAX_TOKENS", "", "1000", 1, 131072, "max_tokens of a turn's reply (MAX_TOKENS)", func(c *Config) *int { return &g(c).MaxTokens }),
		secs("ACU_AGENT_VLM_HTTP_TIMEOUT_SECONDS", "120", -24*time.Hour, 24*time.Hour,
			"timeout of one model call attempt (VLM_HTTP_TIMEOUT_SECONDS); 0 or less stands for the seed's none and means 24 hours, which lets a hung endpoint stall the loop that long",
			func(c *Config) *time.Duration { return &g(c).HTTPTimeout }),
		integer("ACU_AGENT_VLM_RETRIES", "", "2", 0, 10, "retries of a failed model call (timeouts, 429, 5xx) before the loop reports the error and waits for /inject",
			func(c *Config) *int { return &g(c).Retries }),
		str("ACU_AGENT_SYSTEM_PROMPT", "", "", "text", "system prompt (SYSTEM_PROMPT); empty: the built-in one (coordinates, JSON reply, overlays, limits)",
			func(c *Config) *string { return &g(c).SystemPrompt }),

		// Capture and working area.
		str("ACU_AGENT_DISPLAY", "", "", "an X display name such as :99, or a Wayland socket (wayland-1 or its path)", "display the agent sees and drives (default DISPLAY)", func(c *Config) *string { return &g(c).Display }),
		safety(Setting{Env: "ACU_AGENT_CAPTURE_CROP", Default: `{"x1":0,"y1":0,"x2":1000,"y2":1000}`,
			Accepted: `{"x1":..,"y1":..,"x2":..,"y2":..} or x1,y1,x2,y2, each 0..1000 with x1<x2 and y1<y2`,
			Help:     "working area on the screen, normalized (CAPTURE_CROP): what the model sees and the only place its actions land",
			set: func(c *Config, v string) error {
				cr, err := ParseCrop(v)
				if err != nil {
					return err
				}
				g(c).CaptureCrop = cr
				return nil
			},
			get: func(c *Config) string {
				cr := g(c).CaptureCrop
				return fmt.Sprintf(`{"x1":%d,"y1":%d,"x2":%d,"y2":%d}`, cr[0], cr[1], cr[2], cr[3])
			}}),
		integer("ACU_AGENT_CAPTURE_WIDTH", "", "0", 0, 16384, "screenshot width; with CAPTURE_HEIGHT both > 0 they fix the size (CAPTURE_WIDTH)",
			func(c *Config) *int { return &g(c).CaptureWidth }),
		integer("ACU_AGENT_CAPTURE_HEIGHT", "", "0", 0, 16384, "screenshot height (CAPTURE_HEIGHT)", func(c *Config) *int { return &g(c).CaptureHeight }),
		integer("ACU_AGENT_CAPTURE_SCALE_PERCENT", "", "100", -1000, 100,
			"uniform downscale after the crop when width/height are unset (CAPTURE_SCALE_PERCENT); 100 or <= 0 means none",
			func(c *Config) *int { return &g(c).CaptureScalePercent }),
		secs("ACU_AGENT_CAPTURE_DELAY", "0.3", 0, time.Minute, "wait after the actions before the screenshot, for the UI to settle (CAPTURE_DELAY)",
			func(c *Config) *time.Duration { return &g(c).CaptureDelay }),

		// Execution.
		safety(boolean("ACU_AGENT_PHYSICAL_EXECUTION", "", "true", "send real input; false runs the loop without touching the mouse or keyboard (PHYSICAL_EXECUTION)",
			func(c *Config) *bool { return &g(c).PhysicalExecution })),
		secs("ACU_AGENT_ACTION_DELAY_SECONDS", "0.05", 0, time.Minute, "delay between actions (ACTION_DELAY_SECONDS)",
			func(c *Config) *time.Duration { return &g(c).ActionDelay }),
		duration("ACU_AGENT_CLICK_HOLD", "", "10ms", 0, time.Second, "how long a click holds its button; some applications miss clicks shorter than a few milliseconds (0: no hold)",
			func(c *Config) *time.Duration { return &g(c).ClickHold }),
		integer("ACU_AGENT_DRAG_DURATION_STEPS", "", "20", 1, 10000, "pointer moves between press and release in a drag (DRAG_DURATION_STEPS)",
			func(c *Config) *int { return &g(c).DragSteps }),
		secs("ACU_AGENT_DRAG_STEP_DELAY", "0.01", 0, 10*time.Second, "delay between drag steps (DRAG_STEP_DELAY)",
			func(c *Config) *time.Duration { return &g(c).DragStepDelay }),

		// Run output.
		str("ACU_AGENT_PANEL_FILE", "", "", "an HTML file path", "a panel page of your own to serve instead of acu's, such as the origin engine's panel.html unchanged; acu adds its login to it",
			func(c *Config) *string { return &g(c).PanelFile }),
		str("ACU_AGENT_RUNS_DIR", "", "", "a directory path", "run directories run_0001, ... (RUNS_DIR); default ACU_DATA_DIR/agent-runs",
			func(c *Config) *string { return &g(c).RunsDir }),
		enum("ACU_AGENT_LOG_LAYOUT", "", "flat", []string{"flat", "turn_dirs"}, "run directory layout (LOG_LAYOUT): flat images + turns.jsonl, or turn_NNNN/ folders",
			func(c *Config) *string { return &g(c).LogLayout }),

		// Boot.
		boolean("ACU_AGENT_BOOT_ENABLED", "", "false", "start the loop at once with BOOT_VLM_OUTPUT as the first model output; false waits for POST /inject (BOOT_ENABLED)",
			func(c *Config) *bool { return &g(c).BootEnabled }),
		str("ACU_AGENT_BOOT_VLM_OUTPUT", "", DefaultBootOutput, "the model's JSON reply format", "first model output when BOOT_ENABLED (BOOT_VLM_OUTPUT); put the task in its observation",
			func(c *Config) *string { return &g(c).BootVLMOutput }),

		// acu's limits and annotator.
		safety(integer("ACU_AGENT_MAX_TURNS", "", "0", 0, 1000000, "end a session after this many turns (0: no limit)", func(c *Config) *int { return &g(c).MaxTurns })),
		safety(float("ACU_AGENT_MAX_COST_USD", "", "0", 0, 1e6, "end a session once its model calls cost this many US dollars (0: no limit; local models cost 0)",
			func(c *Config) *float64 { return &g(c).MaxCostUSD })),
		enum("ACU_AGENT_ANNOTATOR", "", "go", []string{"go", "panel"},
			"who draws the overlays: go (in the engine, no browser needed) or panel (the seed's protocol: the browser panel draws and POSTs /annotated)",
			func(c *Config) *string { return &g(c).Annotator }),
	)
}
