package orchestrator

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/llm"
)

// The seed's example, rendered by GuidanceText.
func TestGuidanceTextSeedFormat(t *testing.T) {
	p := &Plan{
		Approaches: []Approach{
			{Name: "Browser search", Description: "Open Chrome and navigate to google.com/maps"},
			{Name: "Use Google Maps search", Description: `Navigate directly to Google Maps and use the search bar to find "seville oranges near me"`,
				Steps: []string{"Open Google Maps", "Tap the search bar", "Type the query", "Review results"}},
		},
		Recommended: 1,
		Diagnosis:   "The agent was clicking on yogurt search results instead of searching for oranges",
	}
	want := `STRATEGIC GUIDANCE (from planning agent):
Recommended approach: Use Google Maps search
Navigate directly to Google Maps and use the search bar to find "seville oranges near me"
Steps:
  1. Open Google Maps
  2. Tap the search bar
  3. Type the query
  4. Review results

Alternative approaches if this fails:
- Browser search: Open Chrome and navigate to google.com/maps

Diagnosis: The agent was clicking on yogurt search results instead of searching for oranges`
	if got := p.GuidanceText(); got != want {
		t.Errorf("GuidanceText() diff (-want +got):\n%s", cmp.Diff(want, got))
	}
	if got := pinnedMessage("find oranges", p); got != "TASK: find oranges\n\n"+want {
		t.Errorf("pinnedMessage = %q", got)
	}
	if got := pinnedMessage("find oranges", nil); got != "TASK: find oranges" {
		t.Errorf("pinnedMessage(nil plan) = %q", got)
	}
}

func TestWindowKeepsPinnedAndLast12(t *testing.T) {
	var h []llm.Message
	for i := 1; i <= 20; i++ {
		role := "assistant"
		if i%2 == 0 {
			role = "user"
		}
		h = append(h, llm.Message{Role: role, Text: fmt.Sprint(i)})
	}
	got := window("TASK: x", h, "now")
	var texts []string
	for _, m := range got {
		texts = append(texts, m.Role+":"+m.Text)
	}
	want := []string{"user:TASK: x", "assistant:9", "user:10", "assistant:11", "user:12", "assistant:13", "user:14",
		"assistant:15", "user:16", "assistant:17", "user:18", "assistant:19", "user:20\n\nnow"}
	if d := cmp.Diff(want, texts); d != "" {
		t.Errorf("window (-want +got):\n%s", d)
	}
	// A window starting with a user message is joined to the pinned one.
	got = window("TASK: x", []llm.Message{{Role: "user", Text: "warn"}}, "now")
	if len(got) != 1 || got[0].Text != "TASK: x\n\nwarn\n\nnow" {
		t.Errorf("window = %+v, want one joined user message", got)
	}
}

func TestSameElementLoop(t *testing.T) {
	a := func(kind, target string) Action { return Action{Kind: kind, Target: target, Step: kind + " " + target} }
	for _, tc := range []struct {
		name string
		h    []Action
		want string
	}{
		{"none", nil, ""},
		{"twice", []Action{a("click", "btn_ok"), a("click", "btn_x"), a("click", "btn_ok")}, ""},
		{"three of five", []Action{a("click", "btn_ok"), a("type", "txt_1"), a("click", "btn_ok"), a("key", ""), a("click", "btn_ok")}, "btn_ok"},
		{"out of the window", []Action{a("click", "btn_ok"), a("click", "btn_ok"), a("click", "btn_ok"), a("type", "txt_1"), a("type", "txt_2"), a("type", "txt_3"), a("type", "txt_4"), a("type", "txt_5")}, ""},
		{"kinds differ", []Action{a("click", "txt_1"), a("type", "txt_1"), a("click", "txt_1")}, ""},
		{"keys without target", []Action{a("key", ""), a("key", ""), a("key", "")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := sameElementLoop(tc.h); got != tc.want {
				t.Errorf("sameElementLoop = %q, want %q", got, tc.want)
			}
		})
	}
	m := &elements.Map{Elements: []elements.Element{{ID: "btn_ok", Type: elements.TypeButton, Text: "OK", Source: elements.FromTree, Box: image.Rect(0, 0, 10, 10)}}}
	m.Get("btn_ok")
	h := []Action{a("click", "btn_ok"), a("click", "btn_ok"), a("click", "btn_ok")}
	got := actionHistoryContext(h, m)
	for _, want := range []string{"ACTION LOOP DETECTED: you acted on btn_ok 3 times", "btn_ok is disabled", "Dismiss it (key Escape)"} {
		if !strings.Contains(got, want) {
			t.Errorf("actionHistoryContext lacks %q:\n%s", want, got)
		}
	}
}

