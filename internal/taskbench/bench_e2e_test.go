package taskbench_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/taskbench"
)

// acuBin is the acu binary the engines run, built once by TestMain.
var acuBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "acu-taskbench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	acuBin = filepath.Join(dir, "acu")
	build := exec.Command("go", "build", "-o", acuBin, "github.com/acu-dev/acu/cmd/acu")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build acu:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// mapLine is a line of the element map: [id] type "text" ...
var mapLine = regexp.MustCompile(`(?m)^\s*\[(\w+)\] (\w+)(?: "((?:[^"\\]|\\.)*)")?(.*)$`)

// mapElement is an element of the map: its id, type, quoted text and the
// whole line (values, flags).
type mapElement struct{ id, role, name, line string }

func parseMap(system string) []mapElement {
	_, mp, _ := strings.Cut(system, "ELEMENT MAP")
	var out []mapElement
	for _, m := range mapLine.FindAllStringSubmatch(mp, -1) {
		out = append(out, mapElement{m[1], m[2], strings.ReplaceAll(m[3], `\"`, `"`), m[0]})
	}
	return out
}

// scripted is the CI model: it plays the fast agent from the task's script,
// one step per call on the element the step's selector finds in the map it
// is sent, and waits (no steps) while the element is not there; the
// verifier accepts once the script is done.
type scripted struct {
	t      *testing.T
	mu     sync.Mutex
	task   taskbench.Task
	work   string
	cursor int
	misses int
}

func (s *scripted) start(t taskbench.Task, work string) {
	s.mu.Lock()
	s.task, s.work, s.cursor, s.misses = t, work, 0, 0
	s.mu.Unlock()
}

func findElement(st taskbench.ScriptStep, els []mapElement) string {
	n := 0
	for _, e := range els {
		if st.Role != "" && e.role != st.Role {
			continue
		}
		if st.Name != "" && e.name != st.Name {
			continue
		}
		if strings.Contains(e.line, " hidden") || strings.Contains(e.line, "(-") {
			continue
		}
		if st.NameHas != "" && !strings.Contains(e.line, st.NameHas) {
			continue
		}
		if n == st.Nth {
			return e.id
		}
		n++
	}
	return ""
}

func (s *scripted) handle(r llmtest.Request) llmtest.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handleLocked(r)
}

func (s *scripted) handleLocked(r llmtest.Request) llmtest.Reply {
	switch {
	case strings.HasPrefix(r.System, "You check the progress"):
		return llmtest.Reply{Text: `{"progressing":true,"reason":"following the script"}`}
	case strings.HasPrefix(r.System, "You are the planning agent"):
		return llmtest.Reply{Text: `{"approaches":[{"name":"Script","description":"the task's script","steps":["follow it"]}],"recommended":0}`}
	case strings.HasPrefix(r.System, "You verify"):
		return llmtest.Reply{Text: fmt.Sprintf(`{"done":%v,"reason":"script step %d of %d"}`, s.cursor >= len(s.task.Script), s.cursor, len(s.task.Script))}
	}
	done := `{"thought":"the script is done","steps":[],"complete":true,"summary":"done"}`
	if s.cursor >= len(s.task.Script) {
		return llmtest.Reply{Text: done}
	}
	st := s.task.Script[s.cursor]
	if st.Action == "done" {
		s.cursor = len(s.task.Script)
		return llmtest.Reply{Text: done}
	}
	els := parseMap(r.System)
	if os.Getenv("ACU_TASKBENCH_MAPS") != "" {
		s.t.Logf("%s step %d map:\n%s", s.task.ID, s.cursor, r.System[strings.Index(r.System, "ELEMENT MAP ("):])
	}
	id := ""
	if st.Role != "" || st.Name != "" || st.NameHas != "" {
		id = findElement(st, els)
		if id == "" {
			s.misses++
			if s.misses%5 == 1 {
				s.t.Logf("%s: step %d %+v: not in the map yet:\n%s", s.task.ID, s.cursor, st, r.System[strings.Index(r.System, "ELEMENT MAP"):])
			}
			time.Sleep(500 * time.Millisecond)
			return llmtest.Reply{Text: `{"thought":"waiting for the element","steps":[],"complete":false}`}
		}
	}
	if st.Until == "" || findElement(taskbench.ScriptStep{Name: st.Until}, els) != "" {
		s.cursor++
	}
	if st.Until != "" && findElement(taskbench.ScriptStep{Name: st.Until}, els) != "" {
		return s.handleLocked(r)
	}
	step := map[string]string{"action": st.Action}
	switch st.Action {
	case "wait":
		return llmtest.Reply{Text: `{"thought":"it is there","steps":[],"complete":false}`}
	case "click":
		step["target"] = id
	case "type":
		step["target"], step["text"] = id, strings.ReplaceAll(st.Text, "$WORK", s.work)
	case "key":
		step["keys"] = st.Keys
		if id != "" {
			step["target"] = id
		}
	}
	b, _ := json.Marshal(map[string]any{"thought": "script step", "steps": []any{step}, "complete": false})
	return llmtest.Reply{Text: string(b)}
}

