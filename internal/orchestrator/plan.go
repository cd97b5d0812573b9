package orchestrator

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/llm"
)

// Approach is one strategy the planning agent proposes.
type Approach struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Steps       []string `json:"steps"`
	Confidence  float64  `json:"confidence"`
}

// Split is the planner's recommendation to work in two windows side by
// side (the seed's split screen): the windows' titles (or application
// names) and what to do in each.
type Split struct {
	Windows []string `json:"windows"`
	Reason  string   `json:"reason,omitempty"`
	// Tasks are the two windows' parts of the task, for one agent per
	// window working in parallel; none keeps the split to tiling.
	Tasks []string `json:"tasks,omitempty"`
}

// Plan is the planning agent's answer (the seed's PlanningResult).
type Plan struct {
	Approaches  []Approach `json:"approaches"`
	Recommended int        `json:"recommended"`
	Diagnosis   string     `json:"diagnosis,omitempty"` // recovery plans: the root cause of the failures
	Split       *Split     `json:"split,omitempty"`
	Iteration   int        `json:"iteration"` // when the plan was asked for
	Kind        string     `json:"kind"`      // PlanInitial, PlanRecovery or PlanLastResort
	// Stale says how the screen changed while a blocking plan was made
	// (the seed's stale-UI check); the guidance tells the fast agent, as
	// long as the screen still shows the change (refreshStale).
	Stale string `json:"stale,omitempty"`
	// change is the part of that change the screen still shows.
	change *elements.Diff
}

// Plan kinds.
const (
	PlanInitial    = "initial"
	PlanRecovery   = "recovery"
	PlanLastResort = "last_resort"
)

// recommended returns the recommended approach, or nil.
func (p *Plan) recommended() *Approach {
	if p == nil || len(p.Approaches) == 0 {
		return nil
	}
	i := p.Recommended
	if i < 0 || i >= len(p.Approaches) {
		i = 0
	}
	return &p.Approaches[i]
}

// GuidanceText renders the plan for the fast agent in the seed's
// toGuidanceText() format:
//
//	STRATEGIC GUIDANCE (from planning agent):
//	Recommended approach: Use Google Maps search
//	Navigate directly to Google Maps and use the search bar
//	Steps:
//	  1. Open Google Maps
//	  2. Tap the search bar
//
//	Alternative approaches if this fails:
//	- Browser search: Open Chrome and navigate to google.com/maps
//
//	Diagnosis: The agent was clicking on yogurt search results
func (p *Plan) GuidanceText() string {
	rec := p.recommended()
	if rec == nil {
		if p != nil && p.Diagnosis != "" {
			return "STRATEGIC GUIDANCE (from planning agent):\nDiagnosis: " + p.Diagnosis
		}
		return ""
	}
	var b strings.Builder
	b.WriteString("STRATEGIC GUIDANCE (from planning agent):\n")
	fmt.Fprintf(&b, "Recommended approach: %s\n", rec.Name)
	if rec.Description != "" {
		b.WriteString(rec.Description)
		b.WriteByte('\n')
	}
	if len(rec.Steps) > 0 {
		b.WriteString("Steps:\n")
		for i, s := range rec.Steps {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, s)
		}
	}
	alts := 0
	for i := range p.Approaches {
		if &p.Approaches[i] == rec {
			continue
		}
		if alts == 0 {
			b.WriteString("\nAlternative approaches if this fails:\n")
		}
		alts++
		fmt.Fprintf(&b, "- %s: %s\n", p.Approaches[i].Name, p.Approaches[i].Description)
	}
	if p.Diagnosis != "" {
		fmt.Fprintf(&b, "\nDiagnosis: %s\n", p.Diagnosis)
	}
	if p.Stale != "" {
		fmt.Fprintf(&b, "\nWARNING: %s\n", p.Stale)
	}
	return strings.TrimRight(b.String(), "\n")
}

