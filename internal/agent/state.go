package agent

// State is GET /state: the seed's fields (phase, error, turn, msg_id,
// pending_seq, annotated_seq, raw_b64, bboxes, actions, observation,
// vlm_json) plus acu's additions. The PNG fields marshal as base64.
type State struct {
	Phase        string     `json:"phase"`
	Error        string     `json:"error,omitempty"`
	Turn         int        `json:"turn"`
	MsgID        int        `json:"msg_id"`
	PendingSeq   int        `json:"pending_seq"`
	AnnotatedSeq int        `json:"annotated_seq"`
	RawPNG       []byte     `json:"raw_b64"`
	BBoxes       []Box      `json:"bboxes"`
	Actions      []Action   `json:"actions"`
	Observation  string     `json:"observation"`
	VLMJSON      string     `json:"vlm_json"`
	AnnotatedPNG []byte     `json:"annotated_b64,omitempty"`
	Rejected     []Rejected `json:"rejected,omitempty"`
	// Trail is the actions of the last trail_turns turns, newest first, for
	// a panel that draws the overlays itself.
	Trail     [][]Action `json:"trail"`
	Annotator string     `json:"annotator"`
	Paused    bool       `json:"paused"`
	RunID     string     `json:"run_id,omitempty"`
	RunDir    string     `json:"run_dir,omitempty"`
	CostUSD   float64    `json:"cost_usd"`
	// ModelMs is the session's time in model calls that answered.
	ModelMs float64 `json:"model_ms"`
	// CostUnknown is set once a call of the session came back with no
	// cost (no provider figure, no price): CostUSD is then only the part
	// that is known, and UnpricedCalls counts the rest.
	CostUnknown   bool `json:"cost_unknown,omitempty"`
	UnpricedCalls int  `json:"unpriced_calls,omitempty"`
	Width         int  `json:"width,omitempty"`
	Height        int  `json:"height,omitempty"`
}

// State returns a snapshot of the loop's state.
func (a *Agent) State() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.st
}
