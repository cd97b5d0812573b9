package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAgentDefaults(t *testing.T) {
	getenv, environ := env(map[string]string{"HOME": "/home/u", "DISPLAY": ":7"})
	c, _, warnings, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Agent()
	if a.Host != "127.0.0.1" || a.Port != 1234 || c.AgentAddr() != "127.0.0.1:1234" {
		t.Errorf("listener = %s:%d", a.Host, a.Port)
	}
	if a.APIURL != "http://127.0.0.1:1235/v1/chat/completions" || a.Temperature != 0.7 || a.TopP != 0.9 || a.MaxTokens != 1000 {
		t.Errorf("model defaults = %s %v %v %d", a.APIURL, a.Temperature, a.TopP, a.MaxTokens)
	}
	if a.ClickHold != 10*time.Millisecond || a.PanelFile != "" {
		t.Errorf("click hold %v, panel file %q; want 10ms and none", a.ClickHold, a.PanelFile)
	}
	if a.ActionDelay != 50*time.Millisecond || a.DragSteps != 20 || a.DragStepDelay != 10*time.Millisecond || !a.PhysicalExecution {
		t.Errorf("execution defaults = %v %d %v %v", a.ActionDelay, a.DragSteps, a.DragStepDelay, a.PhysicalExecution)
	}
	if a.CaptureCrop != [4]int{0, 0, 1000, 1000} || a.CaptureScalePercent != 100 || a.LogLayout != "flat" || !a.LogToFile {
		t.Errorf("capture/log defaults = %v %d %s %v", a.CaptureCrop, a.CaptureScalePercent, a.LogLayout, a.LogToFile)
	}
	if a.UI.ExecutedHeat.RadiusScale != 0.22 || a.UI.ExecutedHeat.TrailTurns != 1 || a.Annotator != "go" || a.BootEnabled || a.BootVLMOutput != DefaultBootOutput {
		t.Errorf("ui/boot defaults = %+v %s %v", a.UI.ExecutedHeat, a.Annotator, a.BootEnabled)
	}
	if a.HTTPTimeout != 120*time.Second || a.Retries != 2 {
		t.Errorf("timeout = %v retries %d", a.HTTPTimeout, a.Retries)
	}
	if c.AgentDisplay() != ":7" || c.AgentRunsDir() != filepath.Join("/home/u/.local/state/acu", "agent-runs") {
		t.Errorf("display %s runs dir %s", c.AgentDisplay(), c.AgentRunsDir())
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %v", warnings)
	}
}

func TestAgentFromEnvironmentAndFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "acu.env")
	os.WriteFile(file, []byte(`ACU_AGENT_PORT=4321
ACU_AGENT_CAPTURE_CROP={"x1":0,"y1":0,"x2":250,"y2":250}
ACU_AGENT_UI_CONFIG={"executed_heat":{"trail_turns":4,"trail_shrink":0.8}}
ACU_AGENT_LOG_LAYOUT=turn_dirs
`), 0o600)
	getenv, environ := env(map[string]string{
		"HOME": "/home/u", "ACU_CONFIG": file,
		"ACU_AGENT_API_URL": "http://127.0.0.1:9/v1", "ACU_AGENT_MODEL": "qwen2.5-vl", "ACU_AGENT_TEMPERATURE": "0.2",
		"ACU_AGENT_VLM_HTTP_TIMEOUT_SECONDS": "45", "ACU_AGENT_CAPTURE_DELAY": "0.5", "ACU_AGENT_PHYSICAL_EXECUTION": "false",
		"ACU_AGENT_DRAG_STEP_DELAY": "0.02", "ACU_AGENT_BOOT_ENABLED": "true", "ACU_AGENT_MAX_TURNS": "50",
		"ACU_AGENT_MAX_COST_USD": "1.5", "ACU_AGENT_ANNOTATOR": "panel", "ACU_AGENT_CAPTURE_WIDTH": "640", "ACU_AGENT_CAPTURE_HEIGHT": "360",
	})
	c, _, _, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Agent()
	if a.Port != 4321 || a.CaptureCrop != [4]int{0, 0, 250, 250} || a.UI.ExecutedHeat.TrailTurns != 4 || a.LogLayout != "turn_dirs" {
		t.Errorf("from file: %d %v %d %s", a.Port, a.CaptureCrop, a.UI.ExecutedHeat.TrailTurns, a.LogLayout)
	}
	if a.APIURL != "http://127.0.0.1:9/v1" || a.Model != "qwen2.5-vl" || a.Temperature != 0.2 || a.HTTPTimeout != 45*time.Second ||
		a.CaptureDelay != 500*time.Millisecond || a.PhysicalExecution || a.DragStepDelay != 20*time.Millisecond || !a.BootEnabled ||
		a.MaxTurns != 50 || a.MaxCostUSD != 1.5 || a.Annotator != "panel" || a.CaptureWidth != 640 || a.CaptureHeight != 360 {
		t.Errorf("from environment: %+v", a)
	}
}

func TestAgentBadValues(t *testing.T) {
	for k, v := range map[string]string{
		"ACU_AGENT_CAPTURE_CROP":  "0,0,2000,1000",
		"ACU_AGENT_UI_CONFIG":     `{"executed_heat":{"trail_turns":0}}`,
		"ACU_AGENT_ANNOTATOR":     "canvas",
		"ACU_AGENT_TOP_P":         "2",
		"ACU_AGENT_LOG_LAYOUT":    "tree",
		"ACU_AGENT_PORT":          "0",
		"ACU_AGENT_CAPTURE_DELAY": "soon",
	} {
		t.Run(k, func(t *testing.T) {
			getenv, environ := env(map[string]string{"HOME": "/home/u", k: v})
			_, _, _, err := Load(getenv, environ, nil, nil)
			var ce *Error
			if !errors.As(err, &ce) || ce.Env != k || ce.Accepted == "" {
				t.Errorf("Load with %s=%s: %v; want an error naming it and what is accepted", k, v, err)
			}
		})
	}
}

func TestParseCrop(t *testing.T) {
	for in, want := range map[string][4]int{
		`{"x1":0,"y1":0,"x2":250,"y2":250}`: {0, 0, 250, 250},
		"500, 0, 1000, 500":                 {500, 0, 1000, 500},
	} {
		if got, err := ParseCrop(in); err != nil || got != want {
			t.Errorf("ParseCrop(%s) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{`{"x1":0}`, "1,2,3", "500,0,100,500", "a,b,c,d"} {
		if _, err := ParseCrop(bad); err == nil || strings.Contains(err.Error(), "%!") {
			t.Errorf("ParseCrop(%s) = %v; want an error", bad, err)
		}
	}
}
