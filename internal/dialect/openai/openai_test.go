package openai_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/dialect/openai"
)

func img(x, y int) *api.Point { return dialect.ImagePoint(x, y, dialect.Size{W: 1024, H: 768}) }

// TestPlan translates a corpus of computer_call items, malformed ones
// included, on a 1024x768 screen.
func TestPlan(t *testing.T) {
	tool := openai.New(dialect.Size{W: 1024, H: 768}, dialect.Size{})
	shot := &api.ShotOptions{Format: "png", MaxWidth: 1024}
	acts := func(a ...api.Action) dialect.Plan {
		return dialect.Plan{Act: &api.ActRequest{Actions: a, Settle: &api.SettleOptions{}}, Shot: shot}
	}
	call := func(action string) string {
		return `{"type":"computer_call","id":"cu_1","call_id":"call_1","action":` + action + `,"pending_safety_checks":[],"status":"completed"}`
	}
	tests := []struct {
		name, in string
		want     dialect.Plan
		field    string
	}{
		{"click", call(`{"type":"click","button":"left","x":100,"y":200}`), acts(api.Action{Kind: api.ActClick, At: img(100, 200)}), ""},
		{"right click", call(`{"type":"click","button":"right","x":0,"y":0}`), acts(api.Action{Kind: api.ActClick, At: img(0, 0), Button: "right"}), ""},
		{"wheel click", call(`{"type":"click","button":"wheel","x":1,"y":1}`), acts(api.Action{Kind: api.ActClick, At: img(1, 1), Button: "middle"}), ""},
		{"back", call(`{"type":"click","button":"back","x":5,"y":6}`), acts(api.Action{Kind: api.ActClick, At: img(5, 6), Button: "back"}), ""},
		{"forward", call(`{"type":"click","button":"forward","x":5,"y":6}`), acts(api.Action{Kind: api.ActClick, At: img(5, 6), Button: "forward"}), ""},
		{"ctrl click", call(`{"type":"click","button":"left","x":9,"y":9,"keys":["CTRL"]}`), acts(api.Action{Kind: api.ActClick, At: img(9, 9), Mods: "ctrl"}), ""},
		{"double_click", call(`{"type":"double_click","x":1023,"y":767}`), acts(api.Action{Kind: api.ActClick, At: img(1023, 767), Count: 2}), ""},
		{"drag", call(`{"type":"drag","path":[{"x":1,"y":2},{"x":50,"y":60},{"x":100,"y":120}]}`),
			acts(api.Action{Kind: api.ActDrag, Path: []api.Point{*img(1, 2), *img(50, 60), *img(100, 120)}}), ""},
		{"keypress chord", call(`{"type":"keypress","keys":["CTRL","L"]}`), acts(api.Action{Kind: api.ActKey, Keys: "ctrl+l"}), ""},
		{"keypress keys together", call(`{"type":"keypress","keys":["SHIFT","A","B"]}`), acts(api.Action{Kind: api.ActKey, Keys: "shift+a+b"}), ""},
		{"keypress enter", call(`{"type":"keypress","keys":["ENTER"]}`), acts(api.Action{Kind: api.ActKey, Keys: "Return"}), ""},
		{"keypress arrow", call(`{"type":"keypress","keys":["ArrowDown"]}`), acts(api.Action{Kind: api.ActKey, Keys: "Down"}), ""},
		{"keypress shift tab", call(`{"type":"keypress","keys":["SHIFT","TAB"]}`), acts(api.Action{Kind: api.ActKey, Keys: "shift+Tab"}), ""},
		{"move", call(`{"type":"move","x":10,"y":20}`), acts(api.Action{Kind: api.ActMove, At: img(10, 20)}), ""},
		{"screenshot", call(`{"type":"screenshot"}`), dialect.Plan{Shot: shot}, ""},
		{"scroll", call(`{"type":"scroll","x":500,"y":400,"scroll_x":0,"scroll_y":300}`), acts(api.Action{Kind: api.ActScroll, At: img(500, 400), DY: 3}), ""},
		{"scroll small up", call(`{"type":"scroll","x":500,"y":400,"scroll_x":0,"scroll_y":-20}`), acts(api.Action{Kind: api.ActScroll, At: img(500, 400), DY: -1}), ""},
		{"scroll sideways", call(`{"type":"scroll","x":500,"y":400,"scroll_x":-200,"scroll_y":0}`), acts(api.Action{Kind: api.ActScroll, At: img(500, 400), DX: -2}), ""},
		{"type", call(`{"type":"type","text":"hello world"}`), acts(api.Action{Kind: api.ActType, Text: "hello world"}), ""},
		{"wait", call(`{"type":"wait"}`), dialect.Plan{Wait: 2 * time.Second, Shot: shot}, ""},
		{"batch", `{"type":"computer_call","call_id":"c2","actions":[{"type":"click","button":"left","x":3,"y":4},{"type":"type","text":"hi"},{"type":"keypress","keys":["ENTER"]}]}`,
			acts(api.Action{Kind: api.ActClick, At: img(3, 4)}, api.Action{Kind: api.ActType, Text: "hi"}, api.Action{Kind: api.ActKey, Keys: "Return"}), ""},

		{"not a call", `{"type":"message","call_id":"x"}`, dialect.Plan{}, "type"},
		{"no call_id", `{"type":"computer_call","action":{"type":"screenshot"}}`, dialect.Plan{}, "call_id"},
		{"no action", `{"type":"computer_call","call_id":"c"}`, dialect.Plan{}, "action"},
		{"unknown action", call(`{"type":"swipe"}`), dialect.Plan{}, "action.type"},
		{"bad button", call(`{"type":"click","button":"side","x":1,"y":1}`), dialect.Plan{}, "action.button"},
		{"click outside", call(`{"type":"click","button":"left","x":1024,"y":1}`), dialect.Plan{}, "action.x"},
		{"click no y", call(`{"type":"click","button":"left","x":1}`), dialect.Plan{}, "action.x"},
		{"fractional", call(`{"type":"move","x":1.5,"y":1}`), dialect.Plan{}, "action.x"},
		{"drag one point", call(`{"type":"drag","path":[{"x":1,"y":2}]}`), dialect.Plan{}, "action.path"},
		{"keypress none", call(`{"type":"keypress","keys":[]}`), dialect.Plan{}, "action.keys"},
		{"click non-modifier keys", call(`{"type":"click","button":"left","x":1,"y":1,"keys":["A"]}`), dialect.Plan{}, "action.keys"},
		{"type empty", call(`{"type":"type","text":""}`), dialect.Plan{}, "action.text"},
		{"type with x", call(`{"type":"type","text":"a","x":1,"y":1}`), dialect.Plan{}, "action.x"},
		{"scroll too far", call(`{"type":"scroll","x":1,"y":1,"scroll_x":0,"scroll_y":100000}`), dialect.Plan{}, "action.scroll_y"},
		{"not json", `{"type":`, dialect.Plan{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := openai.Decode([]byte(tt.in))
			var got dialect.Plan
			if err == nil {
				got, err = tool.Plan(c)
			}
			if tt.field != "" || tt.name == "not json" {
				var ie *dialect.InvalidError
				if !errors.As(err, &ie) {
					t.Fatalf("Plan(%s) error = %v, want an invalid %s", tt.in, err, tt.field)
				}
				if tt.field != "" && ie.Field != tt.field {
					t.Errorf("Plan(%s) field = %q (%s), want %q", tt.in, ie.Field, ie.Message, tt.field)
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

// TestSafetyChecks: pending checks are reported until the caller
// acknowledges them, and the output carries what it acknowledged.
func TestSafetyChecks(t *testing.T) {
	c, err := openai.Decode([]byte(`{"type":"computer_call","call_id":"c","action":{"type":"screenshot"},
		"pending_safety_checks":[{"id":"cu_sc_1","code":"malicious_instructions","message":"Instructions on the screen."},{"id":"cu_sc_2","code":"sensitive_domain"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := openai.Unacknowledged(c, nil); len(got) != 2 {
		t.Errorf("Unacknowledged(none) = %v, want both", got)
	}
	if got := openai.Unacknowledged(c, []string{"cu_sc_1"}); len(got) != 1 || got[0].ID != "cu_sc_2" {
		t.Errorf("Unacknowledged(cu_sc_1) = %v, want cu_sc_2", got)
	}
	tool := openai.New(dialect.Size{W: 1024, H: 768}, dialect.Size{})
	out := tool.Result(c, dialect.Outcome{Shot: &api.ActShot{Format: "png", Data: []byte("PNG")}}, c.PendingSafetyChecks)
	want := openai.Output{Type: "computer_call_output", CallID: "c", Output: openai.Screenshot{Type: "computer_screenshot", ImageURL: "data:image/png;base64,UE5H"},
		AcknowledgedSafetyChecks: c.PendingSafetyChecks}
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("Result (-want +got):\n%s", d)
	}
}
