package anthropic_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/dialect/anthropic"
)

func img(x, y int) *api.Point { return dialect.ImagePoint(x, y, dialect.Size{W: 1280, H: 720}) }

// TestPlan translates a corpus of computer tool inputs, malformed ones
// included, on a 1920x1080 screen offered at 1280x720.
func TestPlan(t *testing.T) {
	tool := anthropic.New(dialect.Size{W: 1920, H: 1080}, dialect.Size{})
	tool.Version = anthropic.Version20251124
	if tool.Image != (dialect.Size{W: 1280, H: 720}) {
		t.Fatalf("Image = %v, want 1280x720", tool.Image)
	}
	shot := &api.ShotOptions{Format: "png", MaxWidth: 1280}
	acts := func(a ...api.Action) dialect.Plan {
		return dialect.Plan{Act: &api.ActRequest{Actions: a, Settle: &api.SettleOptions{}}, Shot: shot}
	}
	tests := []struct {
		name, in string
		want     dialect.Plan
		field    string // the malformed field, for errors
	}{
		{"screenshot", `{"action":"screenshot"}`, dialect.Plan{Shot: shot}, ""},
		{"cursor_position", `{"action":"cursor_position"}`, dialect.Plan{Pointer: true}, ""},
		{"left_click", `{"action":"left_click","coordinate":[640,360]}`, acts(api.Action{Kind: api.ActClick, At: img(640, 360)}), ""},
		{"left_click here", `{"action":"left_click"}`, acts(api.Action{Kind: api.ActClick}), ""},
		{"shift click", `{"action":"left_click","coordinate":[10,20],"text":"shift"}`, acts(api.Action{Kind: api.ActClick, At: img(10, 20), Mods: "shift"}), ""},
		{"right_click", `{"action":"right_click","coordinate":[0,0]}`, acts(api.Action{Kind: api.ActClick, At: img(0, 0), Button: "right"}), ""},
		{"middle_click", `{"action":"middle_click","coordinate":[1279,719]}`, acts(api.Action{Kind: api.ActClick, At: img(1279, 719), Button: "middle"}), ""},
		{"double_click", `{"action":"double_click","coordinate":[5,5]}`, acts(api.Action{Kind: api.ActClick, At: img(5, 5), Count: 2}), ""},
		{"triple_click", `{"action":"triple_click","coordinate":[5,5]}`, acts(api.Action{Kind: api.ActClick, At: img(5, 5), Count: 3}), ""},
		{"mouse_move", `{"action":"mouse_move","coordinate":[100,200]}`, acts(api.Action{Kind: api.ActMove, At: img(100, 200)}), ""},
		{"left_mouse_down", `{"action":"left_mouse_down"}`, acts(api.Action{Kind: api.ActMouseDown}), ""},
		{"left_mouse_up", `{"action":"left_mouse_up","coordinate":[3,4]}`, acts(api.Action{Kind: api.ActMouseUp, At: img(3, 4)}), ""},
		{"left_click_drag", `{"action":"left_click_drag","start_coordinate":[1,2],"coordinate":[300,400]}`,
			acts(api.Action{Kind: api.ActDrag, Path: []api.Point{*img(1, 2), *img(300, 400)}}), ""},
		{"key", `{"action":"key","text":"ctrl+l"}`, acts(api.Action{Kind: api.ActKey, Keys: "ctrl+l"}), ""},
		{"key sequence", `{"action":"key","text":"Return Return"}`, acts(api.Action{Kind: api.ActKey, Keys: "Return Return"}), ""},
		{"hold_key", `{"action":"hold_key","text":"shift","duration":1.5}`, acts(api.Action{Kind: api.ActKey, Keys: "shift", HoldMs: 1500}), ""},
		{"type", `{"action":"type","text":"Hello, world\n"}`, acts(api.Action{Kind: api.ActType, Text: "Hello, world\n"}), ""},
		{"scroll down", `{"action":"scroll","coordinate":[640,360],"scroll_direction":"down","scroll_amount":3}`,
			acts(api.Action{Kind: api.ActScroll, At: img(640, 360), DY: 3}), ""},
		{"scroll left with ctrl", `{"action":"scroll","scroll_direction":"left","scroll_amount":2,"text":"ctrl"}`,
			acts(api.Action{Kind: api.ActScroll, DX: -2, Mods: "ctrl"}), ""},
		{"wait", `{"action":"wait","duration":2}`, dialect.Plan{Wait: 2 * time.Second, Shot: shot}, ""},
		{"zoom", `{"action":"zoom","region":[0,0,640,360]}`,
			dialect.Plan{Shot: &api.ShotOptions{Format: "png", MaxWidth: 1280, Region: "crop:0,0,500,500"}}, ""},
		{"tool_use block", `{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"screenshot"}}`, dialect.Plan{Shot: shot}, ""},

		{"no action", `{}`, dialect.Plan{}, "action"},
		{"unknown action", `{"action":"swipe"}`, dialect.Plan{}, "action"},
		{"not json", `{"action":`, dialect.Plan{}, ""},
		{"wrong block", `{"type":"text","text":"hi"}`, dialect.Plan{}, "type"},
		{"coordinate outside", `{"action":"left_click","coordinate":[1280,10]}`, dialect.Plan{}, "coordinate"},
		{"negative coordinate", `{"action":"left_click","coordinate":[-1,10]}`, dialect.Plan{}, "coordinate"},
		{"one number", `{"action":"left_click","coordinate":[10]}`, dialect.Plan{}, "coordinate"},
		{"fractional", `{"action":"mouse_move","coordinate":[10.5,3]}`, dialect.Plan{}, "coordinate"},
		{"coordinate as string", `{"action":"left_click","coordinate":"10,20"}`, dialect.Plan{}, "input"},
		{"move without coordinate", `{"action":"mouse_move"}`, dialect.Plan{}, "coordinate"},
		{"drag without start", `{"action":"left_click_drag","coordinate":[1,2]}`, dialect.Plan{}, "start_coordinate"},
		{"key without text", `{"action":"key"}`, dialect.Plan{}, "text"},
		{"type empty", `{"action":"type","text":""}`, dialect.Plan{}, "text"},
		{"type with coordinate", `{"action":"type","text":"a","coordinate":[1,1]}`, dialect.Plan{}, "coordinate"},
		{"scroll no direction", `{"action":"scroll","scroll_amount":3}`, dialect.Plan{}, "scroll_direction"},
		{"scroll bad direction", `{"action":"scroll","scroll_direction":"sideways","scroll_amount":3}`, dialect.Plan{}, "scroll_direction"},
		{"scroll no amount", `{"action":"scroll","scroll_direction":"up"}`, dialect.Plan{}, "scroll_amount"},
		{"scroll too far", `{"action":"scroll","scroll_direction":"up","scroll_amount":1000}`, dialect.Plan{}, "scroll_amount"},
		{"hold_key too long", `{"action":"hold_key","text":"a","duration":60}`, dialect.Plan{}, "duration"},
		{"wait no duration", `{"action":"wait"}`, dialect.Plan{}, "duration"},
		{"wait negative", `{"action":"wait","duration":-1}`, dialect.Plan{}, "duration"},
		{"zoom inverted", `{"action":"zoom","region":[100,100,50,50]}`, dialect.Plan{}, "region"},
		{"zoom three numbers", `{"action":"zoom","region":[1,2,3]}`, dialect.Plan{}, "region"},
		{"screenshot with text", `{"action":"screenshot","text":"x"}`, dialect.Plan{}, "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, in, err := anthropic.Decode([]byte(tt.in))
			var got dialect.Plan
			if err == nil {
				got, err = tool.Plan(in)
			}
			if tt.field != "" || tt.name == "not json" {
				var ie *dialect.InvalidError
				if !errors.As(err, &ie) {
					t.Fatalf("Plan(%s) error = %v, want an invalid %s", tt.in, err, tt.field)
				}
				if ie.Field != tt.field && tt.field != "" {
					t.Errorf("Plan(%s) field = %q (%s), want %q", tt.in, ie.Field, ie.Message, tt.field)
				}
				res := anthropic.ErrorResult("toolu_1", err)
				if !res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text == "" {
					t.Errorf("ErrorResult = %+v, want an is_error result with a text", res)
				}
				return
			}
			if err != nil {
				t.Fatalf("Plan(%s): %v", tt.in, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Plan(%s) (-want +got):\n%s", tt.in, d)
			}
		})
	}
}

