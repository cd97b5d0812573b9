package agent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Output
	}{
		{"strict", `{"observation":"o","bboxes":[{"x1":1,"y1":2,"x2":3,"y2":4}],"actions":[{"name":"Click","x1":10,"y1":20}]}`,
			Output{Observation: "o", BBoxes: []Box{{1, 2, 3, 4}}, Actions: []Action{{Name: "click", X1: 10, Y1: 20}}, Mode: ParsedJSON}},
		{"fenced", "Here you go:\n```json\n{\"observation\":\"o\",\"actions\":[{\"name\":\"drag\",\"x1\":1,\"y1\":2,\"x2\":3,\"y2\":4}]}\n```",
			Output{Observation: "o", BBoxes: []Box{}, Actions: []Action{{Name: "drag", X1: 1, Y1: 2, X2: 3, Y2: 4}}, Mode: ParsedExtracted}},
		{"text", "I cannot see the screen.", Output{Observation: "I cannot see the screen.", BBoxes: []Box{}, Actions: []Action{}, Mode: ParsedText}},
		{"clamped", `{"observation":"","actions":[{"name":"click","x1":-5,"y1":1500.6},{"name":"move","x":"250","y":"750"}],"bboxes":[{"x1":900,"y1":900,"x2":-1,"y2":2000}]}`,
			Output{BBoxes: []Box{{0, 900, 900, 1000}}, Actions: []Action{{Name: "click", X1: 0, Y1: 1000}, {Name: "move", X1: 250, Y1: 750}}, Mode: ParsedJSON}},
		{"rejected", `{"observation":"o","actions":[{"name":"teleport","x1":1,"y1":1},{"name":"drag","x1":1,"y1":1},{"name":"type","text":""},{"name":"key","keys":"ctrl+l"},{"name":"scroll","x1":5,"y1":5,"dy":3}]}`,
			Output{Observation: "o", BBoxes: []Box{}, Actions: []Action{{Name: "key", Keys: "ctrl+l"}, {Name: "scroll", X1: 5, Y1: 5, DY: 3}}, Mode: ParsedJSON,
				Rejected: []Rejected{
					{Index: 0, Kind: "action", Name: "teleport", Reason: `unknown action "teleport": use one of move, click, right_click, double_click, drag, scroll, type, key`},
					{Index: 1, Kind: "action", Name: "drag", Reason: "drag needs x1, y1, x2 and y2"},
					{Index: 2, Kind: "action", Name: "type", Reason: "type needs a non-empty text"},
				}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Parse(tt.in)); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	acts := strings.Repeat(`{"name":"click","x1":1,"y1":1},`, 9)
	boxes := strings.Repeat(`{"x1":1,"y1":1,"x2":2,"y2":2},`, 10)
	out := Parse(`{"observation":"o","actions":[` + strings.TrimSuffix(acts, ",") + `],"bboxes":[` + strings.TrimSuffix(boxes, ",") + `]}`)
	if len(out.Actions) != MaxActions || len(out.BBoxes) != MaxBBoxes || len(out.Rejected) != 9-MaxActions+10-MaxBBoxes {
		t.Errorf("Parse over the limits: %d actions, %d bboxes, %d rejected", len(out.Actions), len(out.BBoxes), len(out.Rejected))
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"observation":"o","bboxes":[{"x1":1,"y1":2,"x2":3,"y2":4}],"actions":[{"name":"click","x1":10,"y1":20}]}`,
		"text {\"a\":1} more {", `{"actions":[{"name":"drag","x1":5,"y1":5,"x2":0,"y2":-3}]}`, `{"actions":[{"name":"scroll","direction":"up"}]}`, "{{{}}}", `{"observation":5}`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Parse(s)
		if len(out.Actions) > MaxActions || len(out.BBoxes) > MaxBBoxes {
			t.Fatalf("over the limits: %+v", out)
		}
		for _, a := range out.Actions {
			for _, v := range []int{a.X1, a.Y1, a.X2, a.Y2} {
				if v < 0 || v > 1000 {
					t.Fatalf("coordinate %d out of 0..1000 in %+v", v, a)
				}
			}
			if err := a.inputAction().Validate(); err != nil {
				t.Fatalf("Parse accepted %+v, which input rejects: %v", a, err)
			}
		}
		for _, b := range out.BBoxes {
			if b.X1 > b.X2 || b.Y1 > b.Y2 || b.X1 < 0 || b.Y2 > 1000 {
				t.Fatalf("bad bbox %+v", b)
			}
		}
	})
}
