package smartwait

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/a11yjudge"
	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/judge"
)

// Structure decides the structural parts of conditions from the
// accessibility tree (*a11yjudge.Judge): windows, controls, values, rows.
type Structure interface {
	// Watch signals every accessibility event on display; the channel is
	// closed when the display's bus goes away.
	Watch(ctx context.Context, display string) (<-chan struct{}, error)
	// Decide decides every predicate, reading the whole tree again when
	// fresh (a wait's first decision); an error wrapping
	// a11yjudge.ErrNoTree means the display has no tree to decide on.
	Decide(ctx context.Context, display string, preds []a11yjudge.Predicate, fresh bool) (a11yjudge.Decision, error)
	// Excludes reports whether name is one no read may show
	// (ACU_EXCLUDE_WINDOWS).
	Excludes(name string) bool
}

// StreamJudges carries a wait's plan: how its condition was split and which
// judge decides each part (at the start, after an update of the criteria,
// and when the parts of the tree fall back to another judge).
const StreamJudges = "judges"

// accounting is what a wait's judgements cost: calls per judge, calls to
// a model, and their cost.
type accounting struct {
	calls       map[string]int
	modelCalls  int
	costUSD     float64
	costUnknown bool // a model call had no known cost
}

// add counts one judgement by backend; a model's call is one that was
// paid for (not deduplicated).
func (a *accounting) add(backend string, deduped bool, v judge.Verdict) {
	if a.calls == nil {
		a.calls = map[string]int{}
	}
	a.calls[backend]++
	if deduped || backend == judge.OCR || backend == a11yjudge.Name || backend == "absent" {
		return
	}
	a.modelCalls++
	a.costUSD += v.CostUSD
	if v.CostUnknown {
		a.costUnknown = true
	}
}

// structState is a job's view of its structural plan: the plan of its
// criteria, what was last emitted, and whether it has fallen back.
type structState struct {
	criteria  string
	plan      a11yjudge.Plan
	lastKey   string // met and evidence of the last structural event
	fallback  string // why the tree's parts went to another judge ("" when they did not)
	lastError string
	restHash  uint64 // the frame the rest was last judged on, under restCrit
	restCrit  string
	restDone  bool
	decided   bool // a first (fresh) decision was made
}

// structPlan returns the plan of the job's criteria when part of them is
// structural and a Structure judge is configured; nil otherwise (the wait
// is judged as before).
func (e *Engine) structPlan(j *job, criteria string) *a11yjudge.Plan {
	if e.opts.Structure == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.structure == nil || j.structure.criteria != criteria {
		j.structure = &structState{criteria: criteria, plan: a11yjudge.Parse(criteria)}
		if j.structure.plan.Structural() {
			j.structure.fallback = e.opts.StructureOff // "" when the judge is on
		}
	}
	if !j.structure.plan.Structural() {
		return nil
	}
	p := j.structure.plan
	return &p
}

