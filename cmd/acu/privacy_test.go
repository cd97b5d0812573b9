package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/gif"  // judged frames' animation
	_ "image/jpeg" // screenshots and live frames
	_ "image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/mcpserver"
	"github.com/acu-dev/acu/internal/ocr"
	"github.com/acu-dev/acu/internal/server"
	"github.com/acu-dev/acu/internal/testx"
)

// The secret an excluded window holds: its title and its entry's text.
const (
	secretTitle = "Acu Secret Vault"
	secretText  = "TOPSECRET42"
)

// readPath is one way acu reads the desktop for a client. Every one is
// run against a display holding an excluded window; what it returns, as
// text, or as an image read by OCR, must not show the window.
type readPath struct {
	name string
	// covers are the read routes ("METHOD PATTERN") and MCP tools
	// ("tool:NAME") whose answers this path fetches.
	covers []string
	// shows: the path shows an ordinary window's text (the control that
	// the path returned the desktop at all).
	shows bool
	// text returns what the path answered, as a client would see it.
	text func(t *testing.T, f *privacyFixture) string
}

// readPaths lists every read path of the API and the MCP tools;
// TestReadPathsCovered fails when the route or tool table has a read this
// list does not cover, so a new read path cannot forget the filter.
var readPaths = []readPath{
	{"elements", []string{"GET /v1/elements"}, true, func(t *testing.T, f *privacyFixture) string { return f.get(t, "/v1/elements") }},
	{"windows", []string{"GET /v1/windows"}, true, func(t *testing.T, f *privacyFixture) string { return f.get(t, "/v1/windows") }},
	{"pointer", []string{"GET /v1/pointer"}, false, func(t *testing.T, f *privacyFixture) string { return f.get(t, "/v1/pointer") }},
	// The clipboard holds what someone copied, not a window's content:
	// reading it needs act (people copy passwords).
	{"clipboard", []string{"GET /v1/clipboard"}, true, func(t *testing.T, f *privacyFixture) string {
		f.send(t, "PUT", "/v1/clipboard", map[string]any{"text": "PUBLIC NOTES 77"})
		return f.get(t, "/v1/clipboard")
	}},
	{"settle", []string{"POST /v1/settle"}, false, func(t *testing.T, f *privacyFixture) string {
		return f.post(t, "/v1/settle", map[string]any{"quiet": 0.2, "timeout": 5})
	}},
	{"screenshot", []string{"GET /v1/screenshot"}, true, func(t *testing.T, f *privacyFixture) string {
		return f.ocr(t, f.getBytes(t, "/v1/screenshot?format=png"))
	}},
	{"live frames", []string{"GET /v1/live/frames"}, true, func(t *testing.T, f *privacyFixture) string { return f.ocr(t, f.liveFrame(t)) }},
	{"MCP desktop_state", []string{"tool:desktop_state"}, true, func(t *testing.T, f *privacyFixture) string { return f.tool(t, "desktop_state", nil) }},
	{"MCP list_windows", []string{"tool:list_windows"}, true, func(t *testing.T, f *privacyFixture) string { return f.tool(t, "list_windows", nil) }},
	{"MCP screenshot", []string{"tool:screenshot"}, true, func(t *testing.T, f *privacyFixture) string {
		return f.tool(t, "screenshot", map[string]any{"format": "png"})
	}},
	{"MCP desktop_look", []string{"tool:desktop_look"}, true, func(t *testing.T, f *privacyFixture) string { return f.tool(t, "desktop_look", nil) }},
	{"MCP pointer", []string{"tool:pointer"}, false, func(t *testing.T, f *privacyFixture) string { return f.tool(t, "pointer", nil) }},
	{"MCP clipboard_get", []string{"tool:clipboard_get"}, true, func(t *testing.T, f *privacyFixture) string { return f.tool(t, "clipboard_get", nil) }},
	{"MCP settle", []string{"tool:settle"}, false, func(t *testing.T, f *privacyFixture) string {
		return f.tool(t, "settle", map[string]any{"quiet": 0.2, "timeout": 5})
	}},
	// A wait for the secret: the judge never sees it (the wait times out
	// with no evidence of it), and the frames the wait kept for the run
	// timeline, read by OCR, show the control but not the secret.
	{"judge evidence and judged frames", []string{"POST /v1/waits", "tool:smart_wait", "GET /v1/runs/{id}/frames",
		"GET /v1/frames/{hash}", "GET /v1/runs/{id}/frames.gif", "GET /v1/runs/{id}/frames.webp"}, true,
		func(t *testing.T, f *privacyFixture) string {
			id := f.wait(t)
			res, err := f.d.client.WaitRun(t.Context(), id, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res)
			var frames struct {
				Frames []struct{ URL string } `json:"frames"`
			}
			if err := json.Unmarshal(f.getBytes(t, "/v1/runs/"+id+"/frames"), &frames); err != nil || len(frames.Frames) == 0 {
				t.Fatalf("the wait kept no judged frame: %v", err)
			}
			out := string(b)
			for _, fr := range frames.Frames {
				out += f.ocr(t, f.getBytes(t, fr.URL))
			}
			// The animation is made of the same stored frames (the WebP
			// one too, which Go cannot decode: it is not read here).
			out += f.ocr(t, f.getBytes(t, "/v1/runs/"+id+"/frames.gif"))
			return out
		}},
	// A recording of the screen, its file read back and a frame read by
	// OCR.
	{"recording", []string{"POST /v1/recordings", "GET /v1/recordings/{id}"}, true, func(t *testing.T, f *privacyFixture) string {
		return f.ocr(t, f.recordedFrame(t))
	}},
}

