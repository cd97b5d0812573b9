package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/annotate"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// One Xvfb for the package; tests run one at a time on it (they share the
// one pointer).
var dpy string

const screenW, screenH = 1280, 720

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	srv, err := xvfb.Start(ctx, xvfb.Options{Width: screenW, Height: screenH, Args: []string{"-noreset"}})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "agent tests need Xvfb: %v\n", err)
		os.Exit(1)
	}
	dpy = srv.Name()
	code := m.Run()
	srv.Stop()
	if code == 0 {
		if leak := leakedGoroutines(); leak != "" {
			fmt.Fprintf(os.Stderr, "goroutines of package agent still running after the tests:\n%s\n", leak)
			code = 1
		}
	}
	os.Exit(code)
}

// leakedGoroutines returns the stacks of goroutines running this package's
// code (the loop, its HTTP handlers, the encoders) once the tests are done,
// waiting a little for ones that are just ending.
func leakedGoroutines() string {
	var last string
	for range 50 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		last = ""
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "acu/internal/agent.") && !strings.Contains(g, "leakedGoroutines") && !strings.Contains(g, "TestMain") {
				last += g + "\n\n"
			}
		}
		if last == "" {
			return ""
		}
		time.Sleep(100 * time.Millisecond)
	}
	return last
}

const testToken = "agent-test-token"

// harness is a running agent with its model, store and HTTP server.
type harness struct {
	t     *testing.T
	a     *Agent
	model *llmtest.Server
	reg   *runs.Registry
	db    *store.DB
	srv   *httptest.Server
	runs  string
	done  chan error
}

// start runs an agent on the test display with a scripted model. adjust
// edits the options before New.
func start(t *testing.T, h llmtest.Handler, adjust func(*Options), clientAdjust func(*llm.Options)) *harness {
	t.Helper()
	model := llmtest.NewOpenAI(t, h)
	client := model.Client(t, clientAdjust)
	hub, err := capture.NewHub(capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "acu.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := runs.New(db, runs.Options{})
	runsDir := filepath.Join(t.TempDir(), "runs")
	opts := Options{
		Display: dpy, Hub: hub, Model: client, Temperature: 0.7, TopP: 0.9, MaxTokens: 1000,
		Physical: true, ActionDelay: 5 * time.Millisecond, DragSteps: 10, DragStepDelay: 2 * time.Millisecond,
		CaptureDelay: 20 * time.Millisecond, UI: annotate.Default(), RunsDir: runsDir, LogToFile: true,
		Runs: reg, Token: secret.String(testToken),
	}
	if adjust != nil {
		adjust(&opts)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hs := &harness{t: t, a: a, model: model, reg: reg, db: db, runs: runsDir, done: make(chan error, 1)}
	go func() { hs.done <- a.Run(ctx) }()
	hs.srv = httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		hs.srv.Close()
		cancel()
		select {
		case err := <-hs.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Run did not return after cancel")
		}
	})
	return hs
}

// waitState polls the state until cond holds.
func (h *harness) waitState(what string, cond func(State) bool) State {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := h.a.State()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("waiting for %s: state phase=%s turn=%d error=%q", what, st.Phase, st.Turn, st.Error)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitCalls waits until the model received n requests.
func (h *harness) waitCalls(n int) []llmtest.Request {
	h.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if reqs := h.model.Requests(); len(reqs) >= n {
			return reqs
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("model got %d requests, want %d (state %+v)", len(h.model.Requests()), n, h.a.State().Phase)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// do sends an HTTP request with the token (token false: none).
func (h *harness) do(method, path string, body any, token bool) (int, []byte) {
	h.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, h.srv.URL+path, r)
	if token {
		req.Header.Set("Authorization", "Bearer "+testToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (h *harness) inject(text string) {
	h.t.Helper()
	if code, body := h.do("POST", "/inject", InjectRequest{VLMText: text}, true); code != http.StatusAccepted {
		h.t.Fatalf("POST /inject = %d %s", code, body)
	}
}

// actions builds a model reply.
func reply(obs string, acts ...string) string {
	return fmt.Sprintf(`{"observation":%q,"bboxes":[],"actions":[%s]}`, obs, strings.Join(acts, ","))
}

func click(name string, x, y int) string {
	return fmt.Sprintf(`{"name":%q,"x1":%d,"y1":%d}`, name, x, y)
}

// window opens a full-screen recording window of one colour.
func window(t *testing.T, c color.RGBA) *testx.Window {
	t.Helper()
	w := testx.NewWindow(t, dpy, testx.Spec{Title: t.Name(), W: screenW, H: screenH, Fill: c})
	w.Focus()
	// Wait until the window is on screen so the first capture sees it.
	time.Sleep(100 * time.Millisecond)
	return w
}

func waitEvents(t *testing.T, w *testx.Window, cond func([]testx.Event) bool) []testx.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	evs, err := w.WaitFor(ctx, cond)
	if err != nil {
		t.Fatalf("waiting for window events: %v; got %v", err, evs)
	}
	return evs
}

func presses(evs []testx.Event) []testx.Event {
	var out []testx.Event
	for _, e := range evs {
		if e.Kind == testx.ButtonPress {
			out = append(out, e)
		}
	}
	return out
}

// rgbAt reads a pixel of a decoded image.
func rgbAt(img image.Image, x, y int) (r, g, b int) {
	R, G, B, _ := img.At(x, y).RGBA()
	return int(R >> 8), int(G >> 8), int(B >> 8)
}

// clock is a settable clock, safe for the agent's goroutines.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
