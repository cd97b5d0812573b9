package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/acu-dev/acu/internal/elements"
	"github.com/acu-dev/acu/internal/llm"
)

// StreamWindowAgent is the stream of the split screen's window agents: one
// event per agent turn.
const StreamWindowAgent = "window_agent"

// WindowAgentEvent is the data of a StreamWindowAgent event.
type WindowAgentEvent struct {
	Window    string   `json:"window"`
	Iteration int      `json:"iteration"` // the main loop's iteration the split started at
	Turn      int      `json:"turn"`
	Steps     []Action `json:"steps,omitempty"`
	Complete  bool     `json:"complete"`
	Summary   string   `json:"summary,omitempty"`
	Call      Call     `json:"call"`
	Error     string   `json:"error,omitempty"`
}

// roleWindow is the window agents' model calls' role.
const roleWindow = "window"

// windowAgentTurns bounds each window agent.
const windowAgentTurns = 10

// windowAgentSystem heads a window agent's system prompt: the fast agent's
// rules, for one window.
const windowAgentSystem = "WINDOW AGENT: you work in one window of a split screen while another agent works in the other window. " +
	"The element map shows your window only; act only on its ids, and set \"complete\" when your part is done.\n\n"

// windowAgents runs one fast agent per window of a split in parallel, each
// on its part of the task and on the map of its window only, until both
// say their part is done or run out of turns; then the main loop goes on.
// The model calls, the expensive part, overlap; the steps are carried out
// one at a time (the pointer and keyboard are shared), each on a fresh map
// so that one agent's change is not taken for the other's effect.
func (l *loop) windowAgents(ctx context.Context, i int, windows, tasks [2]string) {
	var (
		wg     sync.WaitGroup
		shared windowShared
		calls  [2][]Call
	)
	for k := range windows {
		wg.Go(func() { calls[k] = l.windowAgent(ctx, i, windows[k], tasks[k], &shared) })
	}
	wg.Wait()
	for _, cs := range calls {
		for _, c := range cs {
			l.addCost(c)
		}
	}
	l.progress(ctx, fmt.Sprintf("window agents for %q and %q done at iteration %d", windows[0], windows[1], i))
}

// windowShared is what the two window agents take turns at: the input
// devices (with the map reads around a step) and the event stream.
type windowShared struct {
	input, emit sync.Mutex
}

// windowAgent runs one window's agent and returns its model calls, whose
// cost the caller adds.
func (l *loop) windowAgent(ctx context.Context, i int, window, task string, sh *windowShared) (calls []Call) {
	inputMu := &sh.input
	emit := func(ev WindowAgentEvent) {
		sh.emit.Lock()
		defer sh.emit.Unlock()
		l.emit(ctx, StreamWindowAgent, ev)
	}
	var sb strings.Builder
	var history []llm.Message
	for turn := 1; turn <= windowAgentTurns && ctx.Err() == nil; turn++ {
		ev := WindowAgentEvent{Window: window, Iteration: i, Turn: turn}
		inputMu.Lock()
		m, err := l.opts.Elements.Extract(ctx)
		inputMu.Unlock()
		if err != nil {
			ev.Error = err.Error()
			emit(ev)
			return calls
		}
		view := m.Only(window)
		system := windowAgentSystem + fastPrompt(&sb, turn, task+"\n(your part of: "+l.task+")", view, "", nil)
		cur := fmt.Sprintf("Turn %d of %d in window %q. What are your next steps?", turn, windowAgentTurns, window)
		msgs := append(append([]llm.Message(nil), history...), llm.Message{Role: "user", Text: cur})
		resp, c := l.chat(ctx, roleWindow, l.opts.Fast, llm.Request{System: system, Messages: msgs, MaxTokens: l.opts.MaxTokens, JSON: true, RunID: l.runID}, cur)
		ev.Call = c
		calls = append(calls, c)
		if c.Error != "" {
			ev.Error = c.Error
			emit(ev)
			return calls
		}
		history = append(history, llm.Message{Role: "user", Text: cur}, llm.Message{Role: "assistant", Text: resp.Text})
		reply, err := parseFast(resp.Text)
		if err != nil {
			ev.Error = err.Error()
			emit(ev)
			continue
		}
		ev.Complete, ev.Summary = reply.Complete, reply.Summary
		for _, fs := range reply.Steps {
			st, err := fs.step()
			a := Action{Iteration: i, Step: fmt.Sprintf("%s %s", fs.Action, fs.Target), Kind: st.Kind, Target: st.Target}
			if err == nil {
				a.Step = st.String()
				if _, ok := view.Get(st.Target); !ok && st.Target != "" {
					err = fmt.Errorf("%s is not in window %q", st.Target, window)
				}
			}
			if err == nil {
				inputMu.Lock()
				fresh, ferr := l.opts.Elements.Extract(ctx)
				if ferr == nil {
					var res elements.Result
					res, err = l.opts.Elements.Execute(ctx, fresh, st)
					a.Via = res.Via
				} else {
					err = ferr
				}
				inputMu.Unlock()
			}
			if err != nil {
				a.fail(err)
				ev.Steps = append(ev.Steps, a)
				history = append(history, llm.Message{Role: "user", Text: fmt.Sprintf("WARNING: step %q didn't work: %s.", a.Step, a.Error)})
				break
			}
			a.OK = true
			ev.Steps = append(ev.Steps, a)
		}
		emit(ev)
		if reply.Complete && len(reply.Steps) == 0 {
			return calls
		}
	}
	return calls
}
