package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/wayland/sway"
	"github.com/acu-dev/acu/internal/wayland/waylandtest"
)

// The loops on a Wayland display (docs/wayland.md): the agent loop, a
// computer-use dialect's loop, the MCP tools and the task engine each
// fill the native GTK form of wayland_actions_test.go (waylandForm) on a
// real headless sway, driven by a fake of the model's API, and the form's
// own output proves what they did.

// gtkForm is waylandForm running on a Wayland display.
type gtkForm struct {
	*waylandtest.GTK
	at   map[string][4]int // each widget's rectangle in the window
	x, y int               // the window's client area on the screen, settled
}

// startGTKForm opens waylandForm on c and reads where its widgets are in
// its window.
func startGTKForm(t *testing.T, c *sway.Compositor) *gtkForm {
	t.Helper()
	f := &gtkForm{GTK: waylandtest.StartGTK(t, c, waylandForm), at: map[string][4]int{}}
	for range 3 {
		var name string
		var r [4]int
		if _, err := fmt.Sscanf(f.Next(t, "widget rectangle"), "at %s %d %d %d %d", &name, &r[0], &r[1], &r[2], &r[3]); err != nil {
			t.Fatalf("the form's report: %v", err)
		}
		f.at[name] = r
	}
	return f
}

// settle reads where sway shows the form's client area once its place has
// settled (sway may add its title bar after the window is mapped).
func (f *gtkForm) settle(t *testing.T, ctx context.Context, c *sway.Compositor) {
	t.Helper()
	p := waylandtest.Window(ctx, t, c, "acu-form", nil).Content.Min
	f.x, f.y = p.X, p.Y
}

// waylandFormRig is the daemon on a headless 800x600 sway that shows
// waylandForm, its window's client area moved to 60,50 through the daemon.
type waylandFormRig struct {
	c       *sway.Compositor
	env     []string // the daemon's environment, for the CLI
	dataDir string
	d       *daemonProc
	form    *gtkForm
}

// startWaylandFormRig starts a waylandFormRig, with extra added to the
// daemon's environment.
func startWaylandFormRig(t *testing.T, ctx context.Context, extra ...string) *waylandFormRig {
	t.Helper()
	waylandtest.NeedGTK(t)
	r := &waylandFormRig{c: waylandtest.Start(t, 800, 600)}
	sock := r.c.Socket()
	env, dataDir, port := newEnv(t, sock)
	r.env, r.dataDir = append(env, extra...), dataDir
	r.d = startDaemon(t, r.env, dataDir, port)
	r.form = startGTKForm(t, r.c)
	var win api.Window
	eventually(t, 30*time.Second, "the form in GET /v1/windows", func() bool {
		l, err := r.d.client.Windows(ctx, sock)
		for _, w := range l.Windows {
			if err == nil && w.Title == "acu-form" {
				win = w
				return true
			}
		}
		return false
	})
	x, y := 60, 50
	op, err := r.d.client.WindowOp(ctx, win.ID, api.WindowMove, api.WindowOp{Display: sock, X: &x, Y: &y})
	if err != nil || op.Window == nil || op.Window.X != x || op.Window.Y != y {
		t.Fatalf("move the form to %d,%d = %+v, %v", x, y, op.Window, err)
	}
	r.form.settle(t, ctx, r.c)
	return r
}

// centre is the screen pixel at the centre of the named widget.
func (f *gtkForm) centre(name string) [2]int {
	w := f.at[name]
	return [2]int{f.x + w[0] + w[2]/2, f.y + w[1] + w[3]/2}
}

