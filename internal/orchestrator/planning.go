package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/llm"
)

// This file is the planner's and the verifier's side of the loop: the
// background and blocking plans, their adoption, the progress check and
// the verification of a completion claim.

func (l *loop) maybeReplan(ctx context.Context, i int) {
	if l.failuresSinceLastPlan >= FailuresToReplan && i-l.lastPlanConsult >= ProgressEvery {
		if l.startPlan(ctx, l.planReq(PlanRecovery, i, l.prev), l.prev) {
			l.lastPlanConsult = i
		}
	}
}

// verify asks the verifier whether a completion claim holds. A rejection
// counts as a failure, a wrong-task rejection as WrongTaskPenalty failures
// (interaction 4).
func (l *loop) verify(ctx context.Context, i int, summary string) (bool, string) {
	l.res.Verifies++
	m, err := l.opts.Elements.Extract(ctx)
	if err != nil {
		m = l.prev
	} else {
		l.prev = m
		if m.Settled {
			l.fresh = m // newer than the last step's map
		}
	}
	prompt := verifyPrompt(i, l.task, summary, m, l.actions)
	req := llm.Request{System: verifySystem, Messages: []llm.Message{{Role: "user", Text: prompt, Images: l.screenshot(m)}}, MaxTokens: 300, JSON: true, RunID: l.runID}
	resp, c := l.chat(ctx, "verifier", l.opts.Verifier, req, prompt)
	ev := VerifyEvent{Iteration: i, Call: c, Error: c.Error}
	l.itersSinceComplete = 0
	var r verifyReply
	if c.Error == "" {
		raw, err := llm.ExtractJSON(resp.Text)
		if err == nil {
			err = json.Unmarshal(raw, &r)
		}
		if err != nil {
			ev.Error = "read the verifier's reply: " + err.Error()
			r = verifyReply{Reason: "the verifier's reply could not be read"}
		}
	} else {
		r.Reason = "the verifier could not be asked: " + c.Error
	}
	ev.Done, ev.Reason = r.Done, r.Reason
	if !r.Done {
		ev.WrongTask = wrongTask(r.Reason)
		l.res.Failures++
		if ev.WrongTask {
			l.failuresSinceLastPlan += WrongTaskPenalty
		} else {
			l.failuresSinceLastPlan++
		}
		l.failureContext = append(l.failureContext, fmt.Sprintf("Completion rejected (iter %d): %s", i, r.Reason))
	}
	l.emit(ctx, StreamVerify, ev)
	l.progress(ctx, fmt.Sprintf("verification at iteration %d: done=%v: %s", i, r.Done, r.Reason))
	return r.Done, r.Reason
}

// checkProgress is interaction 2: the fast model judges progress; without
// progress, recovery planning starts in the background.
func (l *loop) checkProgress(ctx context.Context, i int, m *elements.Map) {
	l.lastProgressCheck = i
	l.res.Checks++
	prompt := checkPrompt(i, l.task, m, l.actions)
	req := llm.Request{System: checkSystem, Messages: []llm.Message{{Role: "user", Text: prompt, Images: l.markedShot(m)}}, MaxTokens: 200, JSON: true, RunID: l.runID}
	resp, c := l.chat(ctx, "check", l.opts.Fast, req, prompt)
	ev := CheckEvent{Iteration: i, Call: c, Error: c.Error, Progressing: true}
	if c.Error == "" {
		var r checkReply
		raw, err := llm.ExtractJSON(resp.Text)
		if err == nil {
			err = json.Unmarshal(raw, &r)
		}
		if err != nil {
			ev.Error = "read the progress check's reply: " + err.Error()
		} else {
			ev.Progressing, ev.Reason = r.Progressing, r.Reason
		}
	}
	if !ev.Progressing {
		l.failureContext = append(l.failureContext, fmt.Sprintf("Progress check (iter %d): %s", i, ev.Reason))
		if l.startPlan(ctx, l.planReq(PlanRecovery, i, m), m) {
			ev.Recovery = true
			l.lastPlanConsult = i
		}
	}
	l.emit(ctx, StreamCheck, ev)
	l.progress(ctx, fmt.Sprintf("progress check at iteration %d: progressing=%v: %s", i, ev.Progressing, ev.Reason))
}

// planReq gathers what a planning call gets.
func (l *loop) planReq(kind string, i int, m *elements.Map) planRequest {
	r := planRequest{kind: kind, task: l.task, apps: l.opts.Apps, iteration: i, previous: l.plan}
	if m != nil {
		r.mapText = m.Text()
	}
	if kind != PlanInitial {
		r.failures = append([]string(nil), l.failureContext...)
	}
	return r
}

