package config

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestTaskDefaults(t *testing.T) {
	getenv, environ := env(map[string]string{"HOME": "/home/u", "DISPLAY": ":3", "OPENROUTER_API_KEY": "or-key"})
	c, _, _, err := Load(getenv, environ, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := TaskConfig{
		Enabled: true, Provider: "openai", BaseURL: "https://openrouter.ai/api/v1",
		FastModel: "anthropic/claude-haiku-4.5", PlannerModel: "anthropic/claude-opus-4.1", VerifierModel: "anthropic/claude-haiku-4.5",
		MaxIterations: 50, CallTimeout: 90 * time.Second, MaxTokens: 1024,
		OCR: true, Screenshots: true, FastScreenshot: true, PauseOnUser: true, PauseQuiet: 5 * time.Second, RecoverAfter: 10 * time.Second, Split: true,
		AppDirs: []string{"/usr/share/applications", "/usr/local/share/applications"},
	}
	if d := cmp.Diff(want, *c.Task(), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("task defaults (-want +got):\n%s", d)
	}
	if c.TaskDisplay() != ":3" {
		t.Errorf("TaskDisplay() = %q, want DISPLAY's :3", c.TaskDisplay())
	}
	if k, env := c.TaskAPIKey(); k.Reveal() != "or-key" || env != "OPENROUTER_API_KEY" {
		t.Errorf("TaskAPIKey() = %v from %s, want OPENROUTER_API_KEY's", k, env)
	}
}

func TestTaskFromEnvironment(t *testing.T) {
	getenv, environ := env(map[string]string{
		"HOME": "/home/u", "ACU_TASK_DISPLAY": ":9", "ACU_TASK_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "an-key",
		"ACU_TASK_FAST_MODEL": "claude-haiku-4-5", "ACU_TASK_PLANNER_MODEL": "claude-opus-4-1", "ACU_TASK_VERIFIER_MODEL": "claude-sonnet-4-5",
		"ACU_TASK_MAX_ITERATIONS": "20", "ACU_TASK_CALL_TIMEOUT": "45s", "ACU_TASK_OCR": "false", "ACU_TASK_PAUSE_QUIET": "2s",
		"ACU_TASK_APP_DIRS": "/opt/apps", "ACU_TASK_RECOVER_AFTER": "30",
	})
	c, _, warnings, err := Load(getenv, environ, nil, nil)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("Load = %v, warnings %v", err, warnings)
	}
	tc := c.Task()
	if c.TaskDisplay() != ":9" || tc.Provider != "anthropic" || tc.FastModel != "claude-haiku-4-5" || tc.PlannerModel != "claude-opus-4-1" ||
		tc.VerifierModel != "claude-sonnet-4-5" || tc.MaxIterations != 20 || tc.CallTimeout != 45*time.Second || tc.OCR ||
		tc.PauseQuiet != 2*time.Second || tc.RecoverAfter != 30*time.Second || !cmp.Equal(tc.AppDirs, []string{"/opt/apps"}) {
		t.Errorf("task config from the environment = %+v", *tc)
	}
	if k, env := c.TaskAPIKey(); k.Reveal() != "an-key" || env != "ANTHROPIC_API_KEY" {
		t.Errorf("TaskAPIKey() = %v from %s, want ANTHROPIC_API_KEY's", k, env)
	}
	getenv, environ = env(map[string]string{"HOME": "/home/u", "ACU_TASK_API_KEY": "own", "OPENROUTER_API_KEY": "or"})
	c, _, _, _ = Load(getenv, environ, nil, nil)
	if k, env := c.TaskAPIKey(); k.Reveal() != "own" || env != "ACU_TASK_API_KEY" {
		t.Errorf("TaskAPIKey() = %v from %s, want ACU_TASK_API_KEY's", k, env)
	}
}

func TestTaskBadValues(t *testing.T) {
	for env, v := range map[string]string{
		"ACU_TASK_MAX_ITERATIONS": "0", "ACU_TASK_PROVIDER": "bard", "ACU_TASK_CALL_TIMEOUT": "10ms", "ACU_TASK_OCR": "maybe",
		"ACU_TASK_RECOVER_AFTER": "-1s",
	} {
		getenv, environ := env2(env, v)
		_, _, _, err := Load(getenv, environ, nil, nil)
		var ce *Error
		if !errors.As(err, &ce) || ce.Env != env {
			t.Errorf("%s=%s: err = %v, want a config error naming it", env, v, err)
		}
	}
}

func env2(k, v string) (func(string) string, []string) {
	return env(map[string]string{"HOME": "/home/u", k: v})
}
