package taskbench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBuiltinSuite(t *testing.T) {
	ts, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) < 25 {
		t.Errorf("%d built-in tasks, want at least 25", len(ts))
	}
	tags := map[string]bool{}
	for _, task := range ts {
		for _, tag := range task.Tags {
			tags[tag] = true
		}
		for name, v := range task.Files {
			if _, err := task.fileContent(v); err != nil {
				t.Errorf("%s: file %s: %v", task.ID, name, err)
			}
		}
		if task.CI && len(task.Script) == 0 {
			t.Errorf("%s is in the CI subset without a script", task.ID)
		}
	}
	// The areas the issue asks for.
	for _, tag := range []string{"zenity", "file-selection", "editor", "find-replace", "save-as", "terminal", "browser", "multi-page",
		"calculator", "spreadsheet", "file-manager", "settings", "scroll", "wait", "no-a11y"} {
		if !tags[tag] {
			t.Errorf("no task tagged %q", tag)
		}
	}
}

func TestLoadRefusesBadFiles(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"unknown field", `{"id":"a","prompt":"p","timeLimit":"1m","stepLimit":3,"setup":[{"run":["true"]}],"check":{"kind":"file","path":"f","equals":"x"},"prompts":"x"}`, `unknown field "prompts"`},
		{"no limits", `{"id":"a","prompt":"p","setup":[{"run":["true"]}],"check":{"kind":"file","path":"f","equals":"x"}}`, "no timeLimit"},
		{"bad duration", `{"id":"a","prompt":"p","timeLimit":"soon","stepLimit":3,"setup":[{"run":["true"]}],"check":{"kind":"file","path":"f","equals":"x"}}`, `duration "soon"`},
		{"no condition", `{"id":"a","prompt":"p","timeLimit":"1m","stepLimit":3,"setup":[{"run":["true"]}],"check":{"kind":"file","path":"f"}}`, "no condition"},
		{"stdout of nothing", `{"id":"a","prompt":"p","timeLimit":"1m","stepLimit":3,"setup":[{"run":["true"]}],"check":{"kind":"stdout","process":"x","equals":"y"}}`, `process "x"`},
		{"page without browser", `{"id":"a","prompt":"p","timeLimit":"1m","stepLimit":3,"setup":[{"run":["true"]}],"check":{"kind":"page","expr":"1","equals":"1"}}`, "browser"},
		{"two commands", `{"id":"a","prompt":"p","timeLimit":"1m","stepLimit":3,"setup":[{"run":["true"],"shell":"true"}],"check":{"kind":"file","path":"f","equals":"x"}}`, "exactly one of run, shell or browser"},
		{"file outside", `{"id":"a","prompt":"p","timeLimit":"1m","stepLimit":3,"files":{"../x":"y"},"setup":[{"run":["true"]}],"check":{"kind":"file","path":"f","equals":"x"}}`, "inside $WORK"},
		{"bad id", `{"id":"A B","prompt":"p","timeLimit":"1m","stepLimit":3,"setup":[{"run":["true"]}],"check":{"kind":"file","path":"f","equals":"x"}}`, "lower-case"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "t.json"), []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "t.json") {
				t.Errorf("Load = %v, want an error naming t.json and %q", err, tc.want)
			}
		})
	}
	dir := t.TempDir()
	ok := `{"id":"a","prompt":"p","timeLimit":"1m","stepLimit":3,"setup":[{"run":["true"]}],"check":{"kind":"file","path":"f","equals":"x"}}`
	os.WriteFile(filepath.Join(dir, "1.json"), []byte(ok), 0o644)
	os.WriteFile(filepath.Join(dir, "2.json"), []byte(ok), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `id "a" already used by 1.json`) {
		t.Errorf("duplicate ids: %v", err)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.json") {
		t.Errorf("empty directory: %v", err)
	}
}

