package taskbench_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/leakcheck"
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
	leakcheck.MainThen(m, func() { os.RemoveAll(dir) }, "acu-dev/acu/", "github.com/jezek/xgb")
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
	vars   []string // the groups of the last read step: {1}, {2}, ...
}

func (s *scripted) start(t taskbench.Task, work string) {
	s.mu.Lock()
	s.task, s.work, s.cursor, s.misses, s.vars = t, work, 0, 0, nil
	s.mu.Unlock()
}

// mapBox is an element line's centre: (x,y WxH).
var mapBox = regexp.MustCompile(`\((-?\d+),(-?\d+) \d+x\d+\)`)

// onScreen reports whether the line's element has its centre on the task's
// screen.
func onScreen(line string) bool {
	m := mapBox.FindStringSubmatch(line)
	if m == nil {
		return true // OCR lines and windows without a box
	}
	x, _ := strconv.Atoi(m[1])
	y, _ := strconv.Atoi(m[2])
	return x >= 0 && y >= 0 && x < taskbench.ScreenW && y < taskbench.ScreenH
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
		if strings.Contains(e.line, " hidden") || !onScreen(e.line) {
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

// expand fills {1}, {2} from the last read step and $WORK.
func (s *scripted) expand(v string) string {
	for i, x := range s.vars {
		v = strings.ReplaceAll(v, fmt.Sprintf("{%d}", i+1), x)
	}
	return strings.ReplaceAll(v, "$WORK", s.work)
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
	if os.Getenv("ACU_TASKBENCH_MAPS") != "" {
		s.t.Logf("%s step %d map:\n%s", s.task.ID, s.cursor, r.System[strings.Index(r.System, "ELEMENT MAP ("):])
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
	id := ""
	line := ""
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
		for _, e := range els {
			if e.id == id {
				line = e.line
			}
		}
	}
	if st.Until == "" || findElement(taskbench.ScriptStep{Name: st.Until}, els) != "" {
		s.cursor++
	}
	if st.Until != "" && findElement(taskbench.ScriptStep{Name: st.Until}, els) != "" {
		return s.handleLocked(r)
	}
	step := map[string]any{"action": st.Action}
	var steps []any
	switch st.Action {
	case "wait":
		return llmtest.Reply{Text: `{"thought":"it is there","steps":[],"complete":false}`}
	case "read":
		m := regexp.MustCompile(st.Pattern).FindStringSubmatch(line)
		if m == nil {
			s.t.Errorf("%s: read %q: no match in %q", s.task.ID, st.Pattern, line)
			return llmtest.Reply{Text: done}
		}
		s.vars = m[1:]
		return s.handleLocked(r) // reading is free: the next step goes in this reply
	case "click", "double_click", "right_click":
		step["target"] = id
	case "type":
		step["target"], step["text"] = id, s.expand(st.Text)
	case "key":
		step["keys"] = s.expand(st.Keys)
		if id != "" {
			step["target"] = id
		}
	case "scroll":
		step["direction"], step["amount"] = st.Direction, st.Amount
		if id != "" {
			step["target"] = id
		}
	case "drag":
		to := findElement(taskbench.ScriptStep{Name: st.ToName}, els)
		if to == "" {
			s.t.Errorf("%s: drag onto %q: not in the map", s.task.ID, st.ToName)
			return llmtest.Reply{Text: done}
		}
		step["target"], step["to"] = id, to
	case "launch":
		step["app"] = st.App
	case "wait_for":
		step["condition"], step["timeout"] = st.Condition, st.Timeout
	case "clicks":
		// One click a character, on the key of that name: a model
		// working a calculator's keypad.
		for _, ch := range s.expand(st.Text) {
			k := findElement(taskbench.ScriptStep{Role: st.Role, Name: string(ch)}, els)
			if k == "" {
				s.t.Errorf("%s: no %s named %q in the map", s.task.ID, st.Role, string(ch))
				return llmtest.Reply{Text: done}
			}
			steps = append(steps, map[string]any{"action": "click", "target": k})
		}
	}
	if steps == nil {
		steps = []any{step}
	}
	b, _ := json.Marshal(map[string]any{"thought": "script step", "steps": steps, "complete": false})
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
	// Model names without a price: the report's cost is unknown, not a
	// made-up figure.
	// The gate's user-first check (ACU_ACT_PAUSE_ON_INPUT) stays on, as in
	// a real run: a step acu refuses as the user's fails its task here.
	return []string{"ACU_TASK_BASE_URL=" + srv.URL, "ACU_TASK_API_KEY=" + llmtest.Key, "ACU_TASK_PAUSE_ON_INPUT=false",
		"ACU_TASK_FAST_MODEL=ci/scripted-fast", "ACU_TASK_PLANNER_MODEL=ci/scripted-planner", "ACU_TASK_VERIFIER_MODEL=ci/scripted-verifier"}
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
	// Every step the prompt offers works in this engine: wait_for and
	// launch included (no daemon runs here).
	if strings.Contains(log.String(), "steps are not available here") {
		t.Errorf("a step the prompt offers was refused as not available here")
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

// idleAgent is the vision loop's model that does nothing.
func idleAgent(r llmtest.Request) llmtest.Reply {
	return llmtest.Reply{Text: `{"observation":"I see a dialog and do nothing.","bboxes":[],"actions":[]}`}
}

// TestOtherEnginesRunTasks runs one task with the stateless agent loop and
// with acu computer (Anthropic's wire), each with a model that does
// nothing: the engines start on the task's display, end at their limits
// and the checker fails the task.
func TestOtherEnginesRunTasks(t *testing.T) {
	ts, err := taskbench.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	ts, err = taskbench.Select(ts, []string{"zenity-entry"}, false)
	if err != nil {
		t.Fatal(err)
	}
	ts[0].StepLimit = 2
	agentSrv := llmtest.NewOpenAI(t, idleAgent)
	// Anthropic's Messages API with the computer tool: a model that ends its
	// turn with text, no tool use.
	compSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != llmtest.Key {
			http.Error(w, `{"type":"error","error":{"type":"authentication_error","message":"bad request"}}`, http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{map[string]any{"type": "text", "text": "I will not do anything."}}, "stop_reason": "end_turn",
			"usage": map[string]int{"input_tokens": 1500, "output_tokens": 10}})
	}))
	defer compSrv.Close()
	for _, eng := range []taskbench.Engine{
		taskbench.Agent{Env: []string{"ACU_AGENT_API_URL=" + agentSrv.URL, "ACU_AGENT_API_KEY=" + llmtest.Key, "ACU_AGENT_CAPTURE_DELAY=0"}},
		taskbench.Computer{Provider: "anthropic", BaseURL: compSrv.URL, Env: []string{"ACU_COMPUTER_API_KEY=" + llmtest.Key}},
	} {
		t.Run(eng.Name(), func(t *testing.T) {
			var log bytes.Buffer
			rep, err := taskbench.Run(t.Context(), ts, taskbench.Options{Bin: acuBin, Engine: eng, Model: "idle", WorkDir: t.TempDir(), Log: &log})
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Tasks[0]
			// The cost comes from the engine: the agent's /state, the
			// computer loop's result (its default model is priced).
			if strings.Contains(log.String(), "read the agent's cost") || eng.Name() == "computer:anthropic" && r.CostUSD <= 0 {
				t.Errorf("%s: cost $%v unknown %v\n%s", eng.Name(), r.CostUSD, r.CostUnknown, log.String())
			}
			// So does the model time: the agent's /state, the loop's turns.
			if r.ModelSeconds <= 0 {
				t.Errorf("%s: model time %v s, want the engine's model time", eng.Name(), r.ModelSeconds)
			}
			t.Logf("%s: %d steps, cost $%v unknown %v", eng.Name(), r.Steps, r.CostUSD, r.CostUnknown)
			if r.Success || r.Error != "" || r.Engine.Error != "" || r.Steps < 1 || r.Check == "" {
				t.Errorf("%s on an idle model: %+v; want an ended run with steps that the checker fails\n%s", eng.Name(), r, log.String())
			}
		})
	}
}

// cleanEnv is this process's environment without model keys and acu
// settings, with a fresh configuration directory.
func cleanEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ACU_") || strings.HasSuffix(k, "_API_KEY") || k == "HOME" || k == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	home := t.TempDir()
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+home, "ACU_DATA_DIR="+filepath.Join(home, "data"))
}

