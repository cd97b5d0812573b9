package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/llm"
	"github.com/acu-dev/acu/internal/runs"
	"github.com/acu-dev/acu/internal/session"
)

// planOutcome is a finished planning call.
type planOutcome struct {
	ev   PlanEvent
	plan *Plan
}

// loop is one task's state: the seed's AgentOrchestrator fields.
type loop struct {
	// marked is the newest map's marked screenshot (markedShot).
	marked struct {
		m    *elements.Map
		imgs []llm.Image
		buf  []byte
	}
	o     *Orchestrator
	opts  *Options
	runID string
	// sess records the task's run; meter counts its iterations and model
	// cost against the budget; limit is the spent cost budget.
	sess   *session.Run
	meter  session.Meter
	limit  error
	taskID string
	task   string
	max    int

	plan    *Plan
	pending chan planOutcome // a background plan's outcome (capacity 1)
	pendCtx context.CancelFunc
	planWG  sync.WaitGroup

	failureContext        []string
	failuresSinceLastPlan int
	lastPlanConsult       int
	lastProgressCheck     int
	itersSinceComplete    int
	lastResortConsulted   bool
	recoveries            int
	unchanged             int       // maps in a row with an empty diff to their predecessor
	changedAt             time.Time // when the map last changed (or recovery last acted)
	// taskWindows are the names of the windows the task is about: every
	// window on screen when it started and every window the model acted
	// in. Recovery never dismisses them.
	taskWindows  map[string]bool
	modelErrs    int           // consecutive failed fast-agent calls
	fresh        *elements.Map // the settled map the last step's verification read
	lastModelErr string

	history []llm.Message
	actions []Action
	tracker elements.Tracker
	prev    *elements.Map

	res Result
	sb  strings.Builder
}

// newLoop is the loop of task s in session sess (its run).
func newLoop(o *Orchestrator, sess *session.Run, s Spec) *loop {
	runID := sess.ID()
	l := &loop{o: o, opts: &o.opts, runID: runID, taskID: s.TaskID, task: strings.TrimSpace(s.Task), max: s.MaxIterations, sess: sess}
	if on := o.opts.OnEvent; on != nil {
		l.sess.OnEvent = func(stream string, data any) { on(runID, stream, data) }
	}
	if l.taskID == "" {
		l.taskID = runID
	}
	if l.max <= 0 {
		l.max = o.opts.MaxIterations
	}
	l.meter.Budget = session.Budget{MaxSteps: l.max, MaxCost: o.opts.MaxCost}
	l.res.RunID = runID
	return l
}

// run is the agent loop; it returns how the task ended, including a
// background plan still running at the end (cancelled and recorded).
func (l *loop) run(ctx context.Context) (res Result) {
	defer func() {
		// A panic while acting or looking (the X library, a model client)
		// fails this task instead of killing the daemon and its other runs.
		if r := recover(); r != nil {
			l.res.Status = StatusFailed
			l.res.Error = fmt.Sprintf("internal error (recovered panic: %v)", r)
			l.o.log.Error("task panicked", "run_id", l.runID, "err", l.res.Error)
			res = l.res
		}
	}()
	l.iterate(ctx)
	l.stopPlanning()
	return l.res
}

