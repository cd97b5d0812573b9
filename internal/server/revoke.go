package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// ErrTokenRevoked is the cause of a request's context ended because its
// token was revoked while it was open.
var ErrTokenRevoked = errors.New("the request's token was revoked")

// Revocation lets the server end what a token has open (SSE, live frames,
// blocking waits, MCP streams) when the token is revoked, which happens in
// another process (`acu token revoke` writes the database). While a request
// made with an extra token is open, the server asks Revoked every Every
// (default 500 ms) about the tokens of its open requests; nothing is asked
// while none is open. A revoked token's open requests have their contexts
// cancelled (cause ErrTokenRevoked), then OnRevoke runs (the MCP endpoint
// closes the token's sessions).
type Revocation struct {
	// Revoked returns which of ids are revoked or gone; nil turns the
	// watch off.
	Revoked  func(ctx context.Context, ids []string) ([]string, error)
	Every    time.Duration
	OnRevoke func(id string)
}

// DefaultRevocationPoll is how often open requests' tokens are checked.
const DefaultRevocationPoll = 500 * time.Millisecond

// tokenLives ties each open request of an extra token to that token's
// life: one context per token, cancelled when the token is revoked.
type tokenLives struct {
	mu sync.Mutex
	m  map[string]*tokenLife
}

type tokenLife struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	open   int // requests holding it
}

// hold returns a context for a request of token id, done when the request
// ends (ctx) or the token is revoked; release it when the request ends.
func (t *tokenLives) hold(ctx context.Context, id string) (context.Context, func()) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]*tokenLife{}
	}
	l := t.m[id]
	if l == nil {
		l = &tokenLife{}
		l.ctx, l.cancel = context.WithCancelCause(context.Background())
		t.m[id] = l
	}
	l.open++
	t.mu.Unlock()
	rctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(l.ctx, func() { cancel(context.Cause(l.ctx)) })
	return rctx, func() {
		stop()
		cancel(context.Canceled)
		t.mu.Lock()
		defer t.mu.Unlock()
		if l.open--; l.open == 0 && t.m[id] == l {
			delete(t.m, id)
		}
	}
}

// openIDs lists the tokens with open requests.
func (t *tokenLives) openIDs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]string, 0, len(t.m))
	for id := range t.m {
		ids = append(ids, id)
	}
	return ids
}

// revoke cancels every open request of token id.
func (t *tokenLives) revoke(id string) {
	t.mu.Lock()
	l := t.m[id]
	delete(t.m, id)
	t.mu.Unlock()
	if l != nil {
		l.cancel(ErrTokenRevoked)
	}
}

// watchRevocations checks the tokens of open requests until ctx ends.
func (s *Server) watchRevocations(ctx context.Context) {
	rv := s.opts.Revocation
	if rv.Revoked == nil {
		return
	}
	every := rv.Every
	if every <= 0 {
		every = DefaultRevocationPoll
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.checkRevocations(ctx)
	}
}

// checkRevocations asks once about the tokens of open requests and ends
// those of revoked ones.
func (s *Server) checkRevocations(ctx context.Context) {
	rv := s.opts.Revocation
	ids := s.lives.openIDs()
	if len(ids) == 0 {
		return
	}
	revoked, err := rv.Revoked(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("check open requests' tokens for revocation; retrying", "err", err)
		}
		return
	}
	for _, id := range revoked {
		s.log.Info("token revoked: ending its open requests and sessions", "token", id)
		s.lives.revoke(id)
		if rv.OnRevoke != nil {
			rv.OnRevoke(id)
		}
	}
}

// holdToken binds r to its extra token's life (a no-op for the daemon's
// token file and page sessions, which are not revoked this way).
func (s *Server) holdToken(r *http.Request, who Principal) (*http.Request, func()) {
	if !who.revocable || s.opts.Revocation.Revoked == nil {
		return r, func() {}
	}
	ctx, release := s.lives.hold(r.Context(), who.ID)
	return r.WithContext(ctx), release
}
