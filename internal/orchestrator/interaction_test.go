package orchestrator_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acu-dev/acu/internal/display"
	"github.com/acu-dev/acu/internal/input"
	"github.com/acu-dev/acu/internal/llm/llmtest"
	"github.com/acu-dev/acu/internal/orchestrator"
	"github.com/acu-dev/acu/internal/runs"
)

const task = "Put Ada in the name field of the Acu Entry dialog and press OK"

func progressing(ok bool) llmtest.Reply {
	return llmtest.Reply{Text: fmt.Sprintf(`{"progressing":%v,"reason":"scripted check"}`, ok)}
}

var doneReply = llmtest.Text(`{"done":true,"reason":"the dialog is gone"}`)

// unusable is a planner reply that is no plan: it is recorded, never
// adopted, so the failure counter is never reset by a plan.
var unusable = llmtest.Text("I cannot plan this.")

func run(t *testing.T, or *orchestrator.Orchestrator, max int) orchestrator.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	res, err := or.Run(ctx, orchestrator.Spec{Task: task, MaxIterations: max})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("result: %+v", res)
	return res
}

func plansOf(evs []planEv, kind string) []planEv {
	var out []planEv
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// Interaction 1: the planner starts at iteration 1 in the background; the
// fast agent acts without waiting; the guidance arrives later as the pinned
// first message and in the enhanced task.
func TestInitialPlanningInBackground(t *testing.T) {
	d := newDesktop(t)
	d.entry(t)
	release := make(chan struct{})
	var fast counter
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		if fast.next() == 2 {
			close(release)
		}
		if strings.Contains(r.Messages[0].Text, "STRATEGIC GUIDANCE") {
			return llmtest.Reply{Text: stepsJSON(true)}
		}
		return llmtest.Reply{Text: stepsJSON(false)}
	}, func(r llmtest.Request) llmtest.Reply {
		select {
		case <-release:
		case <-time.After(time.Minute):
			t.Errorf("the fast agent did not act while the planner was thinking")
		}
		return llmtest.Reply{Text: planJSON("Fill and confirm", "Type Ada into the entry", "Click OK")}
	}, doneReply)
	or := d.orchestrator(t, m, nil)
	res := run(t, or, 10)
	if res.Status != runs.StatusCompleted {
		t.Fatalf("status = %s (%s), want completed", res.Status, res.Error)
	}
	iters := events[iterEv](t, d, res.RunID, orchestrator.StreamIteration)
	plans := events[planEv](t, d, res.RunID, orchestrator.StreamPlan)
	if len(plans) != 1 || plans[0].Kind != orchestrator.PlanInitial || plans[0].Iteration != 1 || plans[0].Blocking {
		t.Fatalf("plans = %+v, want one non-blocking initial plan asked at iteration 1", plans)
	}
	if m.planner.Calls() != 1 {
		t.Errorf("planner calls = %d, want 1 (no recovery without a reason)", m.planner.Calls())
	}
	preq := m.planner.Requests()[0]
	for _, want := range []string{"TASK: " + task, "[btn_ok] button \"OK\"", "- Zenity (zenity)"} {
		if !strings.Contains(preq.Text(), want) {
			t.Errorf("planner prompt lacks %q:\n%s", want, preq.Text())
		}
	}
	adopted := plans[0].Adopted
	if adopted < 3 {
		t.Fatalf("plan adopted at iteration %d, want >= 3 (the planner was held until the fast agent's 2nd call)", adopted)
	}
	reqs := m.fast.Requests()
	var actReqs []llmtest.Request
	for _, r := range reqs {
		if !isCheck(r) {
			actReqs = append(actReqs, r)
		}
	}
	for i, it := range iters {
		guided := strings.Contains(actReqs[i].Messages[0].Text, "STRATEGIC GUIDANCE")
		if it.Guided != (it.Iteration >= adopted) || guided != it.Guided {
			t.Errorf("iteration %d: guided event %v, pinned message guided %v; want both %v (adopted at %d)", it.Iteration, it.Guided, guided, it.Iteration >= adopted, adopted)
		}
	}
	last := actReqs[len(actReqs)-1]
	wantPinned := "TASK: " + task + "\n\nSTRATEGIC GUIDANCE (from planning agent):\nRecommended approach: Fill and confirm\n"
	if !strings.HasPrefix(last.Messages[0].Text, wantPinned) {
		t.Errorf("pinned message = %q, want prefix %q", last.Messages[0].Text, wantPinned)
	}
	if !strings.Contains(last.System, "TASK:\nSTRATEGIC GUIDANCE (from planning agent):") {
		t.Errorf("enhanced task in the system prompt lacks the guidance:\n%s", last.System)
	}
	if v := events[verifyEv](t, d, res.RunID, orchestrator.StreamVerify); len(v) != 1 || !v[0].Done {
		t.Errorf("verifications = %+v, want one accepted", v)
	}
}