// iterate runs the iterations; the outcome is in l.res.
func (l *loop) iterate(ctx context.Context) Result {
	l.progress(ctx, "task started: "+l.task)
	l.mark(ctx)
	extractErrs := 0
	for {
		i, err := l.meter.Step()
		if err != nil {
			return l.failed(fmt.Sprintf("max iterations (%d) reached without completing the task", l.max))
		}
		if ctx.Err() != nil {
			return l.cancelled(ctx)
		}
		if l.limit != nil {
			return l.failed(l.limit.Error())
		}
		l.res.Iterations = i
		if err := l.intervention(ctx, i); err != nil {
			return l.cancelled(ctx)
		}
		l.adoptPlan(ctx, i, false)

		m, err := l.nextMap(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return l.cancelled(ctx)
			}
			extractErrs++
			l.emit(ctx, StreamIteration, IterationEvent{Iteration: i, Error: err.Error()})
			if extractErrs >= 3 {
				return l.failed(fmt.Sprintf("read the screen 3 times in a row without success: %v", err))
			}
			continue
		}
		extractErrs = 0
		obs := l.tracker.Observe(m)
		if m2 := l.stagnation(ctx, i, m, obs); m2 != nil {
			m = m2
		}

		// 1. Initial planning: in the background, the fast agent does not wait.
		if i == 1 {
			l.startPlan(ctx, l.planReq(PlanInitial, i, m), m)
			l.lastPlanConsult = i
		}
		// 5. Last resort: in the final iterations with failures since the last plan, blocking.
		if i >= l.max-LastResortWindow && l.failuresSinceLastPlan > 0 && !l.lastResortConsulted {
			l.lastResortConsulted = true
			l.lastPlanConsult = i
			l.stopPlanning()
			out := l.planCall(ctx, l.planReq(PlanLastResort, i, m), m, true)
			if fresh := l.staleCheck(ctx, m, out.plan); fresh != nil {
				m = fresh
			}
			l.pending = make(chan planOutcome, 1)
			l.pending <- out
			l.adoptPlan(ctx, i, true)
		}
		// 2. Progress stall: every ProgressEvery iterations without completion.
		if l.itersSinceComplete >= ProgressEvery && i-l.lastProgressCheck >= ProgressEvery {
			l.checkProgress(ctx, i, m)
		}

		done, summary := l.act(ctx, i, m, obs)
		if ctx.Err() != nil {
			return l.cancelled(ctx)
		}
		if l.limit != nil {
			return l.failed(l.limit.Error())
		}
		if l.modelErrs >= MaxModelErrors {
			return l.failed(fmt.Sprintf("the fast agent's model failed %d times in a row: %s", l.modelErrs, l.lastModelErr))
		}
		if done {
			l.res.Status = runs.StatusCompleted
			l.res.Summary = summary
			return l.res
		}
		l.itersSinceComplete++
	}
}

func (l *loop) cancelled(ctx context.Context) Result {
	l.res.Status = runs.StatusCancelled
	var c errCancelled
	if errors.As(context.Cause(ctx), &c) {
		l.res.Summary = c.Error()
	} else {
		l.res.Summary = "cancelled"
	}
	return l.res
}

func (l *loop) failed(msg string) Result {
	l.res.Status = StatusFailed
	l.res.Error = msg
	return l.res
}

