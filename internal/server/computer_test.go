package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acu-dev/acu/internal/actions"
	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/testx"
)

// computerFixture is the act fixture with a recording window over the
// whole screen, and the sizes the models are offered.
type computerFixture struct {
	*actFixture
	w      *testx.Window
	screen dialect.Size
	img    dialect.Size
}

func newComputerFixture(t *testing.T) *computerFixture {
	t.Helper()
	f := newActFixture(t, actions.Policy{PauseOnUser: true})
	tool, err := f.c.ComputerTool(t.Context(), api.VendorAnthropic, api.ComputerQuery{Limit: "1024x768"})
	if err != nil {
		t.Fatal(err)
	}
	cf := &computerFixture{actFixture: f, screen: dialect.Size{W: tool.Screen[0], H: tool.Screen[1]}, img: dialect.Size{W: tool.Image[0], H: tool.Image[1]}}
	var decl struct {
		Type string `json:"type"`
		W    int    `json:"display_width_px"`
		H    int    `json:"display_height_px"`
	}
	if err := json.Unmarshal(tool.Tool, &decl); err != nil || decl.Type != "computer_20250124" || decl.W != cf.img.W || decl.H != cf.img.H {
		t.Fatalf("tool declaration %s (%v), want computer_20250124 at %v", tool.Tool, err, cf.img)
	}
	if cf.img.W > 1024 || cf.img.H > 768 || cf.img == cf.screen {
		t.Fatalf("screen %v offered at %v: want it scaled within 1024x768", cf.screen, cf.img)
	}
	cf.w = testx.NewWindow(t, f.d.Display, testx.Spec{Title: "Acu Computer", X: 0, Y: 0, W: cf.screen.W, H: cf.screen.H})
	cf.w.Focus()
	return cf
}

// post sends an item as the vendor sent it.
func (f *computerFixture) post(t *testing.T, vendor, query, item string) api.ComputerResult {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url+"/v1/computer/"+vendor+"?limit=1024x768"+query, strings.NewReader(item))
	req.Header.Set("Authorization", "Bearer "+actToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		t.Fatalf("POST %s %s: %d %s", vendor, item, resp.StatusCode, b.String())
	}
	var res api.ComputerResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

// at is the screen pixel a model's picture pixel maps to.
func (f *computerFixture) at(x, y int) string {
	sx, sy := dialect.ToScreen(x, y, f.img, f.screen)
	return fmt.Sprintf("@%d,%d", sx, sy)
}

// buttons waits for n button events and returns them, then forgets them.
func (f *computerFixture) buttons(t *testing.T, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got []string
	_, err := f.w.WaitFor(ctx, func(evs []testx.Event) bool {
		got = got[:0]
		for _, e := range evs {
			if e.Kind == testx.ButtonPress || e.Kind == testx.ButtonRelease {
				mods := ""
				if e.Kind == testx.ButtonPress && e.State&1 != 0 {
					mods = " shift"
				}
				if e.Kind == testx.ButtonPress && e.State&4 != 0 {
					mods += " ctrl"
				}
				got = append(got, fmt.Sprintf("%v %d @%d,%d%s", e.Kind, e.Button, e.RootX, e.RootY, mods))
			}
		}
		return len(got) >= n
	})
	if err != nil {
		t.Fatalf("button events %q: %v", got, err)
	}
	f.w.ResetEvents()
	return got
}

func (f *computerFixture) typed(t *testing.T, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := f.w.WaitFor(ctx, func([]testx.Event) bool { return f.w.Typed() == want }); err != nil {
		t.Fatalf("typed %q, want %q: %v", f.w.Typed(), want, err)
	}
	f.w.ResetEvents()
}

