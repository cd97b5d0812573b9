package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/computer"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/smartwait"
	"github.com/acu-dev/acu/internal/store"
	"github.com/acu-dev/acu/internal/testx"
	"github.com/acu-dev/acu/internal/xvfb"
)

// localComputer is the ComputerBackend of a daemon, in process: the real
// action service under computer.Execute, as the HTTP route runs it.
type localComputer struct{ svc *actions.Service }

func (l localComputer) Act(ctx context.Context, req api.ActRequest) (api.ActResponse, error) {
	return l.svc.Act(ctx, actions.Caller{Client: "mcp-test"}, req)
}
func (l localComputer) Shot(ctx context.Context, dpy string, o api.ShotOptions) (*api.ActShot, error) {
	return l.svc.Shot(ctx, dpy, o)
}
func (l localComputer) Pointer(ctx context.Context, dpy string) (int, int, error) {
	p, err := l.svc.Pointer(ctx, dpy)
	return p.X, p.Y, err
}
func (l localComputer) ScreenSize(ctx context.Context, dpy string) (int, int, error) {
	return l.svc.ScreenSize(ctx, dpy)
}
func (l localComputer) Settle(ctx context.Context, dpy string, quiet, timeout time.Duration) (api.SettleResult, error) {
	return l.svc.Settle(ctx, dpy, quiet, timeout)
}
func (l localComputer) Computer(ctx context.Context, vendor string, q api.ComputerQuery, item json.RawMessage) (api.ComputerResult, error) {
	return computer.Execute(ctx, l, vendor, q, item)
}

// TestComputerTools relays each dialect's item through the MCP tools onto
// a real display: an Anthropic screenshot, a UI-TARS click recorded by a
// test window, an OpenAI call held by its safety check.
func TestComputerTools(t *testing.T) {
	dpy := testx.StartXvfb(t, xvfb.Options{Width: 1280, Height: 800})
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
	eng := smartwait.New(smartwait.Options{Runs: reg, Capture: hub, Store: db, DefaultDisplay: dpy})
	svc, err := actions.New(actions.Options{Hub: hub, Runs: reg, Settle: eng, DefaultDisplay: dpy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	w := testx.NewWindow(t, dpy, testx.Spec{Title: "Acu MCP Computer", W: 1280, H: 800})

	s := mcp.NewServer(&mcp.Implementation{Name: "acu"}, nil)
	AddComputerTools(s, localComputer{svc})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	call := func(name string, args map[string]any) (map[string]any, *mcp.CallToolResult) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
		return out, res
	}

	out, res := call("computer_anthropic", map[string]any{"item": map[string]any{"type": "tool_use", "id": "toolu_m", "name": "computer",
		"input": map[string]any{"action": "screenshot"}}})
	r, _ := out["result"].(map[string]any)
	if res.IsError || out["status"] != "acted" || r["type"] != "tool_result" || r["tool_use_id"] != "toolu_m" {
		t.Fatalf("computer_anthropic = %v", out)
	}

	out, res = call("computer_uitars", map[string]any{"item": "Thought: click.\nAction: click(start_box='(250,500)')"})
	if res.IsError || out["status"] != "acted" {
		t.Fatalf("computer_uitars = %v", out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	evs, err := w.WaitFor(ctx, func(evs []testx.Event) bool {
		for _, e := range evs {
			if e.Kind == testx.ButtonRelease {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	// 250/1000 of 1280 is picture pixel 320; 500/1000 of 800 is 400: at 1x
	// the screen pixel itself.
	sx, sy := dialect.ToScreen(320, 400, dialect.Size{W: 1280, H: 800}, dialect.Size{W: 1280, H: 800})
	for _, e := range evs {
		if e.Kind == testx.ButtonPress && image.Pt(e.RootX, e.RootY) != image.Pt(sx, sy) {
			t.Errorf("click at %d,%d, want %d,%d", e.RootX, e.RootY, sx, sy)
		}
	}

	w.ResetEvents()
	out, res = call("computer_openai", map[string]any{"item": map[string]any{"type": "computer_call", "call_id": "c1",
		"action":                map[string]any{"type": "click", "button": "left", "x": 1, "y": 1},
		"pending_safety_checks": []any{map[string]any{"id": "sc1", "code": "sensitive_domain"}}}})
	if res.IsError || out["status"] != "safety_check" || fmt.Sprint(out["pending_safety_checks"]) == "" {
		t.Fatalf("computer_openai with a pending check = %v", out)
	}
	time.Sleep(100 * time.Millisecond)
	for _, e := range w.Events() {
		if e.Kind == testx.ButtonPress {
			t.Errorf("a held call clicked: %+v", e)
		}
	}
}
