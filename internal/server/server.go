// Package server is acu's HTTP surface: table.go lists every route with its
// scope and what it does to the desktop, the middleware guards them (Host,
// Origin, token or a page's session header, body limit), errors.go is the one place errors become responses, and sse.go
// streams events. Features (runs, waits, screenshots) plug in through small
// interfaces declared here, so the server imports no engine internals
// beyond their types.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/guard"
	"github.com/acu-dev/acu/internal/secret"
)

// Options configure a Server.
type Options struct {
	Token        secret.String
	TokenHint    string   // where the token lives, for 401 messages ("~/.local/state/acu/token")
	AllowedHosts []string // extra Host names (ACU_ALLOWED_HOSTS)
	ListenHost   string   // the configured listen host
	MaxBody      int64
	Version      string
	Epoch        string
	Logger       *slog.Logger
	Metrics      *prometheus.Registry // served at /metrics; nil serves an empty registry
	Now          func() time.Time

	// LookupToken finds an extra token (acu token create) by its secret;
	// nil: only the daemon's own token, which has every scope.
	LookupToken func(ctx context.Context, secret string) (Principal, bool)

	TaskLogs    TaskLogs // nil: the task-log routes answer 503
	Runs        Runs
	Waits       Waits       // nil: the wait routes answer 503
	Screenshots Screenshots // nil: the screenshot route answers 503
	Tasks       Tasks       // nil: POST /v1/tasks answers 503
	Actions     Actions     // nil: POST /v1/actions and GET /v1/elements answer 503
	Desktop     Desktop     // nil: the window, pointer, clipboard and launch routes answer 503
	Live        Live        // nil: the live view's routes answer 503
	Frames      Frames      // judged frames for the run timeline; nil: 503
	Recordings  Recordings  // nil: the recording routes answer 503
	// Fleet starts runs for other hosts of a fleet (requests with a host);
	// nil: such requests are refused.
	Fleet Fleet
	// Handoff carries action requests for other hosts (requests with a
	// host) to their daemons; nil: such requests answer 503.
	Handoff Handoff
	Health  func(ctx context.Context) api.Health
	// Cancellers end a live run of their kind at a client's request (the
	// wait engine owns "wait" runs). Runs of other kinds are ended directly.
	Cancellers map[string]func(ctx context.Context, id, reason string) error
	// Revocation ends the open requests of a token revoked while they
	// run; its zero value checks nothing.
	Revocation Revocation
	// Extra gives the handlers of the route table's rows served from
	// outside the package (the MCP endpoint, "/mcp"); a key with no row in
	// the table is a programming error (New panics).
	Extra map[string]http.Handler
	// LaunchArgv is the scope a launch by argv needs (ACU_LAUNCH_ARGV):
	// api.ScopeAct, or admin for anything else. Desktop entries need act.
	LaunchArgv string
	// Track, when set, is called as each request starts; the function it
	// returns is called when the request (a stream too) ends. The daemon
	// counts clients with it for ACU_IDLE_EXIT.
	Track func() (done func())
}

// Server is the daemon's HTTP handler.
type Server struct {
	opts     Options
	log      *slog.Logger
	sessions *guard.Sessions
	handler  http.Handler
	table    []Route
	lives    tokenLives // open requests by extra token, for revocation
}

// New builds the handler.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 1 << 20
	}
	if opts.Metrics == nil {
		opts.Metrics = prometheus.NewRegistry()
	}
	s := &Server{opts: opts, log: opts.Logger, sessions: guard.NewSessions(opts.Now)}
	s.table = s.routeTable()
	s.handler = s.routes()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Track != nil {
		defer s.opts.Track()()
	}
	s.handler.ServeHTTP(w, r)
}

// Serve serves on l until ctx ends, then shuts down gracefully within grace.
func (s *Server) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); s.watchRevocations(wctx) }()
	defer func() { stopWatch(); <-watched }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = hs.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// handlerFunc is a handler that returns its error to the one error boundary.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *Server) wrap(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			if _, known := response(err); !known {
				s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			writeError(w, r, err)
		}
	})
}