// TestComputerAnthropic runs a corpus of computer tool calls on a real
// display and checks the input the X test client received, and the
// tool_result blocks: a screenshot at the offered size, the pointer in its
// pixels, is_error for malformed calls (which send no input).
func TestComputerAnthropic(t *testing.T) {
	f := newComputerFixture(t)
	use := func(input string) string {
		return `{"type":"tool_use","id":"toolu_01","name":"computer","input":` + input + `}`
	}
	type result struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		IsError   bool   `json:"is_error"`
		Content   []struct {
			Type   string `json:"type"`
			Text   string `json:"text"`
			Source struct {
				MediaType string `json:"media_type"`
				Data      string `json:"data"`
			} `json:"source"`
		} `json:"content"`
	}
	call := func(input string) result {
		t.Helper()
		res := f.post(t, "anthropic", "", use(input))
		var r result
		if err := json.Unmarshal(res.Result, &r); err != nil || r.Type != "tool_result" || r.ToolUseID != "toolu_01" {
			t.Fatalf("result of %s = %s (%v)", input, res.Result, err)
		}
		if r.IsError != (res.Status == api.ComputerError) {
			t.Errorf("%s: is_error %v with status %s", input, r.IsError, res.Status)
		}
		return r
	}
	cx, cy := f.img.W/2, f.img.H/2
	clicks := []struct {
		input string
		want  []string
	}{
		{fmt.Sprintf(`{"action":"left_click","coordinate":[%d,%d]}`, cx, cy), []string{"button_press 1 " + f.at(cx, cy), "button_release 1 " + f.at(cx, cy)}},
		{`{"action":"right_click","coordinate":[0,0]}`, []string{"button_press 3 " + f.at(0, 0), "button_release 3 " + f.at(0, 0)}},
		{fmt.Sprintf(`{"action":"middle_click","coordinate":[%d,%d]}`, f.img.W-1, f.img.H-1),
			[]string{"button_press 2 " + f.at(f.img.W-1, f.img.H-1), "button_release 2 " + f.at(f.img.W-1, f.img.H-1)}},
		{`{"action":"double_click","coordinate":[10,20]}`, []string{"button_press 1 " + f.at(10, 20), "button_release 1 " + f.at(10, 20),
			"button_press 1 " + f.at(10, 20), "button_release 1 " + f.at(10, 20)}},
		{`{"action":"left_click","coordinate":[30,40],"text":"shift"}`, []string{"button_press 1 " + f.at(30, 40) + " shift", "button_release 1 " + f.at(30, 40)}},
		{`{"action":"scroll","coordinate":[50,60],"scroll_direction":"down","scroll_amount":2}`,
			[]string{"button_press 5 " + f.at(50, 60), "button_release 5 " + f.at(50, 60), "button_press 5 " + f.at(50, 60), "button_release 5 " + f.at(50, 60)}},
		{`{"action":"scroll","coordinate":[50,60],"scroll_direction":"up","scroll_amount":1,"text":"ctrl"}`,
			[]string{"button_press 4 " + f.at(50, 60) + " ctrl", "button_release 4 " + f.at(50, 60)}},
		{`{"action":"left_click_drag","start_coordinate":[100,100],"coordinate":[300,200]}`, []string{"button_press 1 " + f.at(100, 100), "button_release 1 " + f.at(300, 200)}},
		{`{"action":"triple_click","coordinate":[5,5]}`, []string{"button_press 1 " + f.at(5, 5), "button_release 1 " + f.at(5, 5),
			"button_press 1 " + f.at(5, 5), "button_release 1 " + f.at(5, 5), "button_press 1 " + f.at(5, 5), "button_release 1 " + f.at(5, 5)}},
	}
	for _, c := range clicks {
		r := call(c.input)
		if r.IsError || len(r.Content) != 1 || r.Content[0].Type != "image" {
			t.Fatalf("%s: result %+v, want one image", c.input, r)
		}
		if d := cmp.Diff(c.want, f.buttons(t, len(c.want))); d != "" {
			t.Errorf("%s: button events (-want +got):\n%s", c.input, d)
		}
	}
	// The screenshot is exactly the offered size.
	r := call(`{"action":"screenshot"}`)
	if len(r.Content) != 1 || r.Content[0].Source.MediaType != "image/png" {
		t.Fatalf("screenshot result %+v", r)
	}
	b, _ := base64.StdEncoding.DecodeString(r.Content[0].Source.Data)
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil || img.Bounds().Dx() != f.img.W || img.Bounds().Dy() != f.img.H {
		t.Fatalf("screenshot %v (%v), want %v", img.Bounds(), err, f.img)
	}
	// cursor_position answers in the offered picture's pixels.
	call(`{"action":"mouse_move","coordinate":[200,150]}`)
	r = call(`{"action":"cursor_position"}`)
	if len(r.Content) != 1 || r.Content[0].Text != "X=200,Y=150" {
		t.Errorf("cursor_position = %+v, want X=200,Y=150", r.Content)
	}
	// Keys and text.
	call(`{"action":"type","text":"Hi é"}`)
	f.typed(t, "Hi é")
	call(`{"action":"key","text":"a b"}`)
	f.typed(t, "ab")
	// wait ends early on a still screen and says so.
	res := f.post(t, "anthropic", "", use(`{"action":"wait","duration":5}`))
	_ = json.Unmarshal(res.Result, &r)
	if res.Waited == nil || !res.Waited.Settled || !strings.Contains(r.Content[0].Text, "ended early") {
		t.Errorf("wait = %+v %+v, want it ended early on the still screen", res.Waited, r.Content)
	}
	// Malformed calls are is_error results and send nothing.
	f.w.ResetEvents()
	for _, in := range []string{`{"action":"left_click","coordinate":[99999,1]}`, `{"action":"fly"}`, `{"action":"type"}`,
		`{"action":"scroll","coordinate":[1,1],"scroll_direction":"sideways","scroll_amount":1}`, `{"action":"left_click","coordinate":[1,2],"text":"hyper"}`} {
		r := call(in)
		if !r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text == "" {
			t.Errorf("%s: result %+v, want is_error with a text", in, r)
		}
	}
	if evs := f.w.Events(); len(evs) != 0 {
		t.Errorf("malformed calls sent input: %v", evs)
	}
}