// idle is the model that does nothing: it claims completion at once and
// its verifier agrees. Every checker must still fail.
func idle(r llmtest.Request) llmtest.Reply {
	switch {
	case strings.HasPrefix(r.System, "You check the progress"):
		return llmtest.Reply{Text: `{"progressing":true,"reason":"ok"}`}
	case strings.HasPrefix(r.System, "You are the planning agent"):
		return llmtest.Reply{Text: `{"approaches":[{"name":"Nothing","description":"do nothing","steps":["none"]}],"recommended":0}`}
	case strings.HasPrefix(r.System, "You verify"):
		return llmtest.Reply{Text: `{"done":true,"reason":"looks done"}`}
	}
	return llmtest.Reply{Text: `{"thought":"nothing to do","steps":[],"complete":true,"summary":"done"}`}
}

func modelEnv(srv *llmtest.Server) []string {
	return []string{"ACU_TASK_BASE_URL=" + srv.URL, "ACU_TASK_API_KEY=" + llmtest.Key, "ACU_TASK_PAUSE_ON_INPUT=false"}
}

func builtin(t *testing.T, ci bool) []taskbench.Task {
	t.Helper()
	ts, err := taskbench.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if sel := os.Getenv("ACU_TASKBENCH_TASKS"); sel != "" {
		ts, err = taskbench.Select(ts, strings.Split(sel, ","), false)
	} else {
		ts, err = taskbench.Select(ts, nil, ci)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func runSuite(t *testing.T, ts []taskbench.Task, model string, h llmtest.Handler, before func(taskbench.Task, string)) *taskbench.Report {
	t.Helper()
	srv := llmtest.NewOpenAI(t, h)
	var log bytes.Buffer
	rep, err := taskbench.Run(t.Context(), ts, taskbench.Options{Bin: acuBin, Engine: taskbench.Orchestrator{Env: modelEnv(srv)}, Model: model,
		WorkDir: t.TempDir(), Log: &log, Before: before, Progress: func(r taskbench.TaskResult) {
			t.Logf("%s: success %v steps %d wall %.1fs (%s) %s%s%s", r.ID, r.Success, r.Steps, r.WallSeconds, r.Engine.Status, r.Check, r.Error, r.Skipped)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if t.Failed() || os.Getenv("ACU_TASKBENCH_LOG") != "" {
		t.Logf("engine log:\n%s", log.String())
	}
	var md bytes.Buffer
	rep.Markdown(&md)
	t.Logf("%s report:\n%s", model, md.String())
	return rep
}

// TestScriptedModelSolvesCISubset proves the tasks and checkers work: the
// scripted model, reading only the element maps `acu run` sends it, solves
// every task of the CI subset (all tasks with ACU_TASKBENCH_ALL=1).
func TestScriptedModelSolvesCISubset(t *testing.T) {
	ts := builtin(t, os.Getenv("ACU_TASKBENCH_ALL") == "")
	m := &scripted{t: t}
	start := time.Now()
	rep := runSuite(t, ts, "scripted", m.handle, m.start)
	t.Logf("%d tasks in %s", len(ts), time.Since(start).Round(time.Second))
	for _, r := range rep.Tasks {
		if r.Skipped != "" {
			t.Errorf("%s skipped: %s", r.ID, r.Skipped)
		} else if !r.Success {
			t.Errorf("%s: the scripted model did not solve it: %s%s (engine %+v)", r.ID, r.Error, r.Check, r.Engine)
		}
	}
}

// TestIdleModelFailsEveryTask proves the checkers can fail: a model that
// does nothing but claim completion (its verifier agreeing) fails every
// task of the suite.
func TestIdleModelFailsEveryTask(t *testing.T) {
	ts := builtin(t, false)
	rep := runSuite(t, ts, "idle", idle, nil)
	for _, r := range rep.Tasks {
		if r.Success || r.Error != "" || r.Skipped != "" {
			t.Errorf("%s: success %v error %q skipped %q: want a checker's failure", r.ID, r.Success, r.Error, r.Skipped)
		}
	}
}