func TestMatch(t *testing.T) {
	eq := "Ada"
	for _, tc := range []struct {
		c    Check
		got  string
		pass bool
	}{
		{Check{Equals: &eq}, "Ada", true},
		{Check{Equals: &eq}, "Ada Lovelace", false},
		{Check{Contains: "love"}, "Ada lovelace", true},
		{Check{Matches: `^\d+$`}, "12a", false},
		{Check{Lacks: "colour"}, "color", true},
		{Check{Lacks: "colour", Contains: "color"}, "colour color", false},
	} {
		if err := tc.c.match("value", tc.got); (err == nil) != tc.pass {
			t.Errorf("%+v on %q: %v, want pass %v", tc.c, tc.got, err, tc.pass)
		}
	}
}

func TestReportCompareAndPublish(t *testing.T) {
	a := &Report{Engine: "run", Model: "m1", Tasks: []TaskResult{
		{ID: "one", Success: true, Steps: 3, WallSeconds: 2, CostUSD: 0.01},
		{ID: "two", Check: "stdout is \"\" | nothing", Steps: 5, WallSeconds: 4, CostUnknown: true},
		{ID: "three", Skipped: "zenity is not installed"},
	}}
	a.total()
	if a.Run != 2 || a.Succeeded != 1 || a.SuccessRate != 0.5 || a.Steps != 8 || !a.CostUnknown {
		t.Errorf("totals %+v", a)
	}
	var md bytes.Buffer
	a.Markdown(&md)
	for _, want := range []string{"**1/2 tasks (50%)**", "| one | pass | 3 |", "| two | fail | 5 |", `stdout is "" \| nothing`, "| three | skipped |", "≥$0.0100"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	b := &Report{Engine: "agent", Model: "m2", Tasks: []TaskResult{{ID: "two", Success: true, Steps: 1}, {ID: "four", Steps: 2}}}
	b.total()
	var cmp bytes.Buffer
	Compare(&cmp, a, b)
	for _, want := range []string{"| task | A: run m1 | B: agent m2 |", "| one | pass, 3 steps", "| — |", "| two | fail, 5 steps, 4.0 s, unknown | pass, 1 steps", "| four | — | fail", "**1/2 (50%)**"} {
		if !strings.Contains(cmp.String(), want) {
			t.Errorf("compare lacks %q:\n%s", want, cmp.String())
		}
	}

	doc := filepath.Join(t.TempDir(), "tasks.md")
	os.WriteFile(doc, []byte("# x\n\n## Results\n\n"+PublishBegin+"\n"+PublishEnd+"\n\nafter\n"), 0o644)
	if err := Publish(doc, a); err != nil {
		t.Fatal(err)
	}
	if err := Publish(doc, b); err != nil {
		t.Fatal(err)
	}
	a.Tasks[1].Success = true
	a.total()
	if err := Publish(doc, a); err != nil { // replaces a's block, keeps b's
		t.Fatal(err)
	}
	got, _ := os.ReadFile(doc)
	s := string(got)
	if strings.Count(s, "<!-- result run m1 -->") != 1 || strings.Count(s, "<!-- result agent m2 -->") != 1 || !strings.Contains(s, "**2/2 tasks (100%)**") ||
		strings.Contains(s, "model `m1`, 0001-01-01 00:00 UTC: **1/2") || !strings.HasSuffix(s, PublishEnd+"\n\nafter\n") {
		t.Errorf("published:\n%s", s)
	}
	os.WriteFile(doc, []byte("no markers"), 0o644)
	if err := Publish(doc, a); err == nil || !strings.Contains(err.Error(), "no results section") {
		t.Errorf("publish without markers: %v", err)
	}
}

func TestMissingProgramSkips(t *testing.T) {
	task := Task{ID: "x", Needs: []string{"acu-no-such-program"}, Prompt: "p", TimeLimit: Duration(time.Minute), StepLimit: 1}
	rep, err := Run(t.Context(), []Task{task}, Options{Engine: Orchestrator{}, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Tasks[0]; r.Skipped == "" || !strings.Contains(r.Skipped, "acu-no-such-program is not installed") || rep.Run != 0 {
		t.Errorf("result %+v, run %d: want skipped, not counted", r, rep.Run)
	}
}
