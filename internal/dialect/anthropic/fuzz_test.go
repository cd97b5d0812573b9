package anthropic_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/dialect/anthropic"
	"github.com/acu-dev/acu/internal/dialect/dialecttest"
)

// FuzzDecode feeds model output (a tool_use block or its input alone)
// through Decode and Plan for every tool version. Neither may panic; every
// refusal is a dialect.InvalidError (the model's mistake, sent back to it);
// an accepted plan points inside the image the model saw and waits and
// holds no longer than acu's limits. The seeds are TestPlan's inputs.
// Run it longer with: go test -run '^$' -fuzz FuzzDecode -fuzztime 10m ./internal/dialect/anthropic/
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"action":"screenshot"}`,
		`{"action":"cursor_position"}`,
		`{"action":"left_click","coordinate":[640,360]}`,
		`{"action":"left_click"}`,
		`{"action":"left_click","coordinate":[10,20],"text":"shift"}`,
		`{"action":"right_click","coordinate":[0,0]}`,
		`{"action":"middle_click","coordinate":[1279,719]}`,
		`{"action":"double_click","coordinate":[5,5]}`,
		`{"action":"triple_click","coordinate":[5,5]}`,
		`{"action":"mouse_move","coordinate":[100,200]}`,
		`{"action":"left_mouse_down"}`,
		`{"action":"left_mouse_up","coordinate":[3,4]}`,
		`{"action":"left_click_drag","start_coordinate":[1,2],"coordinate":[300,400]}`,
		`{"action":"key","text":"ctrl+l"}`,
		`{"action":"key","text":"Return Return"}`,
		`{"action":"hold_key","text":"shift","duration":1.5}`,
		`{"action":"type","text":"Hello, world\n"}`,
		`{"action":"scroll","coordinate":[640,360],"scroll_direction":"down","scroll_amount":3}`,
		`{"action":"scroll","scroll_direction":"left","scroll_amount":2,"text":"ctrl"}`,
		`{"action":"wait","duration":2}`,
		`{"action":"zoom","region":[0,0,640,360]}`,
		`{"type":"tool_use","id":"toolu_1","name":"computer","input":{"action":"screenshot"}}`,
		`{}`,
		`{"action":"swipe"}`,
		`{"action":`,
		`{"type":"text","text":"hi"}`,
		`{"action":"left_click","coordinate":[1280,10]}`,
		`{"action":"left_click","coordinate":[-1,10]}`,
		`{"action":"left_click","coordinate":[10]}`,
		`{"action":"mouse_move","coordinate":[10.5,3]}`,
		`{"action":"left_click","coordinate":"10,20"}`,
		`{"action":"mouse_move"}`,
		`{"action":"left_click_drag","coordinate":[1,2]}`,
		`{"action":"key"}`,
		`{"action":"type","text":""}`,
		`{"action":"type","text":"a","coordinate":[1,1]}`,
		`{"action":"scroll","scroll_amount":3}`,
		`{"action":"scroll","scroll_direction":"sideways","scroll_amount":3}`,
		`{"action":"scroll","scroll_direction":"up"}`,
		`{"action":"scroll","scroll_direction":"up","scroll_amount":1000}`,
		`{"action":"hold_key","text":"a","duration":60}`,
		`{"action":"wait"}`,
		`{"action":"wait","duration":-1}`,
		`{"action":"zoom","region":[100,100,50,50]}`,
		`{"action":"zoom","region":[1,2,3]}`,
		`{"action":"screenshot","text":"x"}`,
	} {
		f.Add([]byte(s))
	}
	screen := dialect.Size{W: 1920, H: 1080}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, in, err := anthropic.Decode(data)
		if dialecttest.Refused(t, "Decode", err) {
			return
		}
		for v := range anthropic.Actions {
			tool := anthropic.New(screen, dialect.Size{})
			tool.Version = v
			p, err := tool.Plan(in)
			if dialecttest.Refused(t, "Plan", err) {
				continue
			}
			if p.Wait < 0 || p.Wait > anthropic.MaxWait {
				t.Errorf("%s: Plan(%q).Wait = %v, want 0..%v", v, data, p.Wait, anthropic.MaxWait)
			}
			if p.Act == nil {
				continue
			}
			dialecttest.Inside(t, data, tool.Image, p.Act)
			for _, a := range p.Act.Actions {
				if a.HoldMs < 0 || a.HoldMs > int(anthropic.MaxHold.Milliseconds()) {
					t.Errorf("%s: Plan(%q) holds %d ms, want 0..%d", v, data, a.HoldMs, anthropic.MaxHold.Milliseconds())
				}
			}
		}
	})
}
