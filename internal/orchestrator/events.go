package orchestrator

import (
	"fmt"
	"strings"
)

// This file holds the events a task records on its run.

// Call is one model call as it is recorded in an event.
type Call struct {
	Role      string  `json:"role"`
	Model     string  `json:"model,omitempty"`
	System    string  `json:"system,omitempty"`
	Prompt    string  `json:"prompt"`
	Images    int     `json:"images,omitempty"`
	Reply     string  `json:"reply,omitempty"`
	LatencyMs float64 `json:"latencyMs"`
	CostUSD   float64 `json:"costUsd"`
	// CostUnknown: the call succeeded but its cost is unknown (no
	// provider figure, no price); CostUSD is then 0, not its cost.
	CostUnknown bool   `json:"costUnknown,omitempty"`
	Error       string `json:"error,omitempty"`
}

// IterationEvent is the data of a StreamIteration event.
type IterationEvent struct {
	Iteration  int      `json:"iteration"`
	Call       Call     `json:"call"`
	Thought    string   `json:"thought,omitempty"`
	Steps      []Action `json:"steps,omitempty"`
	Complete   bool     `json:"complete,omitempty"`
	Elements   int      `json:"elements"`
	LayoutHash uint32   `json:"layoutHash"`
	Stagnant   bool     `json:"stagnant,omitempty"`
	Guided     bool     `json:"guided"` // a plan's guidance was in the prompt
	Loop       string   `json:"loop,omitempty"`
	Error      string   `json:"error,omitempty"`
	// FrameHash names the frame the map was read from, kept for the run
	// timeline (GET /v1/frames/{hash}) when Options.Frames is set.
	FrameHash string `json:"frameHash,omitempty"`
}

// PlanEvent is the data of a StreamPlan event.
type PlanEvent struct {
	Kind      string `json:"kind"`
	Iteration int    `json:"iteration"`         // when it was asked for
	Adopted   int    `json:"adopted,omitempty"` // the iteration whose prompt first carried it
	Blocking  bool   `json:"blocking"`
	Call      Call   `json:"call"`
	Plan      *Plan  `json:"plan,omitempty"`
	Guidance  string `json:"guidance,omitempty"`
	Error     string `json:"error,omitempty"`
}

// CheckEvent is the data of a StreamCheck event.
type CheckEvent struct {
	Iteration   int    `json:"iteration"`
	Call        Call   `json:"call"`
	Progressing bool   `json:"progressing"`
	Reason      string `json:"reason"`
	Recovery    bool   `json:"recovery"` // recovery planning was started
	Error       string `json:"error,omitempty"`
}

// VerifyEvent is the data of a StreamVerify event.
type VerifyEvent struct {
	Iteration int    `json:"iteration"`
	Call      Call   `json:"call"`
	Done      bool   `json:"done"`
	Reason    string `json:"reason"`
	WrongTask bool   `json:"wrongTask,omitempty"`
	Error     string `json:"error,omitempty"`
}

// RecoveryEvent is the data of a StreamRecovery event.
type RecoveryEvent struct {
	Iteration int    `json:"iteration"`
	Action    string `json:"action"` // dismiss, scroll, back
	Keys      string `json:"keys,omitempty"`
	Reason    string `json:"reason"`
	// Unchanged is how many maps in a row were unchanged, UnchangedMs for
	// how long (by Options.Now) when recovery acted.
	Unchanged   int   `json:"unchanged"`
	UnchangedMs int64 `json:"unchangedMs"`
	// Skipped says why dismiss (Escape) was not pressed: the active window
	// is one the task is about, or no active window is known.
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

// InterventionEvent is the data of a StreamIntervention event.
type InterventionEvent struct {
	Iteration int    `json:"iteration"`
	Phase     string `json:"phase"` // paused, resumed
	Detail    string `json:"detail,omitempty"`
}

func iterationLine(ev IterationEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "iteration %d:", ev.Iteration)
	if len(ev.Steps) == 0 {
		b.WriteString(" no steps")
	}
	for _, a := range ev.Steps {
		if a.OK {
			fmt.Fprintf(&b, " %s (ok);", a.Step)
		} else {
			fmt.Fprintf(&b, " %s (failed);", a.Step)
		}
	}
	if ev.Complete {
		b.WriteString(" claims complete")
	}
	return strings.TrimSuffix(b.String(), ";")
}