// TestComputerOpenAI runs computer_call items: input recorded, the
// computer_call_output with a screenshot, pending safety checks holding
// the call until the caller acknowledges them.
func TestComputerOpenAI(t *testing.T) {
	f := newComputerFixture(t)
	callItem := func(action, checks string) string {
		return `{"type":"computer_call","id":"cu_1","call_id":"call_7","action":` + action + `,"pending_safety_checks":[` + checks + `],"status":"completed"}`
	}
	type output struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output struct {
			Type     string `json:"type"`
			ImageURL string `json:"image_url"`
		} `json:"output"`
		Ack []struct {
			ID string `json:"id"`
		} `json:"acknowledged_safety_checks"`
	}
	res := f.post(t, "openai", "", callItem(`{"type":"click","button":"right","x":40,"y":50}`, ""))
	var o output
	if err := json.Unmarshal(res.Result, &o); err != nil || o.Type != "computer_call_output" || o.CallID != "call_7" ||
		o.Output.Type != "computer_screenshot" || !strings.HasPrefix(o.Output.ImageURL, "data:image/png;base64,") {
		t.Fatalf("result %s (%v)", res.Result, err)
	}
	if d := cmp.Diff([]string{"button_press 3 " + f.at(40, 50), "button_release 3 " + f.at(40, 50)}, f.buttons(t, 2)); d != "" {
		t.Errorf("click (-want +got):\n%s", d)
	}
	f.post(t, "openai", "", callItem(`{"type":"scroll","x":10,"y":10,"scroll_x":0,"scroll_y":-100}`, ""))
	if d := cmp.Diff([]string{"button_press 4 " + f.at(10, 10), "button_release 4 " + f.at(10, 10)}, f.buttons(t, 2)); d != "" {
		t.Errorf("scroll (-want +got):\n%s", d)
	}
	f.post(t, "openai", "", `{"type":"computer_call","call_id":"c2","actions":[{"type":"type","text":"ok"},{"type":"keypress","keys":["SHIFT","A"]}]}`)
	f.typed(t, "okA")
	f.post(t, "openai", "", callItem(`{"type":"drag","path":[{"x":10,"y":10},{"x":60,"y":10},{"x":60,"y":80}]}`, ""))
	if d := cmp.Diff([]string{"button_press 1 " + f.at(10, 10), "button_release 1 " + f.at(60, 80)}, f.buttons(t, 2)); d != "" {
		t.Errorf("drag (-want +got):\n%s", d)
	}
	// A pending safety check holds the call until acknowledged.
	checked := callItem(`{"type":"click","button":"left","x":7,"y":8}`, `{"id":"cu_sc_1","code":"malicious_instructions","message":"Careful."}`)
	res = f.post(t, "openai", "", checked)
	if res.Status != api.ComputerSafetyCheck || len(res.Result) != 0 || !strings.Contains(string(res.PendingSafetyChecks), "cu_sc_1") {
		t.Fatalf("unacknowledged call = %+v", res)
	}
	time.Sleep(100 * time.Millisecond)
	if evs := f.w.Events(); len(evs) != 0 {
		t.Fatalf("an unacknowledged call sent input: %v", evs)
	}
	res = f.post(t, "openai", "&acknowledge=cu_sc_1", checked)
	if err := json.Unmarshal(res.Result, &o); err != nil || res.Status != api.ComputerActed || len(o.Ack) != 1 || o.Ack[0].ID != "cu_sc_1" {
		t.Fatalf("acknowledged call = %+v %s", res, res.Result)
	}
	if d := cmp.Diff([]string{"button_press 1 " + f.at(7, 8), "button_release 1 " + f.at(7, 8)}, f.buttons(t, 2)); d != "" {
		t.Errorf("acknowledged click (-want +got):\n%s", d)
	}
	// Malformed: an error for the caller, a screenshot as the output.
	res = f.post(t, "openai", "", callItem(`{"type":"click","button":"side","x":1,"y":1}`, ""))
	if res.Status != api.ComputerError || res.Error == nil || res.Error.Field != "action.button" || json.Unmarshal(res.Result, &o) != nil || o.Output.ImageURL == "" {
		t.Errorf("malformed call = %+v", res)
	}
}

