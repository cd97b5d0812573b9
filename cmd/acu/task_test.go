package main

import (
	"bufio"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/llm/llmtest"
)

var taskIDLine = regexp.MustCompile(`(?m)^\[(\w+)\] (\w+) ("[^"]*")?`)

// taskModel plays all three roles from the requests: a fast agent that
// reads only the element map (fills the entry and presses OK), a planner,
// a verifier that accepts once the dialog is gone.
func taskModel(r llmtest.Request) llmtest.Reply {
	switch {
	case strings.HasPrefix(r.System, "You check the progress"):
		return llmtest.Reply{Text: `{"progressing":true,"reason":"ok"}`}
	case strings.HasPrefix(r.System, "You are the planning agent"):
		return llmtest.Reply{Text: `{"approaches":[{"name":"Fill and confirm","description":"type, then OK","steps":["type","OK"]}],"recommended":0}`}
	case strings.HasPrefix(r.System, "You verify"):
		return llmtest.Reply{Text: `{"done":` + map[bool]string{true: "false", false: "true"}[strings.Contains(r.Text(), "Acu Entry")] + `,"reason":"checked the map"}`}
	}
	_, mp, _ := strings.Cut(r.System, "ELEMENT MAP")
	var input, ok string
	for _, m := range taskIDLine.FindAllStringSubmatch(mp, -1) {
		if m[2] == "input" && input == "" {
			input = m[1]
		}
		if m[2] == "button" && m[3] == `"OK"` {
			ok = m[1]
		}
	}
	if input == "" || ok == "" {
		return llmtest.Reply{Text: `{"thought":"the dialog is gone","steps":[],"complete":true,"summary":"entered the name"}`}
	}
	return llmtest.Reply{Text: `{"thought":"fill it","steps":[{"action":"type","target":"` + input + `","text":"Grace Hopper"},{"action":"click","target":"` + ok + `"}],"complete":false}`}
}

// zenityEntry starts a zenity entry dialog titled "Acu Entry" (the one
// taskModel fills) on dpy with its accessibility bus, and returns once its
// accessibility tree is there.
func zenityEntry(t *testing.T, dpy string) (*atspitest.Session, *atspitest.App) {
	t.Helper()
	session := atspitest.Start(t, dpy)
	app := session.StartApp(t, "zenity", "--entry", "--title=Acu Entry", "--text=Your name:")
	tree, err := atspi.Connect(t.Context(), atspi.Options{SessionBus: session.SessionBus})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := atspitest.WaitApp(ctx, tree, "zenity"); err != nil {
		t.Fatal(err)
	}
	return session, app
}

// TestRunTaskCLI runs `acu run` against a real zenity dialog on Xvfb with
// its accessibility bus, the models faked by an llmtest server.
func TestRunTaskCLI(t *testing.T) {
	dpy := startDisplay(t)
	session, app := zenityEntry(t, dpy)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	srv := llmtest.NewOpenAI(t, taskModel)
	env, _, _ := newEnv(t, dpy)
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+session.SessionBus, "ACU_TASK_BASE_URL="+srv.URL, "ACU_TASK_API_KEY="+llmtest.Key,
		"ACU_TASK_OCR=false", "ACU_LOG_LEVEL=warn")
	stdout, stderr, code := acu(t, env, "run", "-json", "Enter Grace Hopper as the name and press OK")
	if code != 0 {
		t.Fatalf("acu run exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	out, err := app.Wait(ctx)
	if err != nil || out != "Grace Hopper\n" {
		t.Errorf("zenity printed %q (%v), want the name", out, err)
	}
	streams := map[string]int{}
	var last struct {
		Stream string `json:"stream"`
		Data   struct {
			Status      string  `json:"status"`
			Iterations  int     `json:"iterations"`
			CostUSD     float64 `json:"costUsd"`
			CostUnknown bool    `json:"costUnknown"`
		} `json:"data"`
	}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("not a JSON line: %s", sc.Text())
		}
		streams[last.Stream]++
	}
	if last.Stream != "result" || last.Data.Status != "completed" || streams["iteration"] < 2 || streams["verify"] != 1 || streams["plan"] != 1 {
		t.Errorf("events %v, last %+v; want iterations, one plan, one verification, then a completed result", streams, last)
	}
	// The default models are priced: the cost is known.
	if last.Data.CostUnknown || last.Data.CostUSD <= 0 {
		t.Errorf("result cost $%v unknown %v, want the default models' known cost", last.Data.CostUSD, last.Data.CostUnknown)
	}

	// Readable progress, and the exit status of a failed task.
	srv.SetHandler(func(r llmtest.Request) llmtest.Reply {
		if strings.HasPrefix(r.System, "You are the fast agent") {
			return llmtest.Reply{Text: `{"thought":"I do not see it","steps":[],"complete":false}`}
		}
		return taskModel(r)
	})
	// A fast model with no price: the cost is unknown, not $0.
	stdout, _, code = acu(t, append(env, "ACU_TASK_FAST_MODEL=some-lab/unpriced-model"), "run", "-max-iterations", "2", "Enter a name into a dialog that is gone")
	if code != 1 || !strings.Contains(stdout, "[ 1] ") || !strings.Contains(stdout, "failed after 2 iterations") ||
		!strings.Contains(stdout, "cost unknown (2 unpriced calls") {
		t.Errorf("acu run on a gone dialog with an unpriced fast model: exit %d\n%s", code, stdout)
	}
	if _, stderr, code := acu(t, env, "run"); code != 2 || !strings.Contains(stderr, "say what to do") {
		t.Errorf("acu run without a task: exit %d: %s", code, stderr)
	}
}