// Interaction 2: every 3 iterations without completion the fast model
// checks progress; without progress, recovery planning runs in the
// background with the failure context.
func TestProgressStall(t *testing.T) {
	for _, tc := range []struct {
		name        string
		progressing bool
	}{{"stalled", false}, {"progressing", true}} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDesktop(t)
			d.entry(t)
			m := newModels(t, func(r llmtest.Request) llmtest.Reply {
				if isCheck(r) {
					return progressing(tc.progressing)
				}
				// A fast agent that repeats one action.
				return llmtest.Reply{Text: stepsJSON(false, typeStep(findID(r.System, "input", ""), "abc"))}
			}, llmtest.Text(planJSON("Fill and confirm", "Type", "Click OK")), doneReply)
			or := d.orchestrator(t, m, nil)
			res := run(t, or, 6)
			if res.Status != orchestrator.StatusFailed || !strings.Contains(res.Error, "max iterations (6)") {
				t.Fatalf("result %s %q, want failed at max iterations", res.Status, res.Error)
			}
			checks := events[checkEv](t, d, res.RunID, orchestrator.StreamCheck)
			if len(checks) != 1 || checks[0].Iteration != 4 || checks[0].Progressing != tc.progressing || checks[0].Recovery == tc.progressing {
				t.Fatalf("checks = %+v, want one at iteration 4, progressing %v, recovery %v", checks, tc.progressing, !tc.progressing)
			}
			chk := m.fast.Requests()
			var checkReq llmtest.Request
			for _, r := range chk {
				if isCheck(r) {
					checkReq = r
				}
			}
			if n := strings.Count(checkReq.Text(), `type "abc" into txt_1`); n != 3 {
				t.Errorf("progress check saw %d of the last actions, want 3:\n%s", n, checkReq.Text())
			}
			rec := plansOf(events[planEv](t, d, res.RunID, orchestrator.StreamPlan), orchestrator.PlanRecovery)
			if tc.progressing {
				if len(rec) != 0 || m.planner.Calls() != 1 {
					t.Errorf("recovery plans %+v, planner calls %d; want none and 1", rec, m.planner.Calls())
				}
				return
			}
			if len(rec) != 1 || rec[0].Iteration != 4 || rec[0].Blocking {
				t.Fatalf("recovery plans = %+v, want one non-blocking asked at iteration 4", rec)
			}
			for _, want := range []string{"RECOVERY at iteration 4", "Progress check (iter 4): scripted check", "Previous plan (it did not work):\nSTRATEGIC GUIDANCE"} {
				if !strings.Contains(rec[0].Call.Prompt, want) {
					t.Errorf("recovery prompt lacks %q:\n%s", want, rec[0].Call.Prompt)
				}
			}
			// Same-element loop detection: txt_1 typed into 3 times.
			iters := events[iterEv](t, d, res.RunID, orchestrator.StreamIteration)
			for _, it := range iters {
				looped := strings.Contains(it.Call.System, "ACTION LOOP DETECTED: you acted on txt_1")
				if looped != (it.Iteration >= 4) || (it.Loop == "txt_1") != looped {
					t.Errorf("iteration %d: loop diagnosis %v (event %q), want %v", it.Iteration, looped, it.Loop, it.Iteration >= 4)
				}
			}
		})
	}
}

