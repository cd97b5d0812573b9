package openai_test

import (
	"testing"

	"github.com/acu-dev/acu/internal/dialect"
	"github.com/acu-dev/acu/internal/dialect/dialecttest"
	"github.com/acu-dev/acu/internal/dialect/openai"
)

// FuzzDecode feeds model output (a computer_call item) through Decode and
// Plan. Neither may panic; every refusal is a dialect.InvalidError (the
// model's mistake, sent back to it); an accepted plan points inside the
// screen the model saw. The seeds are TestPlan's inputs.
// Run it longer with: go test -run '^$' -fuzz FuzzDecode -fuzztime 10m ./internal/dialect/openai/
func FuzzDecode(f *testing.F) {
	call := func(action string) string {
		return `{"type":"computer_call","id":"cu_1","call_id":"call_1","action":` + action + `,"pending_safety_checks":[],"status":"completed"}`
	}
	for _, s := range []string{
		call(`{"type":"click","button":"left","x":100,"y":200}`),
		call(`{"type":"click","button":"right","x":0,"y":0}`),
		call(`{"type":"click","button":"wheel","x":1,"y":1}`),
		call(`{"type":"click","button":"back","x":5,"y":6}`),
		call(`{"type":"click","button":"forward","x":5,"y":6}`),
		call(`{"type":"click","button":"left","x":9,"y":9,"keys":["CTRL"]}`),
		call(`{"type":"double_click","x":1023,"y":767}`),
		call(`{"type":"drag","path":[{"x":1,"y":2},{"x":50,"y":60},{"x":100,"y":120}]}`),
		call(`{"type":"keypress","keys":["CTRL","L"]}`),
		call(`{"type":"keypress","keys":["ENTER"]}`),
		call(`{"type":"keypress","keys":["ArrowDown"]}`),
		call(`{"type":"keypress","keys":["SHIFT","TAB"]}`),
		call(`{"type":"move","x":10,"y":20}`),
		call(`{"type":"screenshot"}`),
		call(`{"type":"scroll","x":500,"y":400,"scroll_x":0,"scroll_y":300}`),
		call(`{"type":"scroll","x":500,"y":400,"scroll_x":0,"scroll_y":-20}`),
		call(`{"type":"scroll","x":500,"y":400,"scroll_x":-200,"scroll_y":0}`),
		call(`{"type":"type","text":"hello world"}`),
		call(`{"type":"wait"}`),
		`{"type":"computer_call","call_id":"c2","actions":[{"type":"click","button":"left","x":3,"y":4},{"type":"type","text":"hi"},{"type":"keypress","keys":["ENTER"]}]}`,
		`{"type":"message","call_id":"x"}`,
		`{"type":"computer_call","action":{"type":"screenshot"}}`,
		`{"type":"computer_call","call_id":"c"}`,
		call(`{"type":"swipe"}`),
		call(`{"type":"click","button":"side","x":1,"y":1}`),
		call(`{"type":"click","button":"left","x":1024,"y":1}`),
		call(`{"type":"click","button":"left","x":1}`),
		call(`{"type":"move","x":1.5,"y":1}`),
		call(`{"type":"drag","path":[{"x":1,"y":2}]}`),
		call(`{"type":"keypress","keys":[]}`),
		call(`{"type":"click","button":"left","x":1,"y":1,"keys":["A"]}`),
		call(`{"type":"type","text":""}`),
		call(`{"type":"type","text":"a","x":1,"y":1}`),
		call(`{"type":"scroll","x":1,"y":1,"scroll_x":0,"scroll_y":100000}`),
		`{"type":`,
	} {
		f.Add([]byte(s))
	}
	tool := openai.New(dialect.Size{W: 1024, H: 768}, dialect.Size{})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := openai.Decode(data)
		if dialecttest.Refused(t, "Decode", err) {
			return
		}
		p, err := tool.Plan(c)
		if dialecttest.Refused(t, "Plan", err) {
			return
		}
		if p.Wait < 0 {
			t.Errorf("Plan(%q).Wait = %v, want >= 0", data, p.Wait)
		}
		dialecttest.Inside(t, data, tool.Image, p.Act)
	})
}
