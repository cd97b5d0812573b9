package llm

import (
	"strings"
	"sync"
)

// Price is a model's list price in US dollars per million tokens.
type Price struct {
	InputPerMTok  float64
	OutputPerMTok float64
}

// Cost is the price of one call's usage in US dollars.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.InputTokens)*p.InputPerMTok + float64(u.OutputTokens)*p.OutputPerMTok) / 1e6
}

// PriceTable maps model names to prices. Lookup tolerates a provider prefix
// ("google/"), a "models/" prefix, case and a trailing date stamp
// ("claude-haiku-4-5-20251001"), so one entry serves OpenRouter's and the
// provider's own names.
type PriceTable map[string]Price

// DefaultPrices returns the seeds' and acu's default models at their list
// prices, under both OpenRouter's and the providers' own names. Override or
// extend them through Options.Prices (ACU_MODEL_PRICES). A model in neither
// costs "unknown" unless the endpoint reports its own cost or is local.
func DefaultPrices() PriceTable {
	t := PriceTable{}
	for name, p := range map[string]Price{
		"google/gemini-2.0-flash-lite-001": {0.075, 0.30},
		"google/gemini-2.0-flash-lite":     {0.075, 0.30},
		"google/gemini-2.0-flash-001":      {0.10, 0.40},
		"google/gemini-2.0-flash":          {0.10, 0.40},
		"google/gemini-2.5-flash-lite":     {0.10, 0.40},
		"anthropic/claude-haiku-4-5":       {1, 5},
		"anthropic/claude-haiku-4.5":       {1, 5},
		"anthropic/claude-opus-4-1":        {15, 75},
		"anthropic/claude-opus-4.1":        {15, 75},
		"anthropic/claude-sonnet-4-5":      {3, 15}, // acu computer's default models
		"anthropic/claude-sonnet-4.5":      {3, 15},
		"openai/computer-use-preview":      {3, 12},
	} {
		t[name] = p
		t[bareModel(name)] = p
	}
	return t
}

// Lookup finds a model's price: the exact name first, then the normalised one
// (see PriceTable).
func (t PriceTable) Lookup(model string) (Price, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	want := normModel(model)
	if want == "" {
		return Price{}, false
	}
	for name, p := range t {
		if normModel(name) == want {
			return p, true
		}
	}
	return Price{}, false
}

// priceIndex is a PriceTable pre-normalised for lookups on every call.
type priceIndex map[string]Price

// newPriceIndex merges overrides over the defaults; an override wins over a
// default that normalises to the same name.
func newPriceIndex(overrides PriceTable) priceIndex {
	idx := priceIndex{}
	for name, p := range DefaultPrices() {
		idx[normModel(name)] = p
	}
	for name, p := range overrides {
		idx[normModel(name)] = p
	}
	return idx
}

func (idx priceIndex) lookup(model string) (Price, bool) {
	p, ok := idx[normModel(model)]
	return p, ok
}

// bareModel strips everything up to the last "/": "google/x" -> "x",
// "models/x" -> "x".
func bareModel(m string) string {
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		return m[i+1:]
	}
	return m
}

// normModel lower-cases, strips prefixes and a trailing -YYYYMMDD or
// @YYYYMMDD date stamp.
func normModel(m string) string {
	m = strings.ToLower(strings.TrimSpace(bareModel(m)))
	if n := len(m); n > 9 && (m[n-9] == '-' || m[n-9] == '@') && allDigits(m[n-8:]) {
		m = m[:n-9]
	}
	return m
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Totals is accumulated usage and cost.
type Totals struct {
	Calls        int64 // successful calls
	Failures     int64 // calls that ended in an error (not counting refusals by an open breaker)
	InputTokens  int64
	OutputTokens int64
	// CostUSD is the cost of the calls whose cost is known; Unpriced counts
	// the successful calls whose cost is not (no provider figure, no price),
	// which CostUSD leaves out.
	CostUSD  float64
	Unpriced int64
}

// CostKnown reports whether CostUSD is the whole cost: no call was unpriced.
func (t Totals) CostKnown() bool { return t.Unpriced == 0 }

func (t *Totals) add(ok bool, u Usage, cost float64, known bool) {
	if ok {
		t.Calls++
		if !known {
			t.Unpriced++
		}
	} else {
		t.Failures++
	}
	t.InputTokens += int64(u.InputTokens)
	t.OutputTokens += int64(u.OutputTokens)
	t.CostUSD += cost
}

// Ledger accounts usage and cost in total and per run. One Ledger may be
// shared by several clients (Options.Ledger) so a run's cost spans roles.
// It keeps the most recent MaxRuns runs (default 10000); Forget drops one.
type Ledger struct {
	MaxRuns int

	mu    sync.Mutex
	total Totals
	runs  map[string]*Totals
	order []string
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{runs: map[string]*Totals{}} }

func (l *Ledger) add(runID string, ok bool, u Usage, cost float64, known bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total.add(ok, u, cost, known)
	if runID == "" {
		return
	}
	if l.runs == nil {
		l.runs = map[string]*Totals{}
	}
	rt, found := l.runs[runID]
	if !found {
		rt = &Totals{}
		l.runs[runID] = rt
		l.order = append(l.order, runID)
		max := l.MaxRuns
		if max <= 0 {
			max = 10000
		}
		for len(l.runs) > max && len(l.order) > 0 {
			delete(l.runs, l.order[0])
			l.order = l.order[1:]
		}
	}
	rt.add(ok, u, cost, known)
}

// Totals returns everything accounted so far.
func (l *Ledger) Totals() Totals {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Run returns one run's totals (zero when unknown or forgotten).
func (l *Ledger) Run(runID string) Totals {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rt, ok := l.runs[runID]; ok {
		return *rt
	}
	return Totals{}
}

// Cost returns a run's cost in US dollars, or the total when runID is "";
// it leaves out unpriced calls (see Totals.Unpriced).
func (l *Ledger) Cost(runID string) float64 {
	if runID == "" {
		return l.Totals().CostUSD
	}
	return l.Run(runID).CostUSD
}

// Forget drops a finished run's totals.
func (l *Ledger) Forget(runID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.runs[runID]; !ok {
		return
	}
	delete(l.runs, runID)
	for i, id := range l.order {
		if id == runID {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
}