func acuCLI(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), acuBin, args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// TestCLI runs `acu bench tasks` as users do: a local model endpoint
// without a key (as Ollama, vLLM or llama.cpp server), the JSON report,
// -publish into a copy of docs/tasks.md, -compare, and the refusals.
func TestCLI(t *testing.T) {
	env := cleanEnv(t)
	out, _, code := acuCLI(t, env, "bench", "tasks", "-list")
	if code != 0 || strings.Count(out, "\n") < 25 || !strings.Contains(out, "zenity-entry") {
		t.Fatalf("-list: exit %d\n%s", code, out)
	}
	m := &scripted{t: t}
	ts := builtin(t, true)
	for _, task := range ts {
		if task.ID == "zenity-entry" {
			m.start(task, "")
		}
	}
	srv := llmtest.NewOpenAI(t, m.handle)
	srv.SetKey("") // a local server: no key
	dir := t.TempDir()
	doc := filepath.Join(dir, "tasks.md")
	orig, err := os.ReadFile("../../docs/tasks.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	local := append(env, "ACU_TASK_BASE_URL="+srv.URL, "ACU_TASK_FAST_MODEL=local-fast", "ACU_TASK_PLANNER_MODEL=local-plan", "ACU_TASK_VERIFIER_MODEL=local-verify")
	a := filepath.Join(dir, "a.json")
	out, errOut, code := acuCLI(t, local, "bench", "tasks", "-json", a, "-publish", "-publish-file", doc, "zenity-entry")
	// A loopback endpoint's models cost nothing: $0, known.
	if code != 0 || !strings.Contains(out, "| zenity-entry | pass | 3 |") || !strings.Contains(out, "cost $0.0000") {
		t.Fatalf("bench tasks on a local model: exit %d\n%s\n%s", code, out, errOut)
	}
	rep, err := taskbench.ReadReport(a)
	if err != nil || rep.Succeeded != 1 || rep.Run != 1 || rep.CostUnknown || rep.Tasks[0].Steps < 2 {
		t.Fatalf("report %+v (%v): want 1/1 at a known $0", rep, err)
	}
	pub, _ := os.ReadFile(doc)
	if !strings.Contains(string(pub), "<!-- result run fast local-fast, planner local-plan, verifier local-verify -->") ||
		!strings.Contains(string(pub), "| zenity-entry | pass |") {
		t.Errorf("published doc lacks the run:\n%s", pub)
	}
	// Compare with a failing run of the idle model.
	srv.SetHandler(idle)
	b := filepath.Join(dir, "b.json")
	if _, errOut, code := acuCLI(t, local, "bench", "tasks", "-json", b, "zenity-entry"); code != 0 {
		t.Fatalf("idle run: exit %d: %s", code, errOut)
	}
	out, _, code = acuCLI(t, env, "bench", "tasks", "-compare", a, b)
	if code != 0 || !strings.Contains(out, "| zenity-entry | pass, ") || !strings.Contains(out, "fail, ") || !strings.Contains(out, "**1/1 (100%)**") || !strings.Contains(out, "**0/1 (0%)**") {
		t.Errorf("-compare: exit %d\n%s", code, out)
	}
	// Refusals: publishing without a key or local endpoint, unknown tasks,
	// a bad task directory.
	if _, errOut, code := acuCLI(t, env, "bench", "tasks", "-publish", "-publish-file", doc, "zenity-entry"); code != 2 || !strings.Contains(errOut, "no model key") {
		t.Errorf("-publish without a key: exit %d: %s", code, errOut)
	}
	if _, errOut, code := acuCLI(t, env, "bench", "tasks", "-list", "no-such-task"); code == 0 || !strings.Contains(errOut, `no task has the id or tag "no-such-task"`) {
		t.Errorf("unknown task: exit %d: %s", code, errOut)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "x.json"), []byte(`{"id":"x","prompt":"p","timeLimit":"1m","stepLimit":3,"setup":[{"run":["true"]}],"check":{"kind":"file","path":"f"}}`), 0o644)
	if _, errOut, code := acuCLI(t, env, "bench", "tasks", "-dir", bad, "-list"); code == 0 || !strings.Contains(errOut, "x.json") || !strings.Contains(errOut, "no condition") {
		t.Errorf("bad task file: exit %d: %s", code, errOut)
	}
}

