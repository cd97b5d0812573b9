package orchestrator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// agentrelay (seed 003's origin) prompts its models for other field names;
// acu reads both forms and never one as the other.

func TestParseFastForms(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  fastReply
	}{
		{"acu target", `{"thought":"t","steps":[{"action":"click","target":"btn_ok"}],"complete":false}`,
			fastReply{Thought: "t", Steps: []fastStep{{Action: "click", Target: "btn_ok"}}}},
		{"agentrelay element", `{"thought":"t","steps":[{"action":"type","element":"txt_1","text":"Ada"},{"action":"click","element":"btn_ok"}]}`,
			fastReply{Thought: "t", Steps: []fastStep{{Action: "type", Target: "txt_1", Text: "Ada"}, {Action: "click", Target: "btn_ok"}}}},
		{"target wins over element", `{"steps":[{"action":"click","target":"btn_a","element":"btn_b"}]}`,
			fastReply{Steps: []fastStep{{Action: "click", Target: "btn_a"}}}},
		{"acu complete flag", `{"steps":[],"complete":true,"summary":"sent"}`,
			fastReply{Steps: nil, Complete: true, Summary: "sent"}},
		{"agentrelay complete step", `{"thought":"done","steps":[{"action":"complete","summary":"the mail is sent"}]}`,
			fastReply{Thought: "done", Complete: true, Summary: "the mail is sent"}},
		{"complete step after a click", `{"steps":[{"action":"click","element":"btn_send"},{"action":"COMPLETE","reason":"sent"}]}`,
			fastReply{Steps: []fastStep{{Action: "click", Target: "btn_send"}}, Complete: true, Summary: "sent"}},
		{"reply summary kept", `{"steps":[{"action":"complete","summary":"step"}],"summary":"reply"}`,
			fastReply{Complete: true, Summary: "reply"}},
		{"no complete", `{"steps":[{"action":"key","keys":"Return"}]}`,
			fastReply{Steps: []fastStep{{Action: "key", Keys: "Return"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFast(tt.reply)
			if err != nil {
				t.Fatalf("parseFast(%s) error %v", tt.reply, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("parseFast(%s) (-want +got):\n%s", tt.reply, d)
			}
			for _, s := range got.Steps {
				if _, err := s.step(); err != nil {
					t.Errorf("step %+v: %v", s, err)
				}
			}
		})
	}
}

// agentrelayPlan is a planning reply in agentrelay's PlanningResult shape:
// recommendedIndex indexes approaches from 0, so 1 is "Browser search".
const agentrelayPlan = `{
  "approaches": [
    {"name": "Google Maps search", "description": "Open Maps and search", "stepsSummary": ["Open Google Maps", "Tap the search bar"], "confidence": 0.6},
    {"name": "Browser search", "description": "Open Chrome and navigate to google.com/maps", "stepsSummary": ["Open Chrome", "Type the address"], "confidence": 0.8}
  ],
  "recommendedIndex": 1,
  "splitScreen": {"primaryApp": "Firefox", "secondaryApp": "Terminal", "reason": "copy between them"}
}`

func TestParsePlanForms(t *testing.T) {
	tests := []struct {
		name      string
		reply     string
		wantIndex int
		wantName  string
		wantSteps []string
		wantSplit *Split
	}{
		{"acu form", `{"approaches":[{"name":"A","steps":["a1"]},{"name":"B","steps":["b1"]}],"recommended":1,"split":{"windows":["Firefox","Terminal"]}}`,
			1, "B", []string{"b1"}, &Split{Windows: []string{"Firefox", "Terminal"}}},
		{"acu form, first", `{"approaches":[{"name":"A"},{"name":"B"}],"recommended":0}`, 0, "A", nil, nil},
		{"agentrelay form", agentrelayPlan, 1, "Browser search", []string{"Open Chrome", "Type the address"},
			&Split{Windows: []string{"Firefox", "Terminal"}, Reason: "copy between them"}},
		{"agentrelay index 0", `{"approaches":[{"name":"A"},{"name":"B"}],"recommendedIndex":0}`, 0, "A", nil, nil},
		{"both: acu's field wins", `{"approaches":[{"name":"A"},{"name":"B"}],"recommended":0,"recommendedIndex":1}`, 0, "A", nil, nil},
		{"index as a string", `{"approaches":[{"name":"A"},{"name":"B"}],"recommendedIndex":"1"}`, 1, "B", nil, nil},
		{"index as a name", `{"approaches":[{"name":"A"},{"name":"B"}],"recommended":"b"}`, 1, "B", nil, nil},
		{"steps summary as text", `{"approaches":[{"name":"A","stepsSummary":"1. Open\n2. Search"}]}`, 0, "A", []string{"1. Open", "2. Search"}, nil},
		{"splitScreen windows", `{"approaches":[{"name":"A"}],"splitScreen":{"windows":["x","y"]}}`, 0, "A", nil, &Split{Windows: []string{"x", "y"}}},
		{"one-app splitScreen dropped", `{"approaches":[{"name":"A"}],"splitScreen":{"primaryApp":"x"}}`, 0, "A", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parsePlan(tt.reply)
			if err != nil {
				t.Fatalf("parsePlan error %v", err)
			}
			if p.Recommended != tt.wantIndex || p.recommended().Name != tt.wantName {
				t.Errorf("parsePlan recommended = %d (%s), want %d (%s)", p.Recommended, p.recommended().Name, tt.wantIndex, tt.wantName)
			}
			if d := cmp.Diff(tt.wantSteps, p.recommended().Steps); d != "" {
				t.Errorf("steps (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantSplit, p.Split); d != "" {
				t.Errorf("split (-want +got):\n%s", d)
			}
		})
	}
}