// act runs one fast-agent turn: prompt, reply, steps, and the completion
// verification of a claim. It reports whether the task is verified done.
func (l *loop) act(ctx context.Context, i int, m *elements.Map, obs elements.Observation) (bool, string) {
	ev := IterationEvent{Iteration: i, Elements: len(m.Elements), LayoutHash: obs.Hash, Stagnant: obs.Stagnant, Guided: l.plan != nil}
	ev.FrameHash = l.keepFrame(ctx, m)
	l.plan.refreshStale(m) // the warning tells only of changes still on screen
	enhanced := l.enhancedTask(m)
	ev.Loop, _ = sameElementLoop(l.actions)
	diff := ""
	if i > 1 {
		diff = obs.Diff.String()
	}
	system := fastPrompt(&l.sb, i, enhanced, m, diff, l.o.device)
	cur := fmt.Sprintf("Iteration %d of %d. What are your next steps?", i, l.max)
	msgs := window(pinnedMessage(l.task, l.plan), l.history, cur)
	if shot := l.markedShot(m); shot != nil {
		msgs[len(msgs)-1].Images = shot // the current turn's message: not kept in the history
	}
	resp, c := l.chat(ctx, "fast", l.opts.Fast, llm.Request{System: system, Messages: msgs, MaxTokens: l.opts.MaxTokens, JSON: true, RunID: l.runID}, cur)
	c.System = system
	ev.Call = c
	if c.Error != "" {
		ev.Error = c.Error
		l.modelErrs++
		l.lastModelErr = c.Error
		l.emit(ctx, StreamIteration, ev)
		return false, ""
	}
	l.modelErrs = 0
	if l.limit != nil {
		// The call spent the cost budget: its steps are not carried out.
		ev.Error = l.limit.Error()
		l.emit(ctx, StreamIteration, ev)
		return false, ""
	}
	l.history = append(l.history, llm.Message{Role: "assistant", Text: resp.Text})
	reply, err := parseFast(resp.Text)
	if err != nil {
		ev.Error = err.Error()
		l.history = append(l.history, llm.Message{Role: "user", Text: "Your reply was not the JSON object asked for: " + err.Error()})
		l.emit(ctx, StreamIteration, ev)
		return false, ""
	}
	ev.Thought, ev.Complete = reply.Thought, reply.Complete

	// User input while the model was thinking: the map is stale, start over.
	if l.foreign(ctx) {
		ev.Error = "user input detected: steps skipped"
		l.emit(ctx, StreamIteration, ev)
		if err := l.pause(ctx, i, "during the model call"); err != nil {
			return false, ""
		}
		return false, ""
	}

	var notes []string
	cur2 := m
	for k := 0; k < len(reply.Steps); k++ {
		fs := reply.Steps[k]
		// Independent typing steps: carried out together, verified by one
		// map read (the seed's parallel verification).
		if batch := typeRun(reply.Steps[k:], cur2); len(batch) >= 2 {
			acts, after, failed := l.typeBatch(ctx, i, cur2, batch)
			if ctx.Err() != nil {
				return false, ""
			}
			cur2 = after
			ev.Steps = append(ev.Steps, acts...)
			l.actions = append(l.actions, acts...)
			if failed != nil {
				notes = append(notes, fmt.Sprintf("WARNING: step %q didn't work: %s. Look at the current map before trying again.", failed.Step, failed.Error))
				l.stepFailure(ctx, i, fmt.Sprintf("Step '%s' failed twice. First: %s", failed.Step, failed.Error))
				break
			}
			k += len(batch) - 1
			continue
		}
		var (
			st  elements.Step
			err error
			a   Action
		)
		if kind, ok := fs.desktopStep(); ok {
			a, err = l.desktopStep(ctx, i, kind, fs)
			cur2 = m // the screen changed outside the map: the next iteration reads it again
		} else {
			st, err = fs.step()
			a = Action{Iteration: i, Step: fmt.Sprintf("%s %s", fs.Action, fs.Target), Kind: st.Kind, Target: st.Target}
		}
		if err == nil && a.Kind != stepLaunch && a.Kind != stepWaitFor {
			a.Step = st.String()
			if e, ok := cur2.Get(st.Target); ok {
				l.protect(e.Window)
			}
			var res elements.Result
			res, err = l.opts.Elements.Execute(ctx, cur2, st)
			if res.After != nil {
				cur2 = res.After
			}
			a.Via = res.Via
		}
		if err != nil {
			if ctx.Err() != nil {
				return false, ""
			}
			a.fail(err)
			ev.Steps = append(ev.Steps, a)
			l.actions = append(l.actions, a)
			notes = append(notes, fmt.Sprintf("WARNING: step %q didn't work: %s. Look at the current map before trying again.", a.Step, a.Error))
			l.stepFailure(ctx, i, fmt.Sprintf("Step '%s' failed twice. First: %s", a.Step, a.Error))
			break
		}
		a.OK = true
		ev.Steps = append(ev.Steps, a)
		l.actions = append(l.actions, a)
		if a.Kind == stepLaunch || a.Kind == stepWaitFor {
			break // the screen has changed under the map the other steps were planned on
		}
	}
	l.mark(ctx)
	if cur2 != m && cur2.Settled {
		l.fresh = cur2
	}
	if len(ev.Steps) > 0 && len(notes) == 0 {
		parts := make([]string, len(ev.Steps))
		for k, a := range ev.Steps {
			parts[k] = a.Step
		}
		notes = append(notes, "Done: "+strings.Join(parts, "; ")+".")
	}
	l.emit(ctx, StreamIteration, ev)
	l.progress(ctx, iterationLine(ev))

	if reply.Complete {
		done, reason := l.verify(ctx, i, reply.Summary)
		if done {
			return true, firstNonEmpty(reply.Summary, reason)
		}
		notes = append(notes, "The task is NOT done: "+reason+" Keep working.")
	}
	if len(notes) > 0 {
		l.history = append(l.history, llm.Message{Role: "user", Text: strings.Join(notes, "\n")})
	}
	return false, ""
}

