package gate

import "context"

// Caller is who an effect is for, carried in the context so that every
// layer between a surface and the gate passes it on untouched: the gate
// audits every effect with it, and exempts the human at the live view
// (User) from the user-first pause, never from the deny-list.
type Caller struct {
	// Token is the credential's name: "token-file", "session" or an extra
	// token's id and name; empty for an engine acting on its own.
	Token string
	// Engine is what acts: api, mcp, computer, agent, task, act (acu act
	// without a daemon), takeover, fleet.
	Engine string
	// Run is the run the effect belongs to, when there is one.
	Run string
	// Client is the X-Acu-Client a surface was told.
	Client string
	// User marks the human at the live view's take-over.
	User bool
}

// String names the caller for logs and audit events.
func (c Caller) String() string {
	s := c.Engine
	if s == "" {
		s = "unknown"
	}
	if c.Token != "" {
		s += " token " + c.Token
	}
	if c.Run != "" {
		s += " run " + c.Run
	}
	if c.Client != "" {
		s += " client " + c.Client
	}
	return s
}

type callerKey struct{}

// WithCaller returns ctx carrying who.
func WithCaller(ctx context.Context, who Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, who)
}

// CallerOf is the caller ctx carries (the zero Caller, named "unknown" in
// the audit, when none).
func CallerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}