// TestWaylandAgentLoopFillsGTKForm runs `acu agent` on a headless sway
// with a scripted model speaking the OpenAI chat API: its first answer
// clicks the form's name entry, types and clicks Submit in 0..1000
// coordinates of the screenshot; the form's output proves the clicks and
// the typing landed, and the model's requests prove it saw the Wayland
// screen.
func TestWaylandAgentLoopFillsGTKForm(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	r := startWaylandFormRig(t, ctx)
	env, form := r.env, r.form

	norm := func(p [2]int) (int, int) {
		return int(math.Round(float64(p[0]) * 1000 / 800)), int(math.Round(float64(p[1]) * 1000 / 600))
	}
	nx, ny := norm(form.centre("name"))
	sx, sy := norm(form.centre("submit"))
	act := fmt.Sprintf(`{"observation":"the form is open","bboxes":[],"actions":[`+
		`{"name":"click","x1":%d,"y1":%d},{"name":"type","text":"Ada Lovelace"},{"name":"click","x1":%d,"y1":%d}]}`, nx, ny, sx, sy)
	var mu sync.Mutex
	var sizes []string
	srv := llmtest.NewOpenAI(t, func(r llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		for _, im := range r.Images() {
			if im.Image != nil {
				sizes = append(sizes, fmt.Sprintf("%dx%d", im.Image.Bounds().Dx(), im.Image.Bounds().Dy()))
			}
		}
		if len(sizes) == 1 {
			return llmtest.Reply{Text: act}
		}
		return llmtest.Reply{Text: `{"observation":"submitted; done","bboxes":[],"actions":[]}`}
	})
	env = append(env, "ACU_AGENT_API_URL="+srv.URL, "ACU_AGENT_API_KEY="+llmtest.Key, "ACU_AGENT_MODEL=scripted",
		"ACU_AGENT_BOOT_ENABLED=true", "ACU_AGENT_CAPTURE_DELAY=0.05", "ACU_AGENT_PORT="+strconv.Itoa(freePort(t)))
	cmd := exec.CommandContext(ctx, acuBin, "agent")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var outb, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &outb, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("acu agent's log:\n%s", errb.String())
		}
	}()
	got := form.Next(t, "submission")
	if want := "submitted name=Ada Lovelace city="; got != want {
		t.Errorf("the form printed %q, want %q", got, want)
	}
	if strings.Contains(errb.String(), "no take-over watch") {
		t.Errorf("acu agent has no take-over watch on Wayland (the gate's hold file should serve it)")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sizes) == 0 || sizes[0] != "800x600" {
		t.Errorf("the model saw screenshots %v, want the 800x600 Wayland screen", sizes)
	}
}