func TestWrongTask(t *testing.T) {
	for reason, want := range map[string]bool{
		"Wrong dialog: the agent filled the search box":   true,
		"the agent opened a different file":               true,
		"it typed the date instead of the name":           true,
		"the OK button has not been pressed yet":          false,
		"":                                                false,
		"the task is half done: the entry is still empty": false,
	} {
		if got := wrongTask(reason); got != want {
			t.Errorf("wrongTask(%q) = %v, want %v", reason, got, want)
		}
	}
}

func TestParseFast(t *testing.T) {
	r, err := parseFast("Sure!\n```json\n{\"thought\":\"t\",\"steps\":[{\"action\":\"type\",\"target\":\"txt_1\",\"text\":\"Ada\"},{\"action\":\"click\",\"target\":\"btn_ok\"},{\"action\":\"key\",\"keys\":\"Return\"}],\"complete\":false}\n```")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Steps {
		st, err := s.step()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, st.String())
	}
	want := []string{`type "Ada" into txt_1`, "click btn_ok", "press Return"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	// The pointer steps of seed 003's rest.
	r, err = parseFast(`{"steps":[{"action":"double_click","element":"itm_a"},{"action":"right_click","target":"txt_1"},` +
		`{"action":"scroll","target":"lst_1","direction":"Up","amount":3},{"action":"scroll"},{"action":"drag","target":"itm_a","to":"itm_b"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, s := range r.Steps {
		st, err := s.step()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, st.String())
	}
	want = []string{"double_click itm_a", "right_click txt_1", "scroll up 3 in lst_1", "scroll down 5 in the screen", "drag itm_a to itm_b"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("pointer steps (-want +got):\n%s", d)
	}
	for _, bad := range []fastStep{{Action: "click"}, {Action: "key"}, {Action: "drag", Target: "x"}, {Action: "double_click"}, {Action: "hover", Target: "x"}} {
		if _, err := bad.step(); err == nil {
			t.Errorf("step(%+v) = nil error", bad)
		}
	}
	if _, err := parseFast("no json here"); err == nil {
		t.Error("parseFast(prose) = nil error")
	}
}

func TestParsePlan(t *testing.T) {
	p, err := parsePlan(`{"approaches":[{"name":"A","description":"d","steps":["s"]}],"recommended":5,"split":{"windows":["one"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	if p.recommended().Name != "A" || p.Split != nil {
		t.Errorf("plan = %+v, want approach A (out-of-range index) and no one-window split", p)
	}
	if _, err := parsePlan(`{"approaches":[]}`); err == nil {
		t.Error("parsePlan(no approaches) = nil error")
	}
	p, err = parsePlan(`{"approaches":[{"name":"A"}],"split":{"windows":["Firefox","Terminal"],"reason":"copy between them"}}`)
	if err != nil || p.Split == nil || p.Split.Windows[1] != "Terminal" {
		t.Errorf("parsePlan(split) = %+v, %v", p, err)
	}
}

func TestDesktopApps(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"gedit.desktop":  "[Desktop Entry]\nName=Text Editor\nName[de]=Texteditor\nComment=Edit text files\nExec=/usr/bin/gedit %U\nType=Application\n",
		"hidden.desktop": "[Desktop Entry]\nName=Helper\nExec=helper\nType=Application\nNoDisplay=true\n",
		"link.desktop":   "[Desktop Entry]\nName=Docs\nType=Link\nURL=https://example.invalid\n",
		"term.desktop":   "# comment\n[Desktop Entry]\nType=Application\nName=XTerm\nExec=\"xterm\"\n[Desktop Action new]\nName=New Window\nExec=xterm -e bash\n",
		"notes.txt":      "Name=Not an entry\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := DesktopApps([]string{dir, filepath.Join(dir, "missing")})
	want := []App{{Name: "Text Editor", Exec: "gedit", Comment: "Edit text files"}, {Name: "XTerm", Exec: "xterm"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("DesktopApps (-want +got):\n%s", d)
	}
	if l := got[0].line(); l != "- Text Editor (gedit): Edit text files" {
		t.Errorf("app line %q", l)
	}
}

func FuzzParseFast(f *testing.F) {
	f.Add(`{"thought":"t","steps":[{"action":"click","target":"btn_ok"}],"complete":false}`)
	f.Add("```json\n{\"steps\":[{\"action\":\"key\",\"keys\":\"Return\"}],\"complete\":true}\n```")
	f.Add(`{"steps":"not a list"}`)
	f.Add(`{"thought":"t","steps":[{"action":"click","element":"btn_ok"},{"action":"complete","summary":"done"}]}`)
	f.Add(`{"steps":[{"action":"complete"}],"complete":false}`)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseFast(s)
		if err != nil {
			return
		}
		for _, st := range r.Steps {
			_, _ = st.step()
		}
	})
}

func FuzzParsePlan(f *testing.F) {
	f.Add(`{"approaches":[{"name":"A","description":"d","steps":["s"],"confidence":0.5}],"recommended":0,"diagnosis":"x"}`)
	f.Add(`{"approaches":[{"name":"A"}],"recommended":-3,"split":{"windows":["a","b"]}}`)
	f.Add(agentrelayPlan)
	f.Add(`{"approaches":[{"name":"A","stepsSummary":"x\ny"}],"recommendedIndex":"A","splitScreen":{"apps":["a","b"]}}`)
	f.Add(`{"approaches":[{"name":"A"}],"recommendedIndex":1e300}`)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePlan(s)
		if err != nil {
			return
		}
		_ = p.GuidanceText()
	})
}

func FuzzDesktopEntry(f *testing.F) {
	f.Add("[Desktop Entry]\nName=XTerm\nExec=xterm\nType=Application\n")
	f.Add("[Desktop Entry]\nExec=\nType=Application\nName=\n")
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := parseDesktopEntry(strings.NewReader(s))
		if ok && a.Name == "" {
			t.Errorf("entry accepted without a name: %+v", a)
		}
	})
}

