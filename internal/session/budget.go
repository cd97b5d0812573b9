package session

import (
	"errors"
	"fmt"

	"github.com/acu-dev/acu/internal/llm"
)

// Budget bounds a session: MaxSteps model turns and MaxCost US dollars of
// model cost; zero means no bound.
type Budget struct {
	MaxSteps int
	MaxCost  float64
}

// StepsSpent reports whether n turns use up the step budget.
func (b Budget) StepsSpent(n int) bool { return b.MaxSteps > 0 && n >= b.MaxSteps }

// Pricer is a model client that can tell before a call whether the cost
// of its calls will be known (*llm.Client).
type Pricer interface {
	CheckPriced(model string) error
}

// CheckPriced is the unpriced-model refusal: with a cost budget, a model
// whose calls' cost cannot be known (no price, no provider figure, not a
// local server) is refused before the first call, since the budget could
// not be kept. A model that is not a Pricer, or no cost budget, passes.
// The error wraps llm.ErrUnpriced.
func (b Budget) CheckPriced(m any, model string) error {
	p, ok := m.(Pricer)
	if !ok || b.MaxCost <= 0 {
		return nil
	}
	return p.CheckPriced(model)
}

// Limit kinds.
const (
	LimitSteps    = "steps"    // the step budget is spent
	LimitCost     = "cost"     // the cost budget is spent
	LimitUnpriced = "unpriced" // a call came back with no cost under a cost budget
)

// LimitError ends a session whose budget is spent or cannot be kept.
type LimitError struct {
	Kind  string
	Steps int     // the step budget (LimitSteps)
	Max   float64 // the cost budget (LimitCost, LimitUnpriced)
	Spent float64 // the known cost so far
	Model string  // the model whose call had no cost (LimitUnpriced)
}

func (e *LimitError) Error() string {
	switch e.Kind {
	case LimitSteps:
		return fmt.Sprintf("turn limit of %d reached", e.Steps)
	case LimitUnpriced:
		return fmt.Sprintf("cost limit of $%.4f cannot be kept: the call to model %s came back with no cost and the model has no price "+
			"(set its price in ACU_MODEL_PRICES); $%.4f known so far", e.Max, e.Model, e.Spent)
	}
	return fmt.Sprintf("cost limit of $%.4f reached ($%.4f spent)", e.Max, e.Spent)
}

// IsLimit reports whether err is a spent budget.
func IsLimit(err error) bool {
	var le *LimitError
	return errors.As(err, &le)
}

// Meter counts a session's turns, tokens and cost against its Budget. It
// is not safe for concurrent use: the loop's goroutine owns it.
type Meter struct {
	Budget Budget
	// Turns is the turns begun (Step).
	Turns     int
	TokensIn  int
	TokensOut int
	// CostUSD is the known cost; Unpriced counts the calls whose cost was
	// unknown (CostUSD is then a lower bound).
	CostUSD  float64
	Unpriced int
	// ModelMs is the time spent in model calls that answered.
	ModelMs float64
}

// Step begins the next turn and returns its number, or a LimitError when
// the step budget was spent by the turns before it.
func (m *Meter) Step() (int, error) {
	if m.Budget.StepsSpent(m.Turns) {
		return m.Turns, &LimitError{Kind: LimitSteps, Steps: m.Budget.MaxSteps}
	}
	m.Turns++
	return m.Turns, nil
}

// Add counts a model call's reply. It returns a LimitError when the cost
// budget is spent, or cannot be kept because the call came back with no
// cost.
func (m *Meter) Add(r llm.Response) error {
	m.TokensIn += r.Usage.InputTokens
	m.TokensOut += r.Usage.OutputTokens
	m.ModelMs += float64(r.Latency.Microseconds()) / 1000
	return m.Charge(r.CostUSD, r.CostKnown, r.Model)
}

// Charge counts a call's cost alone (known: the cost is known), as Add.
func (m *Meter) Charge(cost float64, known bool, model string) error {
	m.CostUSD += cost
	if !known {
		m.Unpriced++
	}
	if m.Budget.MaxCost <= 0 {
		return nil
	}
	if !known {
		return &LimitError{Kind: LimitUnpriced, Max: m.Budget.MaxCost, Spent: m.CostUSD, Model: model}
	}
	if m.CostUSD >= m.Budget.MaxCost {
		return &LimitError{Kind: LimitCost, Max: m.Budget.MaxCost, Spent: m.CostUSD}
	}
	return nil
}