// TestReadPathsCovered: every route and MCP tool the tables class as a
// read of the desktop is fetched by a path of readPaths.
func TestReadPathsCovered(t *testing.T) {
	covered := map[string]bool{}
	for _, p := range readPaths {
		for _, c := range p.covers {
			covered[c] = true
		}
	}
	for _, r := range server.Routes() {
		if r.Desktop == server.DesktopRead && !covered[r.Key()] {
			t.Errorf("read route %s is in no path of readPaths: add one to TestExcludedWindowOnEveryReadPath", r.Key())
		}
	}
	for _, tl := range mcpserver.Tools() {
		if tl.Desktop == server.DesktopRead && !covered["tool:"+tl.Name] {
			t.Errorf("read tool %s is in no path of readPaths: add one to TestExcludedWindowOnEveryReadPath", tl.Name)
		}
	}
}

type privacyFixture struct {
	d   *daemonProc
	mcp *mcp.ClientSession
	eng *ocr.Engine
}

func (f *privacyFixture) getBytes(t *testing.T, path string) []byte {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", f.d.client.BaseURL()+path, nil)
	req.Header.Set("Authorization", "Bearer "+tokenOf(t, f.d.dataDir))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return b
}

func (f *privacyFixture) get(t *testing.T, path string) string { return string(f.getBytes(t, path)) }

// post sends a JSON body and returns the answer.
func (f *privacyFixture) post(t *testing.T, path string, body any) string {
	t.Helper()
	return f.send(t, "POST", path, body)
}

func (f *privacyFixture) send(t *testing.T, method, path string, body any) string {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(t.Context(), method, f.d.client.BaseURL()+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+tokenOf(t, f.d.dataDir))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	return string(out)
}

// recordedFrame records the screen for a moment and returns the last
// frame of the file the daemon serves, as PNG (ffmpeg decodes it).
func (f *privacyFixture) recordedFrame(t *testing.T) []byte {
	t.Helper()
	var rec struct{ ID string }
	if err := json.Unmarshal([]byte(f.post(t, "/v1/recordings", map[string]any{})), &rec); err != nil || rec.ID == "" {
		t.Fatalf("start a recording: %v", err)
	}
	time.Sleep(2 * time.Second)
	f.post(t, "/v1/recordings/"+rec.ID+"/stop", map[string]any{})
	var video []byte
	eventually(t, 30*time.Second, "the recording's file", func() bool {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", f.d.client.BaseURL()+"/v1/recordings/"+rec.ID, nil)
		req.Header.Set("Authorization", "Bearer "+tokenOf(t, f.d.dataDir))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		video, _ = io.ReadAll(resp.Body)
		return resp.StatusCode == 200 && len(video) > 1000
	})
	dir := t.TempDir()
	in, out := filepath.Join(dir, "rec"), filepath.Join(dir, "frame.png")
	if err := os.WriteFile(in, video, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("ffmpeg", "-v", "error", "-sseof", "-0.5", "-i", in, "-frames:v", "1", "-y", out).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, b)
	}
	png, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return png
}