// startPlan runs a planning call in the background unless one is already
// running; it reports whether it started one.
func (l *loop) startPlan(ctx context.Context, r planRequest, m *elements.Map) bool {
	if l.pending != nil {
		return false
	}
	l.pending = make(chan planOutcome, 1)
	pctx, cancel := context.WithCancel(ctx)
	l.pendCtx = cancel
	ch := l.pending
	imgs := l.screenshot(m)
	l.planWG.Add(1)
	go func() {
		defer l.planWG.Done()
		ch <- l.planCallImages(pctx, r, imgs, false)
	}()
	return true
}

// stopPlanning cancels a background plan, waits for it and records it.
func (l *loop) stopPlanning() {
	if l.pendCtx != nil {
		l.pendCtx()
	}
	l.planWG.Wait()
	if l.pending != nil {
		select {
		case out := <-l.pending:
			l.res.Plans++
			if out.plan != nil {
				out.ev.Plan, out.ev.Guidance = out.plan, out.plan.GuidanceText() // arrived too late: not adopted
			}
			l.emit(context.Background(), StreamPlan, out.ev)
		default:
		}
	}
	l.pending, l.pendCtx = nil, nil
}

// adoptPlan takes a finished plan (waiting for it when block is set) and
// makes its guidance the pinned message and part of the enhanced task.
func (l *loop) adoptPlan(ctx context.Context, i int, block bool) {
	if l.pending == nil {
		return
	}
	var out planOutcome
	if block {
		out = <-l.pending
	} else {
		select {
		case out = <-l.pending:
		default:
			return
		}
	}
	l.planWG.Wait()
	if l.pendCtx != nil {
		l.pendCtx()
	}
	l.pending, l.pendCtx = nil, nil
	l.res.Plans++
	if out.plan != nil {
		out.plan.Iteration, out.plan.Kind = out.ev.Iteration, out.ev.Kind
		l.plan = out.plan
		l.failuresSinceLastPlan = 0
		l.tracker.Reset()
		out.ev.Adopted = i
		out.ev.Plan = out.plan
		out.ev.Guidance = out.plan.GuidanceText()
	}
	l.emit(ctx, StreamPlan, out.ev)
	if out.plan != nil {
		l.progress(ctx, fmt.Sprintf("plan (%s) adopted at iteration %d: %s", out.ev.Kind, i, firstLine(out.ev.Guidance, 1)))
		l.split(ctx, i, out.plan)
	}
}

func firstLine(s string, skip int) string {
	lines := strings.SplitN(s, "\n", skip+2)
	if len(lines) > skip {
		return lines[skip]
	}
	return s
}

// split arranges the two windows a plan recommends working in.
func (l *loop) split(ctx context.Context, i int, p *Plan) {
	if p.Split == nil || l.opts.Arrange == nil {
		return
	}
	w := [2]string{p.Split.Windows[0], p.Split.Windows[1]}
	err := l.opts.Arrange.Arrange(ctx, w)
	ev := map[string]any{"iteration": i, "windows": w, "reason": p.Split.Reason}
	if err != nil {
		ev["error"] = err.Error()
	}
	l.emit(ctx, StreamSplit, ev)
	// A window the compositor kept at another size is still there to
	// work in: its agent goes on (the event says where it is).
	var pe *PlaceError
	if (err == nil || errors.As(err, &pe)) && len(p.Split.Tasks) == 2 {
		l.windowAgents(ctx, i, w, [2]string{p.Split.Tasks[0], p.Split.Tasks[1]})
	}
}

func (l *loop) planCall(ctx context.Context, r planRequest, m *elements.Map, blocking bool) planOutcome {
	return l.planCallImages(ctx, r, l.screenshot(m), blocking)
}

// planCallImages asks the planner; it runs on the loop's goroutine or a
// background one and touches no loop state.
func (l *loop) planCallImages(ctx context.Context, r planRequest, imgs []llm.Image, blocking bool) planOutcome {
	prompt := r.prompt()
	req := llm.Request{System: plannerSystem, Messages: []llm.Message{{Role: "user", Text: prompt, Images: imgs}},
		MaxTokens: 2 * l.opts.MaxTokens, JSON: true, RunID: l.runID}
	resp, c := l.chat(ctx, "planner", l.opts.Planner, req, prompt)
	out := planOutcome{ev: PlanEvent{Kind: r.kind, Iteration: r.iteration, Blocking: blocking, Call: c, Error: c.Error}}
	if c.Error != "" {
		return out
	}
	p, err := parsePlan(resp.Text)
	if err != nil {
		out.ev.Error = err.Error()
		return out
	}
	out.plan = p
	return out
}
