package orchestrator_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/gate"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/store"
)

// desktop is a private X display with a session bus, the accessibility bus,
// an element map of it, and acu's store and run registry.
type desktop struct {
	dpy     string
	session *atspitest.Session
	tree    *atspi.Client
	conn    *display.Conn
	dev     *input.Device
	x       *elements.Extractor
	db      *store.DB
	reg     *runs.Registry
	base    *atspitest.Desktop
}

func newDesktop(t testing.TB) *desktop {
	t.Helper()
	b := atspitest.NewDesktop(t)
	d := &desktop{dpy: b.Display, session: b.Session, tree: b.Tree, conn: b.Conn, dev: b.Input, base: b}
	var err error
	d.x, err = elements.New(elements.Options{Display: d.dpy, Capture: b.Hub, Tree: b.Tree, Input: b.Input})
	if err != nil {
		t.Fatal(err)
	}
	d.db, err = store.Open(context.Background(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.db.Close() })
	d.reg = runs.New(d.db, runs.Options{})
	return d
}

// zenity starts a zenity dialog and waits until its widgets are on the
// accessibility bus.
func (d *desktop) zenity(t testing.TB, args ...string) *atspitest.App {
	t.Helper()
	return d.base.Zenity(t, args...)
}

func (d *desktop) entry(t testing.TB) *atspitest.App {
	return d.zenity(t, "--entry", "--title=Acu Entry", "--text=Your name:")
}

// models are the three roles' scripted model servers.
type models struct {
	fast, planner, verifier *llmtest.Server
}

// role tells the fast server's two kinds of calls apart.
func isCheck(r llmtest.Request) bool { return strings.HasPrefix(r.System, "You check the progress") }

func newModels(t testing.TB, fast, planner, verifier llmtest.Handler) *models {
	return &models{fast: llmtest.NewOpenAI(t, fast), planner: llmtest.NewOpenAI(t, planner), verifier: llmtest.NewOpenAI(t, verifier)}
}

func (d *desktop) orchestrator(t testing.TB, m *models, adjust func(*orchestrator.Options)) *orchestrator.Orchestrator {
	t.Helper()
	noRetry := func(o *llm.Options) { o.MaxRetries = -1; o.Timeout = 30 * time.Second }
	o := orchestrator.Options{
		Elements: d.x, Runs: d.reg, Progress: d.db,
		Fast: m.fast.Client(t, noRetry), Planner: m.planner.Client(t, noRetry), Verifier: m.verifier.Client(t, noRetry),
		Apps: []orchestrator.App{{Name: "Zenity", Exec: "zenity"}, {Name: "XTerm", Exec: "xterm"}},
	}
	if adjust != nil {
		adjust(&o)
	}
	or, err := orchestrator.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(or.Close)
	return or
}

// events returns the run's events of stream, decoded into T.
func events[T any](t testing.TB, d *desktop, runID, stream string) []T {
	t.Helper()
	evs, err := d.reg.Events(context.Background(), 0, runs.Filter{RunID: runID, Streams: []string{stream}}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]T, 0, len(evs))
	for _, e := range evs {
		var v T
		if err := json.Unmarshal(e.Data, &v); err != nil {
			t.Fatalf("decode %s event %s: %v", stream, e.Data, err)
		}
		out = append(out, v)
	}
	return out
}

// Event shapes as stored (the orchestrator's event types, read back).
type iterEv struct {
	Iteration int    `json:"iteration"`
	Guided    bool   `json:"guided"`
	FrameHash string `json:"frameHash"`
	Call      struct {
		System string `json:"system"`
		Prompt string `json:"prompt"`
		Reply  string `json:"reply"`
	} `json:"call"`
	Steps []struct {
		Step  string `json:"step"`
		OK    bool   `json:"ok"`
		Via   string `json:"via"`
		Error string `json:"error"`
	} `json:"steps"`
	Loop     string `json:"loop"`
	Complete bool   `json:"complete"`
	Error    string `json:"error"`
}

type planEv struct {
	Kind      string `json:"kind"`
	Iteration int    `json:"iteration"`
	Adopted   int    `json:"adopted"`
	Blocking  bool   `json:"blocking"`
	Guidance  string `json:"guidance"`
	Error     string `json:"error"`
	Call      struct {
		Prompt    string  `json:"prompt"`
		LatencyMs float64 `json:"latencyMs"`
	} `json:"call"`
}