// TestComputerUITARS runs UI-TARS outputs: 0..1000 coordinates of the
// picture, text, hotkeys, finished.
func TestComputerUITARS(t *testing.T) {
	f := newComputerFixture(t)
	out := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	res := f.post(t, "uitars", "", out("Thought: click the middle.\nAction: click(start_box='(500,500)')"))
	px, py := f.img.W/2, f.img.H/2
	if d := cmp.Diff([]string{"button_press 1 " + f.at(px, py), "button_release 1 " + f.at(px, py)}, f.buttons(t, 2)); d != "" {
		t.Errorf("click (-want +got):\n%s", d)
	}
	var msg struct {
		Role    string `json:"role"`
		Content []struct {
			Type     string `json:"type"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res.Result, &msg); err != nil || msg.Role != "user" || len(msg.Content) != 1 || !strings.HasPrefix(msg.Content[0].ImageURL.URL, "data:image/png;base64,") {
		t.Fatalf("result %s (%v)", res.Result, err)
	}
	f.post(t, "uitars", "", out("Action: type(content='tars')\n\nhotkey(key='shift x')"))
	f.typed(t, "tarsX")
	// As text/plain, in absolute pixels.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url+"/v1/computer/uitars?limit=1024x768&mode=absolute", strings.NewReader("Action: right_single(start_box='(20,30)')"))
	req.Header.Set("Authorization", "Bearer "+actToken)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("text/plain: %v %v", resp, err)
	}
	resp.Body.Close()
	if d := cmp.Diff([]string{"button_press 3 " + f.at(20, 30), "button_release 3 " + f.at(20, 30)}, f.buttons(t, 2)); d != "" {
		t.Errorf("absolute right_single (-want +got):\n%s", d)
	}
	res = f.post(t, "uitars", "", out("Thought: done.\nAction: finished(content='All set')"))
	if res.Status != api.ComputerFinished || res.Content != "All set" {
		t.Errorf("finished = %+v", res)
	}
	res = f.post(t, "uitars", "", out("Action: click(start_box='(2000,10)')"))
	if res.Status != api.ComputerError || res.Error == nil {
		t.Errorf("outside = %+v", res)
	}
	if _, err := f.c.Computer(t.Context(), "gemini", api.ComputerQuery{}, json.RawMessage(`"x"`)); !api.IsCode(err, api.CodeNotFound) {
		t.Errorf("unknown vendor: %v, want not_found", err)
	}
	if _, err := f.c.Computer(t.Context(), "uitars", api.ComputerQuery{Mode: "weird"}, json.RawMessage(`"x"`)); !api.IsCode(err, api.CodeInvalid) {
		t.Errorf("bad mode: %v, want invalid", err)
	}
}