// TestWaylandComputerOpenAIFillsGTKForm runs `acu computer` (OpenAI's
// computer-use dialect, against the fake Responses API of
// computer_test.go) on a headless sway: a screenshot, clicks, a double
// click and typing fill the form and submit it.
func TestWaylandComputerOpenAIFillsGTKForm(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	r := startWaylandFormRig(t, ctx, "ACU_COMPUTER_API_KEY="+llmtest.Key, "ACU_LOG_LEVEL=warn")
	env, d, form, sock := r.env, r.d, r.form, r.c.Socket()

	tool, err := d.client.ComputerTool(ctx, "openai", api.ComputerQuery{Limit: "1024x768"})
	if err != nil {
		t.Fatalf("GET the OpenAI computer tool on %s: %v", sock, err)
	}
	if tool.Screen != [2]int{800, 600} {
		t.Errorf("the tool's screen = %v, want sway's 800x600", tool.Screen)
	}
	img, screen := dialect.Size{W: tool.Image[0], H: tool.Image[1]}, dialect.Size{W: tool.Screen[0], H: tool.Screen[1]}
	pic := func(name string) [2]int {
		p := form.centre(name)
		var q [2]int
		q[0], q[1] = dialect.FromScreen(p[0], p[1], img, screen)
		return q
	}
	f := openaiFake(t, pic("name"), pic("city"), pic("submit"))
	stdout, stderr, code := acu(t, env, "computer", "-json", "--provider", "openai", "--limit", "1024x768",
		"--base-url", f.URL+"/v1", "--acknowledge-safety-checks", "Enter Ada Lovelace as the name and London as the city, then submit")
	f.check(t)
	if code != 0 {
		t.Fatalf("acu computer exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	got := form.Next(t, "submission")
	if want := "submitted name=Ada Lovelace city=London"; got != want {
		t.Errorf("the form printed %q, want %q\nstdout:\n%s", got, want, stdout)
	}
	if !strings.Contains(stdout, `"status":"completed"`) {
		t.Errorf("no completed result:\n%s", stdout)
	}
}

// TestWaylandMCPToolsFillGTKForm calls the MCP tools over the daemon's
// streamable HTTP endpoint on a headless sway: a screenshot, a click at
// its pixels, typing, and a click on Submit.
func TestWaylandMCPToolsFillGTKForm(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	r := startWaylandFormRig(t, ctx)
	d, form, sock := r.d, r.form, r.c.Socket()

	client := mcp.NewClient(&mcp.Implementation{Name: "acu-test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.client.BaseURL() + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{tokenOf(t, r.dataDir), http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, info := callTool(t, s, "screenshot", map[string]any{"max_width": 800})
	if res.IsError || info["id"] == "" || info["image_width"] != float64(800) {
		t.Fatalf("screenshot on %s: %s %v", sock, resultText(res), info)
	}
	shot := info["id"]
	name, submit := form.centre("name"), form.centre("submit")
	res, out := callTool(t, s, "click", map[string]any{"x": name[0], "y": name[1], "shot": shot})
	if res.IsError || out["ok"] != true {
		t.Fatalf("click the name entry: %s", resultText(res))
	}
	if res, _ := callTool(t, s, "type_text", map[string]any{"text": "Ada Lovelace"}); res.IsError {
		t.Fatalf("type_text: %s", resultText(res))
	}
	if res, _ := callTool(t, s, "click", map[string]any{"x": submit[0], "y": submit[1], "shot": shot}); res.IsError {
		t.Fatalf("click Submit: %s", resultText(res))
	}
	got := form.Next(t, "submission")
	if want := "submitted name=Ada Lovelace city="; got != want {
		b, _ := json.Marshal(out)
		t.Errorf("the form printed %q, want %q (first click: %s)", got, want, b)
	}
}

// TestWaylandTaskFillsZenityEntry runs `acu run` (the task engine, its
// three models faked by taskModel of task_test.go) on a headless sway: a
// native GTK zenity entry (GDK_BACKEND=wayland) with its accessibility
// bus is filled and confirmed, and zenity's own output proves it.
func TestWaylandTaskFillsZenityEntry(t *testing.T) {
	waylandtest.Need(t, "sway")
	waylandtest.Need(t, "zenity")
	c := waylandtest.Start(t, 800, 600)
	sock := c.Socket()
	// at-spi2-registryd leaves the bus when started without an X display
	// (internal/wayland/virtual's test), so the accessibility session has
	// a small Xvfb of its own; zenity itself is on Wayland.
	session := atspitest.Start(t, startDisplay(t))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	app := exec.CommandContext(ctx, "zenity", "--entry", "--title=Acu Entry", "--text=Your name:")
	for _, kv := range session.Env() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "GDK_BACKEND=") {
			app.Env = append(app.Env, kv)
		}
	}
	app.Env = append(app.Env, "GDK_BACKEND=wayland", "WAYLAND_DISPLAY="+sock)
	var out, errb syncBuffer
	app.Stdout, app.Stderr = &out, &errb
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- app.Wait() }()
	t.Cleanup(func() { cancel(); <-exited })
	tree, err := atspi.Connect(ctx, atspi.Options{SessionBus: session.SessionBus})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := atspitest.WaitApp(ctx, tree, "zenity"); err != nil {
		t.Fatalf("zenity on %s: %v\nstderr:\n%s", sock, err, errb.String())
	}
	tree.Close()

	srv := llmtest.NewOpenAI(t, taskModel)
	env, _, _ := newEnv(t, sock)
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+session.SessionBus, "ACU_TASK_BASE_URL="+srv.URL, "ACU_TASK_API_KEY="+llmtest.Key,
		"ACU_TASK_OCR=false", "ACU_LOG_LEVEL=warn")
	stdout, stderr, code := acu(t, env, "run", "-json", "Enter Grace Hopper as the name and press OK")
	if code != 0 {
		t.Fatalf("acu run exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	select {
	case <-exited:
		exited <- nil // for the cleanup
	case <-ctx.Done():
		t.Fatalf("zenity did not exit; stderr:\n%s", errb.String())
	}
	if got := out.String(); got != "Grace Hopper\n" {
		t.Errorf("zenity printed %q, want the name\nacu run:\n%s", got, stdout)
	}
	if !strings.Contains(stdout, `"status":"completed"`) {
		t.Errorf("no completed result:\n%s", stdout)
	}
}