// TestHarnessOwnsOnlyItsProcesses runs a task with a relative -work path
// (the session bus listens there) while a process the harness did not
// start names the task's directory on its command line: the task runs and
// passes, the bystander lives on, and nothing the harness started
// outlives the task (the accessibility bus's dbus-daemon, in a session of
// its own, included).
func TestHarnessOwnsOnlyItsProcesses(t *testing.T) {
	ts := builtin(t, false)
	ts, err := taskbench.Select(ts, []string{"zenity-entry"}, false)
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	t.Chdir(base)
	taskDir := filepath.Join(base, "rel", "work", "zenity-entry")
	if err := os.MkdirAll(taskDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Started in its own directory: the harness clears the task's.
	by := exec.Command("sh", "-c", "sleep 600", taskDir+"/bystander")
	if err := by.Start(); err != nil {
		t.Fatal(err)
	}
	byDone := make(chan struct{})
	go func() { _ = by.Wait(); close(byDone) }()
	t.Cleanup(func() { _ = by.Process.Kill(); <-byDone })

	m := &scripted{t: t}
	srv := llmtest.NewOpenAI(t, m.handle)
	var log bytes.Buffer
	rep, err := taskbench.Run(t.Context(), ts, taskbench.Options{Bin: acuBin, Engine: taskbench.Orchestrator{Env: modelEnv(srv)}, Model: "scripted",
		WorkDir: filepath.Join("rel", "work"), Log: &log, Before: m.start})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Tasks[0]; !r.Success {
		t.Errorf("with a relative work directory: %+v\n%s", r, log.String())
	}
	select {
	case <-byDone:
		t.Error("the harness killed a process it did not start (its command line names the task's directory)")
	default:
	}
	// What the harness started names the task's directory (the session
	// bus's socket, the accessibility bus's) or runs on its display: none
	// may be left.
	dirs, _ := os.ReadDir("/proc")
	for _, e := range dirs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == by.Process.Pid || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(taskDir)) {
			t.Errorf("process %d outlived its task: %s", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
}

// TestCheckersRefuseLookalikes: outcomes that look like the asked-for one
// but are not fail their checkers: the question dialog dismissed with
// Escape (a non-zero exit, as the Delete button's), the calculator's
// result typed as a constant (not computed from the numbers shown), the
// spreadsheet's total typed as a value (not a formula of its inputs).
func TestCheckersRefuseLookalikes(t *testing.T) {
	all, err := taskbench.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	lookalike := map[string]struct {
		script []taskbench.ScriptStep
		check  string // in the checker's verdict: the lookalike happened
	}{
		"zenity-question": {[]taskbench.ScriptStep{{Action: "key", Keys: "Escape"}, {Action: "done"}}, `is "exit=1"`},
		"galculator-add": {[]taskbench.ScriptStep{{Action: "launch", App: "galculator"}, {Action: "wait", Role: "button", Name: "="},
			{Action: "clicks", Role: "button", Text: "6912"}, {Action: "key", Keys: "ctrl+c"}, {Action: "done"}}, "the clipboard holds '6912'"},
		"gnumeric-sum": {[]taskbench.ScriptStep{{Action: "type", Role: "input", Nth: 1, Text: "A4"}, {Action: "key", Role: "input", Nth: 1, Keys: "Return"},
			{Action: "type", Role: "input", Nth: 2, Text: "60"}, {Action: "key", Role: "input", Nth: 2, Keys: "Return"}, {Action: "key", Keys: "ctrl+s"},
			{Action: "done"}}, `"11\n20\n30\n60", want it to match`},
	}
	var ts []taskbench.Task
	for _, task := range all {
		if l, ok := lookalike[task.ID]; ok {
			task.Script = l.script
			ts = append(ts, task)
		}
	}
	m := &scripted{t: t}
	rep := runSuite(t, ts, "lookalike", m.handle, m.start)
	for _, r := range rep.Tasks {
		if r.Success || r.Error != "" || r.Skipped != "" || !strings.Contains(r.Check, lookalike[r.ID].check) {
			t.Errorf("%s done the lookalike way: success %v, check %q, error %q, skipped %q; want the checker's failure mentioning %q",
				r.ID, r.Success, r.Check, r.Error, r.Skipped, lookalike[r.ID].check)
		}
	}
}