// Interaction 3: three or more step failures since the last plan, at least
// three iterations after the last consult, start recovery planning.
func TestStepFailureRecovery(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fails int // iterations 1..fails click a missing element
		want  bool
	}{{"four failures", 4, true}, {"two failures", 2, false}} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDesktop(t)
			d.entry(t)
			var fast counter
			m := newModels(t, func(r llmtest.Request) llmtest.Reply {
				if isCheck(r) {
					return progressing(true)
				}
				n := fast.next()
				switch {
				case n <= tc.fails:
					return llmtest.Reply{Text: stepsJSON(false, clickStep("btn_missing"))}
				case n < 5:
					return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_1", fmt.Sprintf("v%d", n)))}
				}
				return llmtest.Reply{Text: stepsJSON(true)}
			}, unusable, doneReply)
			or := d.orchestrator(t, m, nil)
			res := run(t, or, 12)
			if res.Status != runs.StatusCompleted || res.Iterations != 5 {
				t.Fatalf("result %s after %d iterations, want completed after 5", res.Status, res.Iterations)
			}
			rec := plansOf(events[planEv](t, d, res.RunID, orchestrator.StreamPlan), orchestrator.PlanRecovery)
			if !tc.want {
				if len(rec) != 0 {
					t.Errorf("recovery plans = %+v, want none after 2 failures", rec)
				}
				return
			}
			// Failures reach 3 at iteration 3, but the last consult (the
			// initial plan) was at 1: recovery waits for iteration 4.
			if len(rec) != 1 || rec[0].Iteration != 4 {
				t.Fatalf("recovery plans = %+v, want one asked at iteration 4", rec)
			}
			if !strings.Contains(rec[0].Call.Prompt, "Step 'click btn_missing' failed twice. First:") {
				t.Errorf("recovery prompt lacks the step failures:\n%s", rec[0].Call.Prompt)
			}
			iters := events[iterEv](t, d, res.RunID, orchestrator.StreamIteration)
			if len(iters[0].Steps) != 1 || iters[0].Steps[0].OK || !strings.Contains(iters[0].Steps[0].Error, "not in the map") {
				t.Errorf("iteration 1 steps = %+v, want the click failed (element not in the map)", iters[0].Steps)
			}
		})
	}
}

// Interaction 4: a completion claim the verifier rejects as the wrong task
// adds 3 to the failure counter, so the next failure starts recovery.
func TestWrongTaskFastTrack(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		wrong        bool
	}{
		{"wrong task", "wrong: the agent typed abc instead of Ada", true},
		{"not yet", "the entry is filled but OK was not pressed yet", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDesktop(t)
			d.entry(t)
			var fast, ver counter
			m := newModels(t, func(r llmtest.Request) llmtest.Reply {
				if isCheck(r) {
					return progressing(true)
				}
				switch n := fast.next(); n {
				case 1, 2:
					return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_1", fmt.Sprintf("abc%d", n)))}
				case 3:
					return llmtest.Reply{Text: stepsJSON(true)} // a false claim
				case 4:
					return llmtest.Reply{Text: stepsJSON(false, clickStep("btn_missing"))}
				}
				return llmtest.Reply{Text: stepsJSON(true)}
			}, unusable, func(r llmtest.Request) llmtest.Reply {
				if ver.next() == 1 {
					return llmtest.Reply{Text: fmt.Sprintf(`{"done":false,"reason":%q}`, tc.reason)}
				}
				return doneReply(r)
			})
			or := d.orchestrator(t, m, nil)
			res := run(t, or, 12)
			if res.Status != runs.StatusCompleted || res.Iterations != 5 {
				t.Fatalf("result %s after %d iterations, want completed after 5", res.Status, res.Iterations)
			}
			v := events[verifyEv](t, d, res.RunID, orchestrator.StreamVerify)
			if len(v) != 2 || v[0].Iteration != 3 || v[0].Done || v[0].WrongTask != tc.wrong || !v[1].Done {
				t.Fatalf("verifications = %+v, want a rejection at 3 (wrong task %v), then acceptance", v, tc.wrong)
			}
			// The rejection reaches the fast agent.
			reqs := m.fast.Requests()
			if last := reqs[len(reqs)-1]; !strings.Contains(fmt.Sprint(last.Messages), "The task is NOT done: "+tc.reason) {
				t.Errorf("the fast agent was not told the claim was rejected: %v", last.Messages)
			}
			rec := plansOf(events[planEv](t, d, res.RunID, orchestrator.StreamPlan), orchestrator.PlanRecovery)
			if tc.wrong && (len(rec) != 1 || rec[0].Iteration != 4 || !strings.Contains(rec[0].Call.Prompt, "Completion rejected (iter 3): "+tc.reason)) {
				t.Errorf("recovery plans = %+v, want one at iteration 4 (3 + 1 failures) naming the rejection", rec)
			}
			if !tc.wrong && len(rec) != 0 {
				t.Errorf("recovery plans = %+v, want none (1 + 1 failures)", rec)
			}
		})
	}
}