// liveFrame reads the first frame of the live view's stream.
func (f *privacyFixture) liveFrame(t *testing.T) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.d.client.BaseURL()+"/v1/live/frames?quality=95", nil)
	req.Header.Set("Authorization", "Bearer "+tokenOf(t, f.d.dataDir))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 0, 1<<20)
	tmp := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if i := bytes.Index(buf, []byte("data: ")); i >= 0 {
			if j := bytes.Index(buf[i:], []byte("\n\n")); j >= 0 {
				var lf struct {
					JPEG []byte `json:"jpeg"`
					Data []byte `json:"data"`
				}
				if err := json.Unmarshal(buf[i+6:i+j], &lf); err != nil {
					t.Fatalf("live frame: %v", err)
				}
				if len(lf.JPEG) > 0 {
					return lf.JPEG
				}
				return lf.Data
			}
		}
		if err != nil {
			t.Fatalf("live frames ended before a frame: %v", err)
		}
	}
}

// tool calls an MCP tool and returns its text and, read by OCR, its images.
func (f *privacyFixture) tool(t *testing.T, name string, args map[string]any) string {
	t.Helper()
	res, err := f.mcp.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			b.WriteString(f.ocr(t, c.Data))
		}
	}
	s, _ := json.Marshal(res.StructuredContent)
	b.Write(s)
	return b.String()
}

// ocr reads an image's text.
func (f *privacyFixture) ocr(t *testing.T, data []byte) string {
	t.Helper()
	if s := string(data); strings.HasPrefix(s, "\"") { // base64 in JSON
		var b64 string
		_ = json.Unmarshal(data, &b64)
		data, _ = base64.StdEncoding.DecodeString(b64)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode image: %v", err)
	}
	res, err := f.eng.Recognize(t.Context(), img)
	if err != nil {
		t.Fatal(err)
	}
	return res.Text()
}

// wait starts a smart wait for the secret with the OCR judge.
func (f *privacyFixture) wait(t *testing.T) string {
	t.Helper()
	var out struct{ ID string }
	b, _ := json.Marshal(map[string]any{"criteria": `"` + secretText + `" is visible`, "timeout": 4})
	req, _ := http.NewRequestWithContext(t.Context(), "POST", f.d.client.BaseURL()+"/v1/waits", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+tokenOf(t, f.d.dataDir))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.ID == "" {
		t.Fatalf("create wait: %v %d", err, resp.StatusCode)
	}
	return out.ID
}

// TestExcludedWindowOnEveryReadPath: a window of ACU_EXCLUDE_WINDOWS (a
// GTK entry dialog whose title and field hold a secret) shows on no read
// path: not as pixels, not in the element map's labels and values, not in
// window lists, not in a judge's evidence. The same paths do show an
// ordinary window's text, so a path that returned nothing would not pass.
func TestExcludedWindowOnEveryReadPath(t *testing.T) {
	dpy := startDisplay(t)
	session := atspitest.Start(t, dpy)
	session.StartApp(t, "zenity", "--entry", "--title="+secretTitle, "--text=Vault key:", "--entry-text="+secretText)
	// The control: an ordinary window below the dialog (no overlap, so
	// the dialog's pixels are on screen to be blacked out).
	testx.StartXterm(t, dpy, testx.XtermSpec{Title: "Public Notes", Geometry: "40x4+0+480",
		Args: []string{"-fa", "DejaVu Sans Mono", "-fs", "16"}, Command: []string{"sh", "-c", "echo 'PUBLIC NOTES 77'; exec sleep 600"}})
	tree, err := atspi.Connect(t.Context(), atspi.Options{SessionBus: session.SessionBus})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := atspitest.WaitApp(ctx, tree, "zenity"); err != nil {
		t.Fatal(err)
	}
	tree.Close()
	eng, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	env, dataDir, port := newEnv(t, dpy)
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+session.SessionBus, "ACU_EXCLUDE_WINDOWS=acu secret", "ACU_ACT_OCR=true",
		"ACU_KEEP_JUDGED_FRAMES=true")
	d := startDaemon(t, env, dataDir, port)
	client := mcp.NewClient(&mcp.Implementation{Name: "privacy-test", Version: "1"}, nil)
	s, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: d.client.BaseURL() + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{tokenOf(t, dataDir), http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := &privacyFixture{d: d, mcp: s, eng: eng}
	for _, p := range readPaths {
		got := p.text(t, f)
		for _, secret := range []string{secretText, "Acu Secret", "Vault key"} {
			if strings.Contains(strings.ToLower(got), strings.ToLower(secret)) {
				t.Errorf("%s shows the excluded window's %q:\n%.600s", p.name, secret, got)
			}
		}
		if p.shows && !strings.Contains(strings.ToUpper(got), "PUBLIC NOTES") {
			t.Errorf("%s does not show the ordinary window either (so it proves nothing):\n%.600s", p.name, got)
		}
	}
}
