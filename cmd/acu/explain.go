package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/acu-dev/acu/internal/api"
)

// explainWait prints, for `acu wait --explain`, how the wait's condition
// was judged: its plan (each part and its judge, and any fallback), the
// judgements that decided it with their evidence, and what the wait's
// judgements cost (from its run's events and result).
func explainWait(ctx context.Context, cl *api.Client, w io.Writer, job api.Wait) error {
	var events []api.Event
	after := int64(0)
	for {
		page, err := cl.EventsAfter(ctx, api.EventQuery{RunID: job.ID, Streams: []string{"judges", "verdict"}, After: after, Limit: 1000})
		if err != nil {
			return fmt.Errorf("explain wait %s: read its events: %w", job.ID, err)
		}
		events = append(events, page.Events...)
		if len(page.Events) < 1000 {
			break
		}
		after = page.Events[len(page.Events)-1].Cursor
	}
	run, err := cl.Run(ctx, job.ID)
	if err != nil {
		return fmt.Errorf("explain wait %s: read its run: %w", job.ID, err)
	}
	fmt.Fprint(w, explainText(job, events, run.Result))
	return nil
}

type planPart struct {
	Text      string `json:"text"`
	Judge     string `json:"judge"`
	Predicate string `json:"predicate"`
}

type planEvent struct {
	Parts    []planPart `json:"parts"`
	Fallback string     `json:"fallback"`
}

type verdictEvent struct {
	Met          bool     `json:"met"`
	StructureMet *bool    `json:"structureMet"`
	Evidence     string   `json:"evidence"`
	Error        string   `json:"error"`
	Judge        string   `json:"judge"`
	Backend      string   `json:"backend"`
	Part         string   `json:"part"`
	Read         string   `json:"read"`
	Nodes        int      `json:"nodes"`
	LatencyUs    *int64   `json:"latencyUs"`
	LatencyMs    int64    `json:"latencyMs"`
	CostUSD      *float64 `json:"costUsd"`
	Parts        []struct {
		Predicate string `json:"predicate"`
		Met       bool   `json:"met"`
		Evidence  string `json:"evidence"`
	} `json:"parts"`
}

type runCosts struct {
	Evaluations int            `json:"evaluations"`
	Skipped     int            `json:"skipped"`
	Judges      map[string]int `json:"judges"`
	ModelCalls  int            `json:"modelCalls"`
	CostUSD     *float64       `json:"costUsd"`
}

// explainText renders the explanation of a wait from its plan and verdict
// events and its run's result.
func explainText(job api.Wait, events []api.Event, result json.RawMessage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "explain: %s (%s)\n", job.Criteria, job.State)
	var lastDecisive map[string]verdictEvent
	order := []string{}
	for _, ev := range events {
		switch ev.Stream {
		case "judges":
			var p planEvent
			if json.Unmarshal(ev.Data, &p) != nil {
				continue
			}
			if p.Fallback != "" {
				fmt.Fprintf(&b, "  fallback: %s\n", p.Fallback)
			}
			for _, pt := range p.Parts {
				fmt.Fprintf(&b, "  plan: %q -> %s", pt.Text, pt.Judge)
				if pt.Predicate != "" {
					fmt.Fprintf(&b, " (%s)", pt.Predicate)
				}
				b.WriteString("\n")
			}
		case "verdict":
			var v verdictEvent
			if json.Unmarshal(ev.Data, &v) != nil {
				continue
			}
			name := v.Judge
			if name == "" {
				name = v.Backend
			}
			if lastDecisive == nil {
				lastDecisive = map[string]verdictEvent{}
			}
			if _, ok := lastDecisive[name]; !ok {
				order = append(order, name)
			}
			lastDecisive[name] = v
		}
	}
	for _, name := range order {
		v := lastDecisive[name]
		label := "last judgement"
		if job.State == "resolved" && (v.Met || v.StructureMet != nil && *v.StructureMet) {
			label = "decided by"
		}
		switch {
		case v.Error != "":
			fmt.Fprintf(&b, "  %s: %s: error: %s\n", label, name, v.Error)
		case len(v.Parts) > 0:
			lat := fmt.Sprintf("%d ms", v.LatencyMs)
			if v.LatencyUs != nil {
				lat = fmt.Sprintf("%.1f ms", float64(*v.LatencyUs)/1000)
			}
			fmt.Fprintf(&b, "  %s: %s (accessibility tree of %d objects, re-read: %s; %s; no model, no pixels)\n", label, name, v.Nodes, v.Read, lat)
			for _, p := range v.Parts {
				mark := "NO "
				if p.Met {
					mark = "YES"
				}
				fmt.Fprintf(&b, "    %s %s: %s\n", mark, p.Predicate, p.Evidence)
			}
		default:
			mark := "NO"
			if v.Met {
				mark = "YES"
			}
			part := ""
			if v.Part != "" {
				part = fmt.Sprintf(" on %q", v.Part)
			}
			fmt.Fprintf(&b, "  %s: %s%s: %s: %s\n", label, name, part, mark, v.Evidence)
		}
	}
	var rc runCosts
	if json.Unmarshal(result, &rc) == nil && rc.Judges != nil {
		names := make([]string, 0, len(rc.Judges))
		for n := range rc.Judges {
			names = append(names, n)
		}
		slices.Sort(names)
		var calls []string
		for _, n := range names {
			calls = append(calls, fmt.Sprintf("%s %d", n, rc.Judges[n]))
		}
		cost := "unknown"
		if rc.CostUSD != nil {
			cost = fmt.Sprintf("$%.6f", *rc.CostUSD)
		}
		fmt.Fprintf(&b, "  judgements: %s (%d skipped as unchanged); model calls %d; cost %s\n", strings.Join(calls, ", "), rc.Skipped, rc.ModelCalls, cost)
	}
	return b.String()
}