// The safety-checker directives of the stale-UI check: a new window, a
// closed window and a vanished element the plan's steps name each call
// for an action; other changes do not.
func TestStaleDirectives(t *testing.T) {
	p, err := parsePlan(`{"approaches":[{"name":"Save","description":"d","steps":["Click Save","Type the name"]}],"recommended":0}`)
	if err != nil {
		t.Fatal(err)
	}
	d := elements.Diff{
		Added:   []elements.Element{{ID: "win_overwrite", Type: elements.TypeWindow, Text: "Overwrite?"}, {ID: "btn_yes", Type: elements.TypeButton, Text: "Yes"}},
		Removed: []elements.Element{{ID: "btn_save", Type: elements.TypeButton, Text: "Save"}, {ID: "btn_help", Type: elements.TypeButton, Text: "Help"}, {ID: "win_old", Type: elements.TypeWindow, Text: "Old"}},
		Changed: []elements.Change{{ID: "txt_1", What: []string{"value"}}},
	}
	got := staleDirectives(d, p)
	want := []string{
		`A new window "Overwrite?" opened (win_overwrite): answer or close it first if it blocks the task.`,
		`"Save", which the plan's steps name, is no longer on screen: find another way.`,
		`The window "Old" closed: the plan's steps in it no longer apply.`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("directives (-want +got):\n%s", diff)
	}
}