// enhancedTask is the task with the plan's guidance, the action-loop
// diagnosis and the last failures (the seed's enhancedTask).
func (l *loop) enhancedTask(m *elements.Map) string {
	var b strings.Builder
	if g := l.plan.GuidanceText(); g != "" {
		b.WriteString(g)
		b.WriteString("\n\n")
	}
	b.WriteString(l.task)
	if h := actionHistoryContext(l.actions, m); h != "" {
		b.WriteString("\n\n")
		b.WriteString(h)
	}
	if n := len(l.failureContext); n > 0 {
		b.WriteString("\n\nCONTEXT - Previous issues:\n")
		for _, f := range l.failureContext[max(0, n-FailureContextShow):] {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// stepFailure is the seed's handleStepFailure: count it, and ask for
// recovery planning after FailuresToReplan failures since the last plan, at
// least ProgressEvery iterations after the last consult (interaction 3).
func (l *loop) stepFailure(ctx context.Context, i int, desc string) {
	l.res.Failures++
	l.failuresSinceLastPlan++
	l.failureContext = append(l.failureContext, desc)
	l.maybeReplan(ctx, i)
}

// chat makes one model call under the call timeout.
func (l *loop) chat(ctx context.Context, role string, m Model, req llm.Request, prompt string) (llm.Response, Call) {
	start := time.Now()
	resp, err := session.Call(ctx, l.opts.CallTimeout, func(ctx context.Context) (llm.Response, error) { return m.Chat(ctx, req) })
	c := Call{Role: role, Prompt: prompt, Reply: resp.Text, Model: resp.Model, CostUSD: resp.CostUSD, CostUnknown: err == nil && !resp.CostKnown}
	for _, msg := range req.Messages {
		c.Images += len(msg.Images)
	}
	c.LatencyMs = float64(resp.Latency.Microseconds()) / 1000
	if resp.Latency == 0 {
		c.LatencyMs = float64(time.Since(start).Microseconds()) / 1000
	}
	if err != nil {
		c.Error = err.Error()
	}
	if role == "planner" || role == roleWindow {
		// Background plans and window agents add their cost in the task's
		// goroutine (res is the loop's).
		return resp, c
	}
	l.addCost(c)
	return resp, c
}

// addCost adds a call's cost to the result, counting it as unpriced when
// its cost is unknown. The first call that spends the cost budget, or
// comes back with no cost under one, sets l.limit: the task ends at the
// next check (before the fast agent's steps, at an iteration's top).
func (l *loop) addCost(c Call) {
	if err := l.meter.Charge(c.CostUSD, !c.CostUnknown, c.Model); err != nil && l.limit == nil {
		l.limit = &budgetError{err}
	}
	l.res.CostUSD, l.res.CostUnknown, l.res.UnpricedCalls = l.meter.CostUSD, l.meter.Unpriced > 0, l.meter.Unpriced
}

// budgetError is a spent cost budget, naming the setting that sets it.
type budgetError struct{ err error }

func (e *budgetError) Error() string {
	return e.err.Error() + " (the task's cost budget, ACU_TASK_MAX_COST_USD)"
}
func (e *budgetError) Unwrap() error { return e.err }

// nextMap is the map of a new iteration: the one the last step's
// verification extracted when it is settled and at most ReuseMapAge old
// (nothing but the model's reading happened since), else a fresh one.
func (l *loop) nextMap(ctx context.Context) (*elements.Map, error) {
	f := l.fresh
	l.fresh = nil
	if f != nil && l.opts.ReuseMapAge > 0 && time.Since(f.At) <= l.opts.ReuseMapAge {
		return f, nil
	}
	return l.opts.Elements.Extract(ctx)
}

// intervention checks for user input at the top of an iteration.
func (l *loop) intervention(ctx context.Context, i int) error {
	if !l.foreign(ctx) {
		return nil
	}
	return l.pause(ctx, i, "between iterations")
}

func (l *loop) foreign(ctx context.Context) bool {
	if l.opts.Watch == nil {
		return false
	}
	ok, _, err := l.opts.Watch.Foreign(ctx)
	return err == nil && ok
}

// pause records user input and waits until it has stopped for PauseQuiet.
func (l *loop) pause(ctx context.Context, i int, when string) error {
	_, detail, _ := l.opts.Watch.Foreign(ctx)
	l.emit(ctx, StreamIntervention, InterventionEvent{Iteration: i, Phase: "paused", Detail: "user input " + when})
	l.progress(ctx, fmt.Sprintf("paused at iteration %d: user input %s %s", i, when, detail))
	l.mark(ctx)
	_, err := session.Hold[struct{}]{Poll: 250 * time.Millisecond, Quiet: l.opts.PauseQuiet, Held: func(ctx context.Context) bool {
		if !l.foreign(ctx) {
			return false
		}
		l.mark(ctx)
		return true
	}}.Wait(ctx)
	if err != nil {
		return err
	}
	l.emit(ctx, StreamIntervention, InterventionEvent{Iteration: i, Phase: "resumed"})
	l.progress(ctx, fmt.Sprintf("resumed at iteration %d", i))
	return nil
}

func (l *loop) mark(ctx context.Context) {
	if l.opts.Watch != nil {
		_ = l.opts.Watch.Mark(ctx)
	}
}

// emit records an event on the run and shows it to OnEvent.
func (l *loop) emit(ctx context.Context, stream string, data any) {
	if ev, ok := data.(PlanEvent); ok {
		l.addCost(ev.Call)
	}
	l.sess.Emit(ctx, stream, data)
}

// progress appends a line to the task's progress log.
func (l *loop) progress(ctx context.Context, msg string) {
	if l.opts.Progress == nil {
		return
	}
	if err := l.opts.Progress.AppendTaskProgress(context.WithoutCancel(ctx), l.taskID, l.runID, msg); err != nil {
		l.o.log.Warn("append task progress", "run_id", l.runID, "err", err)
	}
}

// desktopStep carries out a launch or wait_for step, which act on the
// desktop rather than on an element of the map.
func (l *loop) desktopStep(ctx context.Context, i int, kind string, fs fastStep) (Action, error) {
	a := Action{Iteration: i, Kind: kind}
	switch kind {
	case stepLaunch:
		a.Step = "launch " + fs.App
		if l.opts.Launch == nil {
			return a, errors.New("launch steps are not available here: open the application another way")
		}
		if fs.App == "" {
			return a, errors.New(`launch step without "app", the application's name`)
		}
		out, err := l.opts.Launch.Launch(ctx, fs.App)
		a.Via = out
		return a, err
	default:
		timeout := time.Duration(fs.Timeout * float64(time.Second))
		if timeout <= 0 {
			timeout = defaultWaitFor
		}
		timeout = min(timeout, maxWaitFor)
		a.Step = fmt.Sprintf("wait_for %q (%s)", fs.Condition, timeout)
		if l.opts.Wait == nil {
			return a, errors.New("wait_for steps are not available here (no smart wait): look at the map again instead")
		}
		if strings.TrimSpace(fs.Condition) == "" {
			return a, errors.New(`wait_for step without "condition"`)
		}
		met, evidence, err := l.opts.Wait.WaitFor(ctx, fs.Condition, timeout)
		if err != nil {
			return a, fmt.Errorf("wait_for: %w", err)
		}
		a.Via = "smart_wait: " + evidence
		if !met {
			return a, fmt.Errorf("the condition did not hold within %s: %s", timeout, evidence)
		}
		return a, nil
	}
}

// The bounds of a wait_for step's timeout.
const (
	defaultWaitFor = 60 * time.Second
	maxWaitFor     = 10 * time.Minute
)

// staleCheck is the seed's stale-UI check after a blocking planning call:
// the map is read again and compared with the one the plan was made on.
// When the screen changed meanwhile, the plan's guidance says so (and how
// much), and the fresh map is returned for the iteration to act on; nil
// when nothing changed or there is no plan.
func (l *loop) staleCheck(ctx context.Context, before *elements.Map, p *Plan) *elements.Map {
	if p == nil || before == nil {
		return nil
	}
	fresh, err := l.opts.Elements.Extract(ctx)
	if err != nil {
		return nil
	}
	d := elements.Compare(before, fresh)
	if d.Empty() {
		return nil
	}
	p.setStale(d)
	l.prev = fresh
	return fresh
}

// staleDirectives are the seed's safety-checker directives: the changes
// that call for an action before the plan's steps, matched in the diff. A
// window that opened is dealt with first; an element the plan's steps name
// that is gone is not looked for.
func staleDirectives(d elements.Diff, p *Plan) []string {
	var out []string
	for _, e := range d.Added {
		if e.Type == elements.TypeWindow {
			out = append(out, fmt.Sprintf("A new window %q opened (%s): answer or close it first if it blocks the task.", e.Text, e.ID))
		}
	}
	var steps string
	if rec := p.recommended(); rec != nil {
		steps = strings.ToLower(strings.Join(rec.Steps, "\n"))
	}
	for _, e := range d.Removed {
		if e.Type == elements.TypeWindow {
			out = append(out, fmt.Sprintf("The window %q closed: the plan's steps in it no longer apply.", e.Text))
			continue
		}
		if t := strings.ToLower(strings.TrimSpace(e.Text)); t != "" && steps != "" && strings.Contains(steps, t) {
			out = append(out, fmt.Sprintf("%q, which the plan's steps name, is no longer on screen: find another way.", e.Text))
		}
	}
	return out
}

// typeRun returns the type steps at the start of fs that can be carried
// out together: each replaces the text of a different editable element of
// m, so none changes what the others act on.
func typeRun(fs []fastStep, m *elements.Map) []elements.Step {
	var out []elements.Step
	seen := map[string]bool{}
	for _, f := range fs {
		if _, desk := f.desktopStep(); desk {
			break
		}
		st, err := f.step()
		if err != nil || st.Kind != elements.StepType || seen[st.Target] {
			break
		}
		e, ok := m.Get(st.Target)
		if !ok || !e.Editable {
			break
		}
		seen[st.Target] = true
		out = append(out, st)
	}
	return out
}

// typeBatch types each step's text without reading the map in between,
// then reads it once and checks every element holds its text. A step the
// read does not confirm, or whose typing failed, is carried out again on
// its own with Execute (which verifies and retries). It returns the
// actions, the newest map and the action that failed, if one did; the
// steps after a failure are not carried out.
func (l *loop) typeBatch(ctx context.Context, i int, cur *elements.Map, sts []elements.Step) ([]Action, *elements.Map, *Action) {
	acts := make([]Action, len(sts))
	typed := make([]bool, len(sts))
	for k, st := range sts {
		acts[k] = Action{Iteration: i, Step: st.String(), Kind: st.Kind, Target: st.Target}
		if e, ok := cur.Get(st.Target); ok {
			l.protect(e.Window)
		}
		via, err := l.opts.Elements.Do(ctx, cur, st)
		acts[k].Via = via
		typed[k] = err == nil
		if err != nil {
			break
		}
	}
	after, err := l.opts.Elements.Extract(ctx)
	if err != nil {
		after = cur
	}
	for k, st := range sts {
		if typed[k] {
			if e, ok := after.Get(st.Target); ok && strings.Contains(e.Value, st.Text) {
				acts[k].OK = true
				acts[k].Via += fmt.Sprintf(" (verified together with %d other steps)", len(sts)-1)
				continue
			}
		}
		res, err := l.opts.Elements.Execute(ctx, after, st)
		if res.After != nil {
			after = res.After
		}
		acts[k].Via = res.Via
		if err != nil {
			acts[k].fail(err)
			return acts[:k+1], after, &acts[k]
		}
		acts[k].OK = true
	}
	return acts, after, nil
}