// Interaction 5: in the final iterations, with failures since the last
// plan, one blocking planning call; its guidance is in the same
// iteration's prompt.
func TestLastResort(t *testing.T) {
	d := newDesktop(t)
	d.entry(t)
	var fast counter
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		n := fast.next()
		switch {
		case strings.Contains(r.Messages[0].Text, "Recommended approach: Last resort"):
			return llmtest.Reply{Text: stepsJSON(true)}
		case n == 6 || n >= 8:
			return llmtest.Reply{Text: stepsJSON(false, clickStep("btn_missing"))}
		}
		return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_1", fmt.Sprintf("v%d", n)))}
	}, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Text(), "LAST RESORT") {
			time.Sleep(300 * time.Millisecond) // the loop must wait for it
			return llmtest.Reply{Text: planJSON("Last resort", "Click OK now")}
		}
		return unusable(r)
	}, doneReply)
	or := d.orchestrator(t, m, nil)
	res := run(t, or, 10)
	if res.Status != runs.StatusCompleted || res.Iterations != 7 {
		t.Fatalf("result %s after %d iterations, want completed after 7", res.Status, res.Iterations)
	}
	lr := plansOf(events[planEv](t, d, res.RunID, orchestrator.StreamPlan), orchestrator.PlanLastResort)
	// Iterations 5 and 6 are in the window but had no failures yet; the
	// failure at 6 makes iteration 7 ask, blocking.
	if len(lr) != 1 || lr[0].Iteration != 7 || !lr[0].Blocking || lr[0].Adopted != 7 {
		t.Fatalf("last-resort plans = %+v, want one blocking, asked and adopted at iteration 7", lr)
	}
	if strings.Contains(lr[0].Guidance, "screen changed") {
		t.Errorf("guidance %q warns of a change on a screen that did not change", lr[0].Guidance)
	}
	iters := events[iterEv](t, d, res.RunID, orchestrator.StreamIteration)
	if it := iters[len(iters)-1]; it.Iteration != 7 || !it.Guided || !it.Complete {
		t.Errorf("iteration 7 = %+v, want guided by the last-resort plan and complete", it)
	}
}

// The stale-UI check: the screen changes while the blocking last-resort
// plan is being made (the "user" types into the entry); the plan's
// guidance says so, and the fast agent's prompt of that iteration carries
// the warning and the fresh map.
func TestLastResortStaleScreen(t *testing.T) {
	d := newDesktop(t)
	d.entry(t)
	var fast counter
	var sawWarning bool
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		n := fast.next()
		switch {
		case strings.Contains(r.Messages[0].Text, "Recommended approach: Last resort"):
			sawWarning = strings.Contains(r.Messages[0].Text, "WARNING: the screen changed while this plan was being made") &&
				strings.Contains(r.System, "typedbyuser")
			return llmtest.Reply{Text: stepsJSON(true)}
		case n == 6 || n >= 8:
			return llmtest.Reply{Text: stepsJSON(false, clickStep("btn_missing"))}
		}
		return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_1", fmt.Sprintf("v%d", n)))}
	}, func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Text(), "LAST RESORT") {
			// Meanwhile the screen changes: text typed into the entry.
			_ = d.dev.Do(context.Background(), input.Action{Kind: input.KindType, Text: "typedbyuser"})
			time.Sleep(300 * time.Millisecond)
			return llmtest.Reply{Text: planJSON("Last resort", "Click OK now")}
		}
		return unusable(r)
	}, doneReply)
	or := d.orchestrator(t, m, nil)
	res := run(t, or, 10)
	if res.Status != runs.StatusCompleted {
		t.Fatalf("result %s, want completed", res.Status)
	}
	lr := plansOf(events[planEv](t, d, res.RunID, orchestrator.StreamPlan), orchestrator.PlanLastResort)
	if len(lr) != 1 || !strings.Contains(lr[0].Guidance, "the screen changed while this plan was being made (") {
		t.Fatalf("last-resort plans = %+v, want one whose guidance warns that the screen changed", lr)
	}
	if !sawWarning {
		t.Errorf("the fast agent's prompt after the plan lacks the warning or the fresh map (with the typed text)")
	}
}

