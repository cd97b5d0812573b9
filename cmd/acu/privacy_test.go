package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/jpeg" // screenshots and live frames
	_ "image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/atspi/atspitest"
	"github.com/acu-dev/acu/internal/ocr"
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
	// shows: the path shows an ordinary window's text (the control that
	// the path returned the desktop at all).
	shows bool
	// text returns what the path answered, as a client would see it.
	text func(t *testing.T, f *privacyFixture) string
}

// readPaths lists every read path of the API and the MCP tools; a new
// read route or tool must be added here (TestReadPathsCovered checks the
// route table against it).
var readPaths = []readPath{
	{"GET /v1/elements", true, func(t *testing.T, f *privacyFixture) string { return f.get(t, "/v1/elements") }},
	{"GET /v1/windows", true, func(t *testing.T, f *privacyFixture) string { return f.get(t, "/v1/windows") }},
	{"GET /v1/pointer", false, func(t *testing.T, f *privacyFixture) string { return f.get(t, "/v1/pointer") }},
	{"GET /v1/screenshot", true, func(t *testing.T, f *privacyFixture) string {
		return f.ocr(t, f.getBytes(t, "/v1/screenshot?format=png"))
	}},
	{"GET /v1/live/frames", true, func(t *testing.T, f *privacyFixture) string { return f.ocr(t, f.liveFrame(t)) }},
	{"MCP desktop_state", true, func(t *testing.T, f *privacyFixture) string { return f.tool(t, "desktop_state", nil) }},
	{"MCP list_windows", true, func(t *testing.T, f *privacyFixture) string { return f.tool(t, "list_windows", nil) }},
	{"MCP screenshot", true, func(t *testing.T, f *privacyFixture) string {
		return f.tool(t, "screenshot", map[string]any{"format": "png"})
	}},
	{"MCP desktop_look", true, func(t *testing.T, f *privacyFixture) string { return f.tool(t, "desktop_look", nil) }},
	{"judge evidence (smart wait)", false, func(t *testing.T, f *privacyFixture) string {
		res, err := f.d.client.WaitRun(t.Context(), f.wait(t), 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return string(b)
	}},
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
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+session.SessionBus, "ACU_EXCLUDE_WINDOWS=acu secret", "ACU_ACT_OCR=true")
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