type checkEv struct {
	Iteration   int    `json:"iteration"`
	Progressing bool   `json:"progressing"`
	Reason      string `json:"reason"`
	Recovery    bool   `json:"recovery"`
}

type verifyEv struct {
	Iteration int    `json:"iteration"`
	Done      bool   `json:"done"`
	Reason    string `json:"reason"`
	WrongTask bool   `json:"wrongTask"`
}

type recoveryEv struct {
	Iteration   int    `json:"iteration"`
	Action      string `json:"action"`
	Keys        string `json:"keys"`
	Unchanged   int    `json:"unchanged"`
	UnchangedMs int64  `json:"unchangedMs"`
	Skipped     string `json:"skipped"`
}

// planJSON is a planner reply with one named approach.
func planJSON(name string, steps ...string) string {
	b, _ := json.Marshal(map[string]any{
		"approaches": []map[string]any{
			{"name": name, "description": "Work in the zenity dialog", "steps": steps, "confidence": 0.9},
			{"name": "Keyboard only", "description": "Tab to the field and type", "steps": []string{"press Tab"}, "confidence": 0.4},
		},
		"recommended": 0,
	})
	return string(b)
}

func stepsJSON(complete bool, steps ...map[string]string) string {
	if steps == nil {
		steps = []map[string]string{}
	}
	b, _ := json.Marshal(map[string]any{"thought": "scripted", "steps": steps, "complete": complete, "summary": "scripted"})
	return string(b)
}

func typeStep(target, text string) map[string]string {
	return map[string]string{"action": "type", "target": target, "text": text}
}

func clickStep(target string) map[string]string {
	return map[string]string{"action": "click", "target": target}
}

// counter counts the fast agent's action calls (not progress checks).
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) next() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}

var idLine = regexp.MustCompile(`(?m)^\[(\w+)\] (\w+) ("[^"]*")?`)

// findID finds the id of the first element of type typ (and text, when
// given) in a prompt's element map, as a model reading it would.
func findID(prompt, typ, text string) string {
	_, mapText, _ := strings.Cut(prompt, "ELEMENT MAP")
	for _, m := range idLine.FindAllStringSubmatch(mapText, -1) {
		if m[2] == typ && (text == "" || m[3] == `"`+text+`"`) {
			return m[1]
		}
	}
	return ""
}

// checkPausedAtIteration2 checks what an intervention during iteration 2's
// model call leaves behind: one pause and one resume at iteration 2, the
// steps planned before the user's input dropped (the entry holds "abc", not
// "zzz"), and the pause in the task's progress log, mentioning detail.
func checkPausedAtIteration2(t *testing.T, d *desktop, m *models, res orchestrator.Result, detail string) {
	t.Helper()
	type intEv struct {
		Iteration int    `json:"iteration"`
		Phase     string `json:"phase"`
	}
	ivs := events[intEv](t, d, res.RunID, orchestrator.StreamIntervention)
	if len(ivs) != 2 || ivs[0] != (intEv{2, "paused"}) || ivs[1] != (intEv{2, "resumed"}) {
		t.Fatalf("interventions = %+v, want paused and resumed at iteration 2", ivs)
	}
	if v := m.verifier.Last().Text(); !strings.Contains(v, `value="abc"`) {
		t.Errorf("the steps planned before the user's input ran anyway (want value abc):\n%s", v)
	}
	prog, err := d.db.TaskProgress(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prog {
		if strings.HasPrefix(p.Message, "paused at iteration 2: user input") && strings.Contains(p.Message, detail) {
			return
		}
	}
	t.Errorf("the pause (mentioning %q) is not in the task's progress log: %+v", detail, prog)
}

// arranger tiles windows on d's display through a gate of its own.
func (d *desktop) arranger(t *testing.T) *orchestrator.WindowArranger {
	t.Helper()
	g := gate.New(gate.Options{DefaultDisplay: d.dpy})
	t.Cleanup(g.Close)
	a, err := orchestrator.NewWindowArranger(t.Context(), g, d.dpy)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