// Stagnation: a model that keeps "waiting for the app" on an unchanged
// element map gets a recovery action only once the map has been unchanged
// 4 times in a row and for Options.RecoverAfter (10 s by default) on the
// orchestrator's clock, which here advances a fixed step per fast-agent
// call. Recovery never dismisses the dialog the task is about: Escape is
// skipped, the zenity dialog keeps running and its window stays mapped. A
// layout seen 3 times in the last 10 is noted in the failure context.
func TestStagnationRecovery(t *testing.T) {
	for _, tc := range []struct {
		name string
		step time.Duration // the clock's advance per fast-agent call
		iter int           // the iteration recovery acts at
	}{
		// 1 s a call: the count (4) is reached at iteration 5, the time
		// (10 s) only at iteration 11.
		{"time gates", time.Second, 11},
		// 10 s a call: the time is reached at iteration 2, the count at 5.
		{"count gates", 10 * time.Second, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDesktop(t)
			app := d.entry(t)
			var mu sync.Mutex
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			m := newModels(t, func(r llmtest.Request) llmtest.Reply {
				if isCheck(r) {
					return progressing(true)
				}
				mu.Lock()
				now = now.Add(tc.step)
				mu.Unlock()
				return llmtest.Reply{Text: `{"thought":"waiting for the app","steps":[],"complete":false,"summary":""}`}
			}, unusable, doneReply)
			or := d.orchestrator(t, m, func(o *orchestrator.Options) { o.Now = clock })
			res := run(t, or, tc.iter+1)
			if res.Status != orchestrator.StatusFailed {
				t.Fatalf("status = %s, want failed", res.Status)
			}
			rec := events[recoveryEv](t, d, res.RunID, orchestrator.StreamRecovery)
			if len(rec) != 1 || rec[0].Iteration != tc.iter {
				t.Fatalf("recoveries = %+v, want one at iteration %d", rec, tc.iter)
			}
			r := rec[0]
			if r.Unchanged < 4 || time.Duration(r.UnchangedMs)*time.Millisecond < orchestrator.DefaultRecoverAfter {
				t.Errorf("recovery acted after %d unchanged maps over %d ms, want at least 4 and %s", r.Unchanged, r.UnchangedMs, orchestrator.DefaultRecoverAfter)
			}
			if r.Action == "dismiss" || r.Keys == "Escape" || r.Skipped == "" {
				t.Errorf("recovery = %+v, want dismiss skipped (the dialog is the task's) and another action taken", r)
			}
			if app.Exited() {
				t.Fatalf("zenity exited: recovery closed the task's own dialog (stdout %q)", app.Stdout())
			}
			ws, err := d.conn.Windows(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			mapped := false
			for _, w := range ws {
				if w.Title == "Acu Entry" && w.Mapped {
					mapped = true
				}
			}
			if !mapped {
				t.Errorf("the Acu Entry window is no longer mapped: %+v", ws)
			}
			iters := events[iterEv](t, d, res.RunID, orchestrator.StreamIteration)
			for _, it := range iters {
				noted := strings.Contains(it.Call.System, "Screen structure stagnant: same layout seen 3 times in last 10 iterations")
				if noted != (it.Iteration >= 3) {
					t.Errorf("iteration %d: stagnation noted %v, want %v", it.Iteration, noted, it.Iteration >= 3)
				}
			}
			last := iters[len(iters)-1].Call.System
			if !strings.Contains(last, "Element map unchanged") || strings.Contains(last, "pressed Escape") {
				t.Errorf("the recovery is not in the failure context, or Escape is:\n%s", last)
			}
		})
	}
}