// pinnedMessage is the first message of the fast agent's conversation:
// the task, and the plan's guidance once there is one.
func pinnedMessage(task string, p *Plan) string {
	g := p.GuidanceText()
	if g == "" {
		return "TASK: " + task
	}
	return "TASK: " + task + "\n\n" + g
}

const plannerSystem = `You are the planning agent of a desktop automation system on a Linux X11 desktop.
A fast agent acts on the screen step by step through an element map (ids like btn_ok, txt_1);
you give it strategy. Propose 2-3 approaches, best first, each with a short name, a description,
a few concrete steps and a confidence 0..1.
If the task needs two applications at once, you may recommend working in two windows side by side.
Reply with one JSON object only:
{"approaches":[{"name":"...","description":"...","steps":["..."],"confidence":0.8}],
 "recommended":0,
 "diagnosis":"(recovery only) why the previous attempts failed",
 "split":null or {"windows":["window title A","window title B"],"reason":"...","tasks":["what to do in A","what to do in B"]}}
With "tasks", one agent per window works on its part in parallel; leave "tasks" out when the two parts depend on each other step by step.`

// planRequest is what a planning call needs.
type planRequest struct {
	kind      string
	task      string
	mapText   string
	apps      []App
	failures  []string
	previous  *Plan
	iteration int
}

func (r planRequest) prompt() string {
	var b strings.Builder
	fmt.Fprintf(&b, "TASK: %s\n\n", r.task)
	switch r.kind {
	case PlanInitial:
		b.WriteString("Plan how to do this task. The fast agent has already started acting.\n\n")
	case PlanRecovery:
		fmt.Fprintf(&b, "RECOVERY at iteration %d: the fast agent is not making progress. Diagnose why and give a new strategy.\n\n", r.iteration)
	case PlanLastResort:
		fmt.Fprintf(&b, "LAST RESORT at iteration %d: only a few iterations are left. Give the most direct way to finish.\n\n", r.iteration)
	}
	if len(r.failures) > 0 {
		b.WriteString("Failures so far:\n")
		for _, f := range r.failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		b.WriteByte('\n')
	}
	if r.previous != nil {
		if g := r.previous.GuidanceText(); g != "" {
			fmt.Fprintf(&b, "Previous plan (it did not work):\n%s\n\n", g)
		}
	}
	if len(r.apps) > 0 {
		b.WriteString("Installed applications:\n")
		for _, a := range r.apps {
			b.WriteString(a.line())
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	b.WriteString("Current element map:\n")
	b.WriteString(r.mapText)
	return b.String()
}

// planWire is a plan as models write it: acu's own prompt form
// ("recommended", "split", "steps") or agentrelay's (seed 003:
// "recommendedIndex", "splitScreen", "stepsSummary"). Both indexes are
// 0-based: agentrelay's recommendedIndex indexes its approaches list
// (approaches[recommendedIndex]), as acu's recommended does.
type planWire struct {
	Approaches       []approachWire  `json:"approaches"`
	Recommended      json.RawMessage `json:"recommended"`
	RecommendedIndex json.RawMessage `json:"recommendedIndex"`
	Diagnosis        string          `json:"diagnosis"`
	Split            *splitWire      `json:"split"`
	SplitScreen      *splitWire      `json:"splitScreen"`
}

type approachWire struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Steps        json.RawMessage `json:"steps"`
	StepsSummary json.RawMessage `json:"stepsSummary"`
	Confidence   float64         `json:"confidence"`
}

// splitWire is acu's {"windows":[a,b]}, or agentrelay's
// SplitScreenRecommendation as its planner writes it (PlanningAgent.kt:
// {"recommended": true, "topApp", "bottomApp", "topTask", "bottomTask"}),
// or two named apps {"primaryApp", "secondaryApp"} (acu's reading before).
type splitWire struct {
	Windows      []string        `json:"windows"`
	Apps         []string        `json:"apps"`
	Recommended  json.RawMessage `json:"recommended"`
	TopApp       string          `json:"topApp"`
	BottomApp    string          `json:"bottomApp"`
	TopTask      string          `json:"topTask"`
	BottomTask   string          `json:"bottomTask"`
	PrimaryApp   string          `json:"primaryApp"`
	SecondaryApp string          `json:"secondaryApp"`
	Reason       string          `json:"reason"`
	Rationale    string          `json:"rationale"`
	Tasks        []string        `json:"tasks"`
}

// declined reports an agentrelay recommendation that is present but not
// true: agentrelay acts on a split only when "recommended" is true, and
// so does acu.
func (w *splitWire) declined() bool {
	if len(w.Recommended) == 0 || string(w.Recommended) == "null" {
		return false
	}
	var b bool
	if json.Unmarshal(w.Recommended, &b) == nil {
		return !b
	}
	var s string
	return json.Unmarshal(w.Recommended, &s) != nil || !strings.EqualFold(strings.TrimSpace(s), "true")
}

func (w *splitWire) split() *Split {
	if w == nil || w.declined() {
		return nil
	}
	s := &Split{Windows: w.Windows, Reason: firstNonEmpty(w.Reason, w.Rationale)}
	tasks := w.Tasks
	if len(s.Windows) == 0 {
		s.Windows = w.Apps
	}
	if len(s.Windows) == 0 && w.TopApp != "" && w.BottomApp != "" {
		// agentrelay's top half is acu's first window, its bottom the second.
		s.Windows = []string{w.TopApp, w.BottomApp}
		if len(tasks) == 0 {
			tasks = []string{w.TopTask, w.BottomTask}
		}
	}
	if len(s.Windows) == 0 && w.PrimaryApp != "" && w.SecondaryApp != "" {
		s.Windows = []string{w.PrimaryApp, w.SecondaryApp}
	}
	if len(s.Windows) != 2 {
		return nil
	}
	if len(tasks) == 2 && strings.TrimSpace(tasks[0]) != "" && strings.TrimSpace(tasks[1]) != "" {
		s.Tasks = tasks
	}
	return s
}

// stepList reads a list of steps, or one summary string split into lines.
func stepList(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var l []string
	if json.Unmarshal(raw, &l) == nil {
		return l
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			l = append(l, line)
		}
	}
	return l
}