// TestVersions refuses actions a tool version lacks.
func TestVersions(t *testing.T) {
	old := anthropic.New(dialect.Size{W: 1024, H: 768}, dialect.Size{})
	old.Version = anthropic.Version20241022
	for _, a := range []string{"scroll", "wait", "triple_click", "hold_key", "zoom"} {
		if _, err := old.Plan(anthropic.Input{Action: a}); err == nil {
			t.Errorf("%s Plan(%s) = nil error, want unknown action", old.Version, a)
		}
	}
	v := anthropic.New(dialect.Size{W: 1024, H: 768}, dialect.Size{})
	if _, err := v.Plan(anthropic.Input{Action: "zoom", Region: []float64{0, 0, 10, 10}}); err == nil {
		t.Errorf("%s Plan(zoom) = nil error, want unknown action", v.Version)
	}
	if d := v.Definition(); d.Type != "computer_20250124" || d.DisplayWidthPx != 1024 || d.DisplayHeightPx != 768 || d.EnableZoom {
		t.Errorf("Definition() = %+v", d)
	}
}

// TestResult builds tool_result blocks: a screenshot as a base64 image,
// the pointer in the offered picture's pixels, a wait that ended early.
func TestResult(t *testing.T) {
	tool := anthropic.New(dialect.Size{W: 2560, H: 1600}, dialect.Size{})
	p, _ := tool.Plan(anthropic.Input{Action: "cursor_position"})
	r := tool.Result("toolu_9", p, dialect.Outcome{Pointer: [2]int{2559, 801}})
	want := anthropic.ToolResult{Type: "tool_result", ToolUseID: "toolu_9", Content: []anthropic.Content{{Type: "text", Text: "X=1279,Y=400"}}}
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("cursor_position result (-want +got):\n%s", d)
	}
	p, _ = tool.Plan(anthropic.Input{Action: "screenshot"})
	r = tool.Result("toolu_a", p, dialect.Outcome{Shot: &api.ActShot{Format: "png", Data: []byte("PNG")}})
	if len(r.Content) != 1 || r.Content[0].Source == nil || r.Content[0].Source.MediaType != "image/png" || r.Content[0].Source.Data != "UE5H" || r.IsError {
		t.Errorf("screenshot result = %+v", r)
	}
	dur := 3.0
	p, _ = tool.Plan(anthropic.Input{Action: "wait", Duration: &dur})
	r = tool.Result("toolu_b", p, dialect.Outcome{Waited: &api.SettleResult{Settled: true, Waited: 1.0}})
	if r.Content[0].Text != "Waited 1.0 s of 3.0 s: ended early, the screen had been still for 1.0 s." {
		t.Errorf("wait result text = %q", r.Content[0].Text)
	}
	r = tool.Result("toolu_c", p, dialect.Outcome{Err: &api.StatusError{Status: 409, ErrorDetail: api.ErrorDetail{Code: api.CodeUserActive, Message: "busy"}}})
	if !r.IsError || r.Content[0].Text == "" {
		t.Errorf("user_active result = %+v", r)
	}
}
