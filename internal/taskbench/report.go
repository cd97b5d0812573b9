package taskbench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Report is one run of the suite.
type Report struct {
	Engine  string       `json:"engine"`
	Model   string       `json:"model"`
	Started time.Time    `json:"started"`
	Tasks   []TaskResult `json:"tasks"`
	// Totals over the tasks run (skipped ones excluded).
	Run          int     `json:"run"`
	Succeeded    int     `json:"succeeded"`
	SuccessRate  float64 `json:"successRate"`
	Steps        int     `json:"steps"`
	WallSeconds  float64 `json:"wallSeconds"`
	TaskSeconds  float64 `json:"taskSeconds"`
	ModelSeconds float64 `json:"modelSeconds"`
	CostUSD      float64 `json:"costUsd"`
	CostUnknown  bool    `json:"costUnknown,omitempty"`
}

// TaskResult is one task's outcome: Success is the checker's verdict.
type TaskResult struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Tags         []string `json:"tags,omitempty"`
	Success      bool     `json:"success"`
	Skipped      string   `json:"skipped,omitempty"`
	Error        string   `json:"error,omitempty"` // the harness's: setup failed
	Check        string   `json:"check,omitempty"` // why the checker said no
	Steps        int      `json:"steps"`
	WallSeconds  float64  `json:"wallSeconds"`
	ModelSeconds float64  `json:"modelSeconds"`
	CostUSD      float64  `json:"costUsd"`
	CostUnknown  bool     `json:"costUnknown,omitempty"`
	Engine       Outcome  `json:"engine"`
}

func (r *Report) total() {
	r.Run, r.Succeeded, r.Steps, r.TaskSeconds, r.ModelSeconds, r.CostUSD, r.CostUnknown = 0, 0, 0, 0, 0, 0, false
	for _, t := range r.Tasks {
		if t.Skipped != "" {
			continue
		}
		r.Run++
		if t.Success {
			r.Succeeded++
		}
		r.Steps += t.Steps
		r.TaskSeconds += t.WallSeconds
		r.ModelSeconds += t.ModelSeconds
		r.CostUSD += t.CostUSD
		r.CostUnknown = r.CostUnknown || t.CostUnknown
	}
	r.SuccessRate = 0
	if r.Run > 0 {
		r.SuccessRate = float64(r.Succeeded) / float64(r.Run)
	}
}

// ReadReport reads a report written by WriteJSON.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not a task report (acu bench tasks -json): %w", path, err)
	}
	return &r, nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func cost(usd float64, unknown bool) string {
	if unknown {
		if usd == 0 {
			return "unknown"
		}
		return fmt.Sprintf("≥$%.4f", usd)
	}
	return fmt.Sprintf("$%.4f", usd)
}

func verdict(t TaskResult) string {
	switch {
	case t.Skipped != "":
		return "skipped"
	case t.Error != "":
		return "error"
	case t.Success:
		return "pass"
	}
	return "fail"
}

// Markdown writes the report as a markdown table, a row a task and a
// total.
func (r *Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "Engine `%s`, model `%s`, %s: **%d/%d tasks (%.0f%%)**, %d steps, %.0f s wall, %.0f s in model calls, cost %s.\n\n",
		r.Engine, r.Model, r.Started.Format("2006-01-02 15:04 UTC"), r.Succeeded, r.Run, 100*r.SuccessRate, r.Steps, r.WallSeconds, r.ModelSeconds, cost(r.CostUSD, r.CostUnknown))
	fmt.Fprintln(w, "| task | result | steps | wall s | model s | cost | note |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---|")
	for _, t := range r.Tasks {
		fmt.Fprintf(w, "| %s | %s | %d | %.1f | %.1f | %s | %s |\n", t.ID, verdict(t), t.Steps, t.WallSeconds, t.ModelSeconds,
			cost(t.CostUSD, t.CostUnknown), cell(firstNonEmpty(t.Skipped, t.Error, t.Check)))
	}
	fmt.Fprintf(w, "| **total** | %d/%d | %d | %.1f | %.1f | %s | |\n", r.Succeeded, r.Run, r.Steps, r.TaskSeconds, r.ModelSeconds, cost(r.CostUSD, r.CostUnknown))
}

func cell(s string) string {
	s = strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
	return clip(s, 120)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Compare writes two reports side by side, a row a task of either.
func Compare(w io.Writer, a, b *Report) {
	name := func(r *Report) string { return r.Engine + " " + r.Model }
	fmt.Fprintf(w, "| task | A: %s | B: %s |\n|---|---|---|\n", cell(name(a)), cell(name(b)))
	byID := map[string]TaskResult{}
	for _, t := range b.Tasks {
		byID[t.ID] = t
	}
	seen := map[string]bool{}
	show := func(t TaskResult, ok bool) string {
		if !ok {
			return "—"
		}
		return fmt.Sprintf("%s, %d steps, %.1f s, %s", verdict(t), t.Steps, t.WallSeconds, cost(t.CostUSD, t.CostUnknown))
	}
	for _, t := range a.Tasks {
		seen[t.ID] = true
		o, ok := byID[t.ID]
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.ID, show(t, true), show(o, ok))
	}
	for _, t := range b.Tasks {
		if !seen[t.ID] {
			fmt.Fprintf(w, "| %s | — | %s |\n", t.ID, show(t, true))
		}
	}
	tot := func(r *Report) string {
		return fmt.Sprintf("**%d/%d (%.0f%%)**, %d steps, %.0f s, %s", r.Succeeded, r.Run, 100*r.SuccessRate, r.Steps, r.TaskSeconds, cost(r.CostUSD, r.CostUnknown))
	}
	fmt.Fprintf(w, "| **total** | %s | %s |\n", tot(a), tot(b))
}

// Markers around the results section of docs/tasks.md that Publish fills.
const (
	PublishBegin = "<!-- bench-tasks-results:begin -->"
	PublishEnd   = "<!-- bench-tasks-results:end -->"
)

// Publish puts the report's table into the file between the markers,
// keeping earlier results of other engines and models: a report replaces
// only its own engine and model's block.
func Publish(path string, r *Report) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, PublishBegin), strings.Index(s, PublishEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no results section: put %s and %s lines where the results go", path, PublishBegin, PublishEnd)
	}
	section := s[i+len(PublishBegin) : j]
	head := fmt.Sprintf("<!-- result %s %s -->", r.Engine, r.Model)
	var blocks []string
	for _, blk := range strings.Split(section, "<!-- result ") {
		blk = strings.TrimSpace(blk)
		if blk == "" || !strings.HasSuffix(strings.SplitN(blk, "\n", 2)[0], "-->") {
			continue
		}
		if "<!-- result "+strings.SplitN(blk, "\n", 2)[0] == head {
			continue
		}
		blocks = append(blocks, "<!-- result "+blk)
	}
	var md strings.Builder
	r.Markdown(&md)
	blocks = append(blocks, head+"\n"+md.String())
	out := s[:i+len(PublishBegin)] + "\n" + strings.Join(blocks, "\n") + "\n" + s[j:]
	if out == s {
		return errors.New("nothing changed")
	}
	return os.WriteFile(path, []byte(out), 0o644)
}