// index reads a 0-based approach index: a number, a number in a string, or
// an approach's name. ok is false when raw is absent or names nothing.
func index(raw json.RawMessage, approaches []Approach) (int, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return int(f), f == float64(int(f))
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, false
	}
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	for i, a := range approaches {
		if strings.EqualFold(a.Name, s) {
			return i, true
		}
	}
	return 0, false
}

// parsePlan reads the planner's reply, in acu's form or agentrelay's.
// When a reply carries both recommended and recommendedIndex, acu's own
// field wins: it is the form acu's prompt asks for.
func parsePlan(text string) (*Plan, error) {
	raw, err := llm.ExtractJSON(text)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	var w planWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	p := Plan{Diagnosis: w.Diagnosis}
	for _, a := range w.Approaches {
		steps := stepList(a.Steps)
		if steps == nil {
			steps = stepList(a.StepsSummary)
		}
		p.Approaches = append(p.Approaches, Approach{Name: a.Name, Description: a.Description, Steps: steps, Confidence: a.Confidence})
	}
	if len(p.Approaches) == 0 && p.Diagnosis == "" {
		return nil, fmt.Errorf("read plan: no approaches")
	}
	if i, ok := index(w.Recommended, p.Approaches); ok {
		p.Recommended = i
	} else if i, ok := index(w.RecommendedIndex, p.Approaches); ok {
		p.Recommended = i
	}
	p.Split = w.Split.split()
	if p.Split == nil {
		p.Split = w.SplitScreen.split()
	}
	return &p, nil
}
