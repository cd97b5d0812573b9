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

// agentrelayExampleReply is the reply agentrelay's planner asks its model
// for, as its own prompt spells it (github.com/Divide-By-0/agentrelay,
// app/src/main/java/com/agentrelay/PlanningAgent.kt at commit
// 48e57587f7477f73a1a1b1467aa1686da8d0b3fd, planInitial): the "Respond
// with JSON" example, with the "splitScreen" field in the prompt's
// "Format:" line, both verbatim.
const agentrelayExampleReply = `{
  "approaches": [
    {
      "name": "Direct Navigation",
      "description": "Navigate directly via the settings menu",
      "app": "com.android.settings",
      "steps": ["Open settings", "Find the target option", "Toggle it"],
      "confidence": 0.8
    }
  ],
  "recommendedIndex": 0,
  "splitScreen": {"recommended": true, "topApp": "pkg.name", "bottomApp": "pkg.name",
"topTask": "description of what the top agent should do", "bottomTask": "description of what the bottom agent should do"}
}`

// agentrelay's SplitScreenRecommendation is read as agentrelay writes it:
// the top app is acu's first window and its task the first window agent's;
// agentrelay acts on it only when "recommended" is true, and so does acu.
func TestParsePlanAgentrelaySplitScreen(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  *Split
	}{
		{"agentrelay's example reply", agentrelayExampleReply, &Split{Windows: []string{"pkg.name", "pkg.name"},
			Tasks: []string{"description of what the top agent should do", "description of what the bottom agent should do"}}},
		{"recovery form", "```json\n" + `{"diagnosis":"d","approaches":[{"name":"A","steps":["s"]}],"recommendedIndex":0,` +
			`"splitScreen": {"recommended": true, "topApp": "Firefox", "bottomApp": "Mousepad", "topTask": "find the price", "bottomTask": "write it down"}}` + "\n```",
			&Split{Windows: []string{"Firefox", "Mousepad"}, Tasks: []string{"find the price", "write it down"}}},
		{"recommended as a string", `{"approaches":[{"name":"A"}],"splitScreen":{"recommended":"true","topApp":"a","bottomApp":"b"}}`,
			&Split{Windows: []string{"a", "b"}}},
		{"one task only: tiling without window agents", `{"approaches":[{"name":"A"}],"splitScreen":{"recommended":true,"topApp":"a","bottomApp":"b","topTask":"t"}}`,
			&Split{Windows: []string{"a", "b"}}},
		{"not recommended", `{"approaches":[{"name":"A"}],"splitScreen":{"recommended":false,"topApp":"a","bottomApp":"b","topTask":"t","bottomTask":"u"}}`, nil},
		{"no bottom app", `{"approaches":[{"name":"A"}],"splitScreen":{"recommended":true,"topApp":"a","topTask":"t","bottomTask":"u"}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parsePlan(tt.reply)
			if err != nil {
				t.Fatalf("parsePlan error %v", err)
			}
			if d := cmp.Diff(tt.want, p.Split); d != "" {
				t.Errorf("parsePlan(%s).Split (-want +got):\n%s", tt.name, d)
			}
		})
	}
	p, err := parsePlan(agentrelayExampleReply)
	if err != nil {
		t.Fatal(err)
	}
	if a := p.recommended(); a.Name != "Direct Navigation" || !cmp.Equal(a.Steps, []string{"Open settings", "Find the target option", "Toggle it"}) {
		t.Errorf("parsePlan(agentrelay's example).recommended() = %+v, want Direct Navigation with its three steps", a)
	}
}