// structureOnly reports whether every part of the job's criteria is
// structural: damage on screen cannot change its verdict.
func (e *Engine) structureOnly(j *job) bool {
	j.mu.Lock()
	crit := j.spec.Criteria
	j.mu.Unlock()
	p := e.structPlan(j, crit)
	if p == nil || p.Rest() != "" {
		return false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.structure.fallback == ""
}

// needsJudge reports whether criteria need the engine's judge: not when
// the tree decides all of them.
func (e *Engine) needsJudge(criteria string) bool {
	if e.opts.Structure == nil || e.opts.StructureOff != "" {
		return true
	}
	p := a11yjudge.Parse(criteria)
	return !p.Structural() || p.Rest() != ""
}

// checkCriteria is Create's and Update's check of a condition: the parts
// the tree decides need no judge; the rest needs one that can decide it.
func (e *Engine) checkCriteria(criteria string) error {
	if e.opts.Structure != nil {
		if plan := a11yjudge.Parse(criteria); plan.Structural() {
			if e.opts.StructureOff != "" {
				// Off: the whole condition goes to the judge a display
				// without a tree would use, which must be able to take it.
				if _, err := e.fallbackJudge(plan); err != nil {
					return &ValidationError{Field: "criteria", Message: fmt.Sprintf("%s, and %v", e.opts.StructureOff, err), Err: err}
				}
				return nil
			}
			rest := plan.Rest()
			if rest == "" {
				return nil
			}
			if _, err := e.restJudge(rest); err != nil {
				return &ValidationError{Field: "criteria", Message: fmt.Sprintf("%q is decided from the accessibility tree, but %q: %v", strings.Join(structTexts(plan), " and "), rest, err), Err: err}
			}
			return nil
		}
	}
	if e.noJudge != nil {
		return e.noJudge
	}
	if err := e.opts.Judge.Check(criteria); err != nil {
		return &ValidationError{Field: "criteria", Message: err.Error(), Err: err}
	}
	return nil
}

func structTexts(p a11yjudge.Plan) []string {
	var out []string
	for _, pt := range p.Parts {
		if pt.Pred != nil {
			out = append(out, pt.Text)
		}
	}
	return out
}

// restJudge is the cheapest judge that decides the rest of a condition:
// the OCR judge (Options.Text) when the rest is about quoted text only,
// else the engine's judge.
func (e *Engine) restJudge(rest string) (judge.Backend, error) {
	if e.opts.Text != nil && a11yjudge.TextOnly(rest) && e.opts.Text.Check(rest) == nil {
		return e.opts.Text, nil
	}
	if e.noJudge != nil {
		return nil, e.noJudge
	}
	if err := e.opts.Judge.Check(rest); err != nil {
		return nil, err
	}
	return e.opts.Judge, nil
}

// watchStructure subscribes to the accessibility events of the job's
// display when its criteria are structural; nil otherwise or when the
// display has no tree (the poll carries the job).
func (e *Engine) watchStructure(ctx context.Context, j *job, sp spec) <-chan struct{} {
	if e.structPlan(j, sp.Criteria) == nil || sp.Source == sourceTmux || e.opts.StructureOff != "" {
		return nil
	}
	ch, err := e.opts.Structure.Watch(ctx, sp.Display)
	if err != nil {
		e.log.Debug("watch accessibility events: the tree is read at every poll", "run_id", j.id, "display", sp.Display, "error", err)
		return nil
	}
	return ch
}

// emitPlan records how the job's criteria are judged: each part and its
// judge.
func (e *Engine) emitPlan(ctx context.Context, j *job, sp spec, fallback string) {
	parts := []map[string]any{}
	plan := e.structPlan(j, sp.Criteria)
	if plan != nil && fallback == "" {
		fallback = e.opts.StructureOff // off: every plan event says so
	}
	switch {
	case plan == nil:
		parts = append(parts, map[string]any{"text": sp.Criteria, "judge": e.opts.Judge.Name()})
	case fallback != "":
		b, err := e.fallbackJudge(*plan)
		name := "none"
		if err == nil {
			name = b.Name()
		}
		parts = append(parts, map[string]any{"text": e.fallbackCondition(*plan, b), "judge": name})
	default:
		for _, pt := range plan.Parts {
			if pt.Pred != nil {
				parts = append(parts, map[string]any{"text": pt.Text, "judge": a11yjudge.Name, "predicate": pt.Pred.String()})
			}
		}
		if rest := plan.Rest(); rest != "" {
			name := "none"
			if b, err := e.restJudge(rest); err == nil {
				name = b.Name()
			}
			parts = append(parts, map[string]any{"text": rest, "judge": name})
		}
	}
	data := map[string]any{"criteria": sp.Criteria, "parts": parts}
	if fallback != "" {
		data["fallback"] = fallback
	}
	if _, err := e.opts.Runs.Emit(ctx, j.id, StreamJudges, data); err != nil && ctx.Err() == nil {
		e.log.Debug("emit plan event", "run_id", j.id, "error", err)
	}
}

// evaluateStructure judges a structural plan: its predicates from the
// tree (no pixels, no model), and only when they all hold, the rest of the
// condition with the cheapest judge that decides it. A display without a
// tree gives the whole condition to the OCR or vision judge (fallback),
// and says so in a plan event.
func (e *Engine) evaluateStructure(ctx context.Context, j *job, sp spec, trigger time.Time, plan a11yjudge.Plan) (observation, judge.Verdict, bool) {
	ectx, done := e.evalContext(ctx, j, sp)
	defer done()
	if off := e.opts.StructureOff; off != "" {
		return e.evaluateFallback(ctx, ectx, j, sp, trigger, plan, off)
	}
	no := observation{at: trigger}
	j.mu.Lock()
	fresh := !j.structure.decided
	j.mu.Unlock()
	dec, err := e.opts.Structure.Decide(ectx, sp.Display, plan.Predicates(), fresh)
	if err == nil {
		j.mu.Lock()
		j.structure.decided = true
		j.mu.Unlock()
	}
	if ectx.Err() != nil {
		return no, judge.Verdict{}, false
	}
	if errors.Is(err, a11yjudge.ErrNoTree) {
		return e.evaluateFallback(ctx, ectx, j, sp, trigger, plan, err.Error())
	}
	// An app the tree lacks keeps the fallback: decided before the
	// fallback is cleared, so pixel changes are never ignored between two
	// evaluations that both fall back.
	if err == nil {
		if why := e.untracked(ectx, sp, dec); why != "" {
			return e.evaluateFallback(ctx, ectx, j, sp, trigger, plan, why)
		}
	}
	j.mu.Lock()
	st := j.structure
	wasFallback := st.fallback != ""
	st.fallback = ""
	j.mu.Unlock()
	if wasFallback {
		e.emitPlan(ctx, j, sp, "")
	}
	if err != nil {
		msg := err.Error()
		j.mu.Lock()
		j.judgeErrors++
		j.lastErr = "judge: " + msg
		j.lastJudge = msg
		changed := st.lastError != msg
		st.lastError = msg
		j.lastVerdict = &Verdict{At: e.now().UTC(), Backend: a11yjudge.Name, Error: msg}
		j.mu.Unlock()
		if changed {
			e.emitVerdict(ctx, j.id, map[string]any{"met": false, "error": msg, "backend": a11yjudge.Name, "judge": a11yjudge.Name})
		}
		return no, judge.Verdict{}, false
	}
	parts := make([]map[string]any, 0, len(dec.Outcomes))
	for _, o := range dec.Outcomes {
		parts = append(parts, map[string]any{"judge": a11yjudge.Name, "predicate": o.Pred.String(), "met": o.Met, "evidence": o.Evidence})
	}
	rest := plan.Rest()
	key := fmt.Sprint(dec.Met, dec.Evidence)
	j.mu.Lock()
	st.lastError = ""
	changed := st.lastKey != key
	st.lastKey = key
	j.evaluations++
	j.judgedOK++
	j.failStreak = 0
	j.lastErr = ""
	j.acct.add(a11yjudge.Name, false, judge.Verdict{})
	j.lastLatency = dec.Latency
	rec := &Verdict{At: e.now().UTC(), Met: dec.Met && rest == "", Evidence: dec.Evidence, Latency: dec.Latency, Backend: a11yjudge.Name, Model: a11yjudge.Name}
	j.lastVerdict = rec
	if !changed {
		j.skipped++ // the same answer on the same tree facts: no event
	}
	j.mu.Unlock()
	if changed {
		data := map[string]any{
			"met": dec.Met && rest == "", "evidence": dec.Evidence, "backend": a11yjudge.Name, "judge": a11yjudge.Name,
			"model": a11yjudge.Name, "parts": parts, "latencyMs": dec.Latency.Milliseconds(), "latencyUs": dec.Latency.Microseconds(),
			"costUsd": 0, "read": dec.Read, "nodes": dec.Nodes, "apps": dec.Apps,
		}
		if rest != "" {
			data["structureMet"] = dec.Met
		}
		e.emitVerdict(ctx, j.id, data)
	}
	if !dec.Met {
		return no, judge.Verdict{}, false
	}
	if rest == "" {
		obs := observation{text: dec.Evidence, hash: textHash(dec.Evidence), at: trigger}
		return obs, judge.Verdict{Met: true, Evidence: dec.Evidence, Model: a11yjudge.Name}, true
	}
	b, err := e.restJudge(rest)
	if err != nil {
		return e.restError(ctx, j, no, err)
	}
	obs, v, met := e.judgeRest(ctx, ectx, j, sp, rest, b)
	obs.at = trigger
	if met {
		v.Evidence = dec.Evidence + "; " + v.Evidence
	}
	return obs, v, met
}

// untracked says why the tree cannot decide a window predicate: the
// display has an X window with that title that the tree lacks (its
// application has no accessibility), so "open" would never hold and
// "gone" would hold too soon. "" when the tree and the X window list
// agree.
func (e *Engine) untracked(ctx context.Context, sp spec, dec a11yjudge.Decision) string {
	for _, o := range dec.Outcomes {
		p := o.Pred
		if !p.Window || p.Name == "" || e.opts.Structure.Excludes(p.Name) {
			continue // an excluded window is not looked for in the X window list either
		}
		absent := (p.Check == a11yjudge.Open || p.Check == a11yjudge.Focused) && !o.Met && strings.HasPrefix(o.Evidence, "no ")
		if !absent && !(p.Check == a11yjudge.Gone && o.Met) {
			continue
		}
		t, err := capture.ParseTarget("window:" + p.Name)
		if err != nil {
			continue
		}
		_, err = e.opts.Capture.Resolve(ctx, sp.Display, t)
		if te, ok := errors.AsType[*capture.TargetError](err); err == nil || ok && te.Ambiguous {
			return fmt.Sprintf("a window titled %q is on %s but not in the accessibility tree (its application has no accessibility)", p.Name, sp.Display)
		}
	}
	return ""
}

// fallbackJudge is who decides a structural plan on a display without a
// tree: a vision judge, given the whole condition, else the OCR judge,
// given the windows' and controls' names as quoted text.
func (e *Engine) fallbackJudge(plan a11yjudge.Plan) (judge.Backend, error) {
	if e.noJudge == nil && e.opts.Judge.Name() != judge.OCR {
		return e.opts.Judge, nil
	}
	cond := e.fallbackCondition(plan, nil)
	if cond == "" {
		return nil, fmt.Errorf("%q needs the accessibility tree or a vision judge: the OCR judge reads text, not states or values", strings.Join(structTexts(plan), " and "))
	}
	return e.restJudge(cond)
}

// fallbackCondition is what the fallback judge b is asked: the condition
// as written for a vision judge; for the OCR judge, each structural part
// about something named being open (or gone) becomes that name being
// visible (or gone), "" when a part cannot be said in text.
func (e *Engine) fallbackCondition(plan a11yjudge.Plan, b judge.Backend) string {
	if b != nil && b.Name() != judge.OCR {
		return plan.Condition
	}
	var parts []string
	polarity := ""
	for _, pt := range plan.Parts {
		if pt.Pred == nil {
			parts = append(parts, pt.Text)
			continue
		}
		p := pt.Pred
		if p.Name == "" || (p.Check != a11yjudge.Open && p.Check != a11yjudge.Gone) {
			return ""
		}
		word := "visible"
		if p.Check == a11yjudge.Gone {
			word = "gone"
		}
		if polarity != "" && polarity != word {
			return "" // the OCR judge takes one polarity per condition
		}
		polarity = word
		parts = append(parts, fmt.Sprintf("%q is %s", asWritten(p.Name, pt.Text), word))
	}
	return strings.Join(parts, " and ")
}

// asWritten returns name (which the grammar lower-cases) in the case the
// condition's text wrote it: the OCR judge reads text as it is shown, so
// "Downloads" is looked for, not "downloads".
func asWritten(name, text string) string {
	if i := strings.Index(strings.ToLower(text), name); i >= 0 && len(strings.ToLower(text)) == len(text) {
		return text[i : i+len(name)]
	}
	return name
}

// evaluateFallback judges a structural plan on a display without a tree.
func (e *Engine) evaluateFallback(ctx, ectx context.Context, j *job, sp spec, trigger time.Time, plan a11yjudge.Plan, why string) (observation, judge.Verdict, bool) {
	no := observation{at: trigger}
	b, err := e.fallbackJudge(plan)
	j.mu.Lock()
	st := j.structure
	first := st.fallback != why
	st.fallback = why
	j.mu.Unlock()
	if first {
		e.emitPlan(ctx, j, sp, why)
	}
	if err != nil {
		return e.restError(ctx, j, no, fmt.Errorf("%s, and %w", why, err))
	}
	obs, v, met := e.judgeRest(ctx, ectx, j, sp, e.fallbackCondition(plan, b), b)
	obs.at = trigger
	return obs, v, met
}

// restError records that the rest of a condition has no judge: an error
// event when it changes, every evaluation a judge error.
func (e *Engine) restError(ctx context.Context, j *job, obs observation, err error) (observation, judge.Verdict, bool) {
	msg := err.Error()
	j.mu.Lock()
	j.judgeErrors++
	j.failStreak++
	j.lastJudge = msg
	j.lastErr = "judge: " + msg
	changed := j.structure.lastError != msg
	j.structure.lastError = msg
	j.lastVerdict = &Verdict{At: e.now().UTC(), Backend: "none", Error: msg}
	j.mu.Unlock()
	if changed {
		e.emitVerdict(ctx, j.id, map[string]any{"met": false, "error": msg, "backend": "none"})
	}
	return obs, judge.Verdict{}, false
}

// judgeRest captures the job's target and asks b about criteria, unless
// the same frame was already judged under the same criteria. The engine's
// own judge goes through the shared cache and call (judgeShared); the OCR
// judge of Options.Text is called directly (its own cache is by frame).
func (e *Engine) judgeRest(ctx, ectx context.Context, j *job, sp spec, criteria string, b judge.Backend) (observation, judge.Verdict, bool) {
	release, err := e.judgeSlot(ectx)
	if err != nil {
		return observation{}, judge.Verdict{}, false
	}
	var once sync.Once
	free := func() { once.Do(release) }
	defer free()
	obs, err := e.observe(ectx, j, sp)
	if err != nil {
		if ectx.Err() != nil {
			return obs, judge.Verdict{}, false
		}
		e.metrics.captureErrors.Inc()
		msg := "capture: " + err.Error()
		j.mu.Lock()
		j.captureErrs++
		j.lastErr = msg
		changed := msg != j.lastCapErr
		j.lastCapErr = msg
		j.mu.Unlock()
		if changed {
			e.emitVerdict(ctx, j.id, map[string]any{"met": false, "error": msg, "backend": b.Name(), "judge": b.Name()})
		}
		return obs, judge.Verdict{}, false
	}
	j.mu.Lock()
	j.lastCapErr = ""
	st := j.structure
	if st.restDone && st.restHash == obs.hash && st.restCrit == criteria {
		j.skipped++
		j.mu.Unlock()
		e.metrics.skipped.Inc()
		return obs, judge.Verdict{}, false
	}
	j.mu.Unlock()
	q := judge.Question{Condition: criteria, Elapsed: e.now().Sub(sp.CreatedAt), Frame: obs.frame, Text: obs.text, RunID: j.id}
	start := time.Now()
	var (
		v       judge.Verdict
		deduped bool
	)
	if b == e.opts.Judge {
		v, deduped, err = e.judgeShared(ctx, ectx, q, obs.hash, free)
	} else {
		jctx, cancel := context.WithTimeout(ectx, e.opts.JudgeTimeout)
		e.metrics.judgeCalls.Inc()
		v, err = b.Judge(jctx, q)
		cancel()
		if err != nil {
			e.metrics.judgeErrors.Inc()
		}
	}
	latency := time.Since(start)
	if ectx.Err() != nil {
		return obs, judge.Verdict{}, false
	}
	e.keepFrame(ctx, j.id, obs)
	data := map[string]any{"frameHash": fmtHash(obs.hash), "latencyMs": latency.Milliseconds(), "backend": b.Name(), "judge": b.Name(), "part": criteria}
	rec := &Verdict{At: e.now().UTC(), FrameHash: fmtHash(obs.hash), Latency: latency, Backend: b.Name(), Deduped: deduped}
	j.mu.Lock()
	j.evaluations++
	j.lastLatency = latency
	if err != nil {
		j.judgeErrors++
		j.failStreak++
		j.lastJudge = err.Error()
		j.lastErr = "judge: " + err.Error()
		rec.Error = err.Error()
		j.lastVerdict = rec
		j.mu.Unlock()
		data["met"], data["error"] = false, err.Error()
		e.emitVerdict(ctx, j.id, data)
		return obs, judge.Verdict{}, false
	}
	j.acct.add(b.Name(), deduped, v)
	if v.Unparsed {
		j.judgeErrors++
		j.failStreak++
		j.lastJudge = "unparsed judge reply: " + v.Evidence
		j.lastErr = "judge: " + j.lastJudge
		e.metrics.unparsed.Inc()
	} else {
		j.judgedOK++
		j.failStreak = 0
		st.restDone, st.restHash, st.restCrit = true, obs.hash, criteria
		j.lastErr = ""
	}
	rec.Met, rec.Evidence, rec.Model = v.Met, v.Evidence, v.Model
	if !deduped {
		rec.CostUSD, rec.CostUnknown = v.CostUSD, v.CostUnknown
	}
	j.lastVerdict = rec
	j.mu.Unlock()
	data["met"], data["evidence"], data["model"], data["costUsd"] = v.Met, v.Evidence, v.Model, rec.CostUSD
	if rec.CostUnknown {
		data["costUsd"], data["costUnknown"] = nil, true
	}
	if deduped {
		data["deduped"] = true
	}
	if v.Unparsed {
		data["unparsed"] = true
	}
	e.emitVerdict(ctx, j.id, data)
	return obs, v, v.Met && !v.Unparsed
}

// costs is the job's accounting for its run's result.
func (j *job) costs() (map[string]int, int, *float64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	calls := map[string]int{}
	for k, v := range j.acct.calls {
		calls[k] = v
	}
	if j.acct.costUnknown {
		return calls, j.acct.modelCalls, nil
	}
	c := j.acct.costUSD
	return calls, j.acct.modelCalls, &c
}
