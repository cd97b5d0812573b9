package main

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/mcpserver"
	"github.com/acu-dev/acu/internal/secret"
	"github.com/acu-dev/acu/internal/server"
)

// mcpEndpoint serves the daemon's /mcp: one MCP server per session, whose
// tools call the API with the caller's own token (an extra token, the
// token file, page sessions), so a token's scope holds for the tools as
// for the routes. A server per session, not per caller: sessions of one
// caller sharing a server held each other up (a tool waiting on its
// client's elicitation answer stalled another session's requests until
// they timed out, seen in the conformance suite). Each session is bound to the identity that opened it
// (mcpserver.BindSessions): another token sending its Mcp-Session-Id gets
// 403 and runs nothing. Revoking a token closes its sessions.
type mcpEndpoint struct {
	base  string
	token secret.String // the daemon's, for page sessions
	opts  mcpserver.Options
	log   *slog.Logger

	mu      sync.Mutex
	servers map[string][]*mcp.Server // by identity (server.Principal.ID)
	closing sync.WaitGroup           // sessions of revoked tokens being closed
}

func newMCPEndpoint(base string, token secret.String, opts mcpserver.Options, log *slog.Logger) *mcpEndpoint {
	return &mcpEndpoint{base: base, token: token, opts: opts, log: log, servers: map[string][]*mcp.Server{}}
}

// identity is who sent an authenticated request.
func identity(r *http.Request) string { return server.PrincipalOf(r.Context()).ID }

// Handler is the endpoint behind the daemon's authentication middleware.
func (m *mcpEndpoint) Handler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(m.server, &mcp.StreamableHTTPOptions{Logger: m.log,
		// An event store makes the SDK open each stream with a priming
		// event (an id to resume from) and replay after a reconnect.
		EventStore: mcp.NewMemoryEventStore(nil)})
	return mcpserver.BindSessions(mcpserver.WithSSERetry(h), identity)
}

// server returns a new session's MCP server, for the caller's identity.
func (m *mcpEndpoint) server(r *http.Request) *mcp.Server {
	id := identity(r)
	tok := m.token.Reveal()
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		tok = strings.TrimPrefix(h, "Bearer ")
	}
	s := mcpserver.New(api.NewClient(m.base, tok), m.opts)
	m.mu.Lock()
	defer m.mu.Unlock()
	// Forget the caller's servers whose sessions have all ended (a server
	// handed out just before may not have its session yet: the newest
	// few are kept).
	list := m.servers[id]
	kept := list[:0]
	for i, old := range list {
		if i >= len(list)-4 || hasSessions(old) {
			kept = append(kept, old)
		}
	}
	m.servers[id] = append(kept, s)
	return s
}

func hasSessions(s *mcp.Server) bool {
	for range s.Sessions() {
		return true
	}
	return false
}

// Revoke closes every MCP session opened with token id (revoked) and
// forgets its server.
func (m *mcpEndpoint) Revoke(id string) {
	m.mu.Lock()
	list := m.servers[id]
	delete(m.servers, id)
	m.mu.Unlock()
	// Close waits for the session's running tool calls, whose own API
	// requests end with the token; the revocation watch does not wait.
	for _, s := range list {
		for ss := range s.Sessions() {
			m.closing.Go(func() {
				_ = ss.Close()
				m.log.Info("closed an MCP session of a revoked token", "token", id, "session", ss.ID())
			})
		}
	}
}

// Wait waits for sessions being closed by Revoke.
func (m *mcpEndpoint) Wait() { m.closing.Wait() }
