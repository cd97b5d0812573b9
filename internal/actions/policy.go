package actions

import "github.com/acu-dev/acu/internal/gate"

// Policy says where acting is allowed; the gate applies it (gate.Policy).
type Policy = gate.Policy

// DefaultQuiet is Policy.Quiet's default.
const DefaultQuiet = gate.DefaultQuiet