// Intervention: pointer input acu did not make pauses the run (recorded),
// the steps planned on the stale map are dropped, and the run resumes once
// the user stops.
func TestInterventionPauses(t *testing.T) {
	d := newDesktop(t)
	d.entry(t)
	user, err := display.Open(context.Background(), d.dpy, display.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(user.Close)
	hand, err := input.New(user, input.Area{W: int(user.Screen.Width), H: int(user.Screen.Height)}, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hand.Close() })
	var fast counter
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		switch fast.next() {
		case 1:
			return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_1", "abc"))}
		case 2:
			// The user grabs the mouse while the model thinks.
			if err := hand.Move(context.Background(), 100, 900); err != nil {
				t.Errorf("move the pointer: %v", err)
			}
			return llmtest.Reply{Text: stepsJSON(false, typeStep("txt_1", "zzz"))}
		}
		return llmtest.Reply{Text: stepsJSON(true)}
	}, unusable, doneReply)
	or := d.orchestrator(t, m, func(o *orchestrator.Options) {
		o.Watch = orchestrator.NewPointerWatch(d.conn)
		o.PauseQuiet = 300 * time.Millisecond
	})
	res := run(t, or, 10)
	if res.Status != runs.StatusCompleted {
		t.Fatalf("status = %s, want completed", res.Status)
	}
	checkPausedAtIteration2(t, d, m, res, "")
}

// A fast model that keeps failing (after the client's own retries) fails
// the task after 3 iterations instead of burning all 50.
func TestModelErrorsFailTask(t *testing.T) {
	d := newDesktop(t)
	d.entry(t)
	m := newModels(t, llmtest.Text("unused"), unusable, doneReply)
	m.fast.Fail(llmtest.Fault{Kind: llmtest.Status, Status: 500, Message: "backend down", Times: -1})
	or := d.orchestrator(t, m, nil)
	res := run(t, or, 50)
	if res.Status != orchestrator.StatusFailed || res.Iterations != 3 || !strings.Contains(res.Error, "failed 3 times in a row") {
		t.Errorf("result %s after %d iterations: %q; want failed after 3 model errors", res.Status, res.Iterations, res.Error)
	}
}

// A plan that recommends splitting the work across two windows tiles them
// side by side (left and right halves), recorded as a split event.
func TestPlanSplitArrangesWindows(t *testing.T) {
	d := newDesktop(t)
	d.entry(t)
	d.session.StartApp(t, "zenity", "--question", "--title=Acu Question", "--text=Copy it?")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		ws, _ := d.conn.Windows(ctx)
		n := 0
		for _, w := range ws {
			if w.Title == "Acu Entry" || w.Title == "Acu Question" {
				n++
			}
		}
		if n == 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the two zenity windows did not appear")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var fast counter
	m := newModels(t, func(r llmtest.Request) llmtest.Reply {
		if isCheck(r) {
			return progressing(true)
		}
		if fast.next() >= 3 {
			return llmtest.Reply{Text: stepsJSON(true)}
		}
		return llmtest.Reply{Text: stepsJSON(false)}
	}, llmtest.Text(`{"approaches":[{"name":"Side by side","description":"copy from one dialog to the other","steps":["read","type"]}],"recommended":0,
		"split":{"windows":["Acu Question","Acu Entry"],"reason":"both are needed at once"}}`), doneReply)
	or := d.orchestrator(t, m, func(o *orchestrator.Options) { o.Arrange = d.arranger(t) })
	res := run(t, or, 10)
	if res.Status != runs.StatusCompleted {
		t.Fatalf("status = %s", res.Status)
	}
	type splitEv struct {
		Windows [2]string `json:"windows"`
		Error   string    `json:"error"`
	}
	sp := events[splitEv](t, d, res.RunID, orchestrator.StreamSplit)
	if len(sp) != 1 || sp[0].Windows != [2]string{"Acu Question", "Acu Entry"} || sp[0].Error != "" {
		t.Fatalf("split events = %+v, want one arranging Acu Question | Acu Entry", sp)
	}
	ws, err := d.conn.Windows(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	half := int(d.conn.Screen.Width) / 2
	for _, w := range ws {
		switch w.Title {
		case "Acu Question":
			if w.X != 0 || w.W != half {
				t.Errorf("Acu Question at %v, want the left half", w.Rect())
			}
		case "Acu Entry":
			if w.X != half || w.W != half {
				t.Errorf("Acu Entry at %v, want the right half", w.Rect())
			}
		}
	}
}
