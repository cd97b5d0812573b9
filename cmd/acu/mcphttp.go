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

// mcpEndpoint serves the daemon's /mcp: one MCP server per caller identity
// (an extra token, the token file, page sessions), whose tools call the API
// with that caller's own token, so a token's scope holds for the tools as
// for the routes. Each session is bound to the identity that opened it
// (mcpserver.BindSessions): another token sending its Mcp-Session-Id gets
// 403 and runs nothing. Revoking a token closes its sessions.
type mcpEndpoint struct {
	base  string
	token secret.String // the daemon's, for page sessions
	opts  mcpserver.Options
	log   *slog.Logger

	mu      sync.Mutex
	servers map[string]*mcp.Server // by identity (server.Principal.ID)
	closing sync.WaitGroup         // sessions of revoked tokens being closed
}

func newMCPEndpoint(base string, token secret.String, opts mcpserver.Options, log *slog.Logger) *mcpEndpoint {
	return &mcpEndpoint{base: base, token: token, opts: opts, log: log, servers: map[string]*mcp.Server{}}
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

// server returns the caller's MCP server, made on its first request.
func (m *mcpEndpoint) server(r *http.Request) *mcp.Server {
	id := identity(r)
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.servers[id]; s != nil {
		return s
	}
	tok := m.token.Reveal()
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		tok = strings.TrimPrefix(h, "Bearer ")
	}
	s := mcpserver.New(api.NewClient(m.base, tok), m.opts)
	m.servers[id] = s
	return s
}

// Revoke closes every MCP session opened with token id (revoked) and
// forgets its server.
func (m *mcpEndpoint) Revoke(id string) {
	m.mu.Lock()
	s := m.servers[id]
	delete(m.servers, id)
	m.mu.Unlock()
	if s == nil {
		return
	}
	// Close waits for the session's running tool calls, whose own API
	// requests end with the token; the revocation watch does not wait.
	for ss := range s.Sessions() {
		m.closing.Go(func() {
			_ = ss.Close()
			m.log.Info("closed an MCP session of a revoked token", "token", id, "session", ss.ID())
		})
	}
}

// Wait waits for sessions being closed by Revoke.
func (m *mcpEndpoint) Wait() { m.closing.Wait() }
