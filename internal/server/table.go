package server

import (
	"context"
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/guard"
)

// What a route does to the desktop (RouteInfo.Desktop).
const (
	// DesktopRead routes read the desktop's pixels, structure or text, or
	// serve what was read from it: screenshots, the element map, windows,
	// the pointer, the clipboard, live frames, judged frames, recordings,
	// and the waits and settles that watch the screen.
	DesktopRead = "read"
	// DesktopEffect routes change the desktop: input, window operations,
	// launches, clipboard writes, the take-over, tasks whose agents act.
	// Some also answer with what they see (POST /v1/actions and the
	// computer-use routes return screenshots); their reads pass the same
	// capture as the read routes'.
	DesktopEffect = "effect"
)

// Route is one row of the route table: the only place a route is
// registered (besides the pages' static files).
type Route struct {
	Method  string // "" for every method
	Pattern string // a ServeMux path pattern
	// Scope is the token scope the route needs: "" for an open route,
	// else api.ScopeRead, ScopeAct or ScopeAdmin.
	Scope string
	// Others, on routes acting on one run, is the scope needed for a run
	// the caller did not create; the token that created it needs only
	// Scope.
	Others string
	// Raises lists parts of a request that need a higher scope than Scope.
	Raises []Raise
	// Desktop is DesktopRead, DesktopEffect or "" (neither: run records,
	// task logs, tokens, metrics, pages).
	Desktop string
	Doc     string // what the route does, one line

	fn      handlerFunc  // the handler, through the error boundary
	handler http.Handler // or a plain handler
	extra   bool         // the handler is Options.Extra[Pattern]
}

// Raise is a part of a request that needs a higher scope than its route.
type Raise struct {
	When  string // the request part, e.g. "argv"
	Scope string
	Doc   string
}

// RouteInfo is a route's row without its handler, for tests and docs.
type RouteInfo struct {
	Method, Pattern string
	Scope, Others   string
	Raises          []Raise
	Desktop         string
	Doc             string
}

// Key is "METHOD PATTERN" (the pattern alone for every method), as the
// MCP tool table names routes.
func (r RouteInfo) Key() string {
	if r.Method == "" {
		return r.Pattern
	}
	return r.Method + " " + r.Pattern
}

// Routes is the route table of a daemon with the default settings.
func Routes() []RouteInfo { return New(Options{}).Routes() }

// Routes is this server's route table (its settings decide some scopes:
// ACU_LAUNCH_ARGV).
func (s *Server) Routes() []RouteInfo {
	out := make([]RouteInfo, 0, len(s.table))
	for _, r := range s.table {
		out = append(out, RouteInfo{Method: r.Method, Pattern: r.Pattern, Scope: r.Scope, Others: r.Others,
			Raises: slices.Clone(r.Raises), Desktop: r.Desktop, Doc: r.Doc})
	}
	return out
}

// routeTable lists every route with its scope, its effect on the desktop
// and its handler.
func (s *Server) routeTable() []Route {
	const (
		read, act, admin = api.ScopeRead, api.ScopeAct, api.ScopeAdmin
		rd, fx           = DesktopRead, DesktopEffect
	)
	argv := s.launchArgvScope()
	var launchRaises []Raise
	if argv != act {
		launchRaises = []Raise{{When: "argv", Scope: argv, Doc: "a command line rather than a desktop entry (ACU_LAUNCH_ARGV=act lowers it to act)"}}
	}
	return []Route{
		{Method: "GET", Pattern: "/health", Doc: "liveness, version and epoch", fn: s.handleHealth},
		{Method: "GET", Pattern: "/{$}", Doc: "the API page (logs in with a one-time link)", fn: s.handlePage},
		{Method: "POST", Pattern: "/auth/session", Doc: "trade a one-time login code for a page session", handler: s.sessions.Exchange(loginHint)},
		{Method: "GET", Pattern: "/ui/{$}", Doc: "the live view page", fn: uiPage("live.html")},
		{Method: "GET", Pattern: "/ui/runs", Doc: "the run timeline page", fn: uiPage("runs.html")},

		{Method: "POST", Pattern: "/v1/auth/link", Scope: admin, Doc: "mint a one-time login link (a page session has every scope)", fn: s.handleLoginLink},
		{Method: "GET", Pattern: "/metrics", Scope: read, Doc: "Prometheus metrics", handler: promhttp.HandlerFor(s.opts.Metrics, promhttp.HandlerOpts{})},

		{Method: "GET", Pattern: "/v1/runs", Scope: read, Doc: "list runs", fn: s.handleListRuns},
		{Method: "GET", Pattern: "/v1/hosts", Scope: read, Doc: "the fleet's hosts", fn: s.handleHosts},
		{Method: "GET", Pattern: "/v1/runs/{id}", Scope: read, Doc: "one run", fn: s.handleGetRun},
		{Method: "POST", Pattern: "/v1/runs/{id}/cancel", Scope: read, Others: act, Doc: "cancel a live run", fn: s.handleCancelRun},
		{Method: "POST", Pattern: "/v1/runs/{id}/resume", Scope: read, Others: act,
			Raises: []Raise{{When: "acknowledge", Scope: admin, Doc: "accepting a computer-use model's safety checks (a person's decision)"}},
			Doc:    "resume a run that waits for the user (its own effects then go on, each through the gate)", fn: s.handleResumeRun},
		{Method: "POST", Pattern: "/v1/runs/{id}/wait", Scope: read, Doc: "wait for a run to end", fn: s.handleWaitRun},
		{Method: "GET", Pattern: "/v1/runs/{id}/wait", Scope: read, Doc: "wait for a run to end", fn: s.handleWaitRun},
		{Method: "GET", Pattern: "/v1/events", Scope: read, Doc: "the event stream (SSE or JSON)", fn: s.handleEvents},
		{Method: "GET", Pattern: "/v1/runs/{id}/frames", Scope: read, Desktop: rd, Doc: "a run's judged frames", fn: s.handleRunFrames},
		{Method: "GET", Pattern: "/v1/runs/{id}/frames.gif", Scope: read, Desktop: rd, Doc: "a run's judged frames as a GIF", fn: s.handleRunFramesGIF},
		{Method: "GET", Pattern: "/v1/runs/{id}/frames.webp", Scope: read, Desktop: rd, Doc: "a run's judged frames as a WebP", fn: s.handleRunFramesWebP},
		{Method: "GET", Pattern: "/v1/frames/{hash}", Scope: read, Desktop: rd, Doc: "one judged frame", fn: s.handleFrame},

		{Method: "POST", Pattern: "/v1/waits", Scope: read, Desktop: rd, Doc: "start a smart wait (watches and judges the screen)", fn: s.handleCreateWait},
		{Method: "GET", Pattern: "/v1/waits", Scope: read, Doc: "list waits", fn: s.handleListWaits},
		{Method: "GET", Pattern: "/v1/waits/{id}", Scope: read, Doc: "one wait, its verdicts and evidence", fn: s.handleGetWait},
		{Method: "PATCH", Pattern: "/v1/waits/{id}", Scope: read, Others: act, Doc: "change a live wait's criteria or timeout", fn: s.handleUpdateWait},
		{Method: "DELETE", Pattern: "/v1/waits/{id}", Scope: read, Others: act, Doc: "cancel a live wait", fn: s.handleCancelWait},
		{Method: "POST", Pattern: "/v1/settle", Scope: read, Desktop: rd, Doc: "wait until the screen stops changing", fn: s.handleSettle},
		{Method: "GET", Pattern: "/v1/screenshot", Scope: read, Desktop: rd, Doc: "a screenshot", fn: s.handleScreenshot},

		{Method: "POST", Pattern: "/v1/tasks", Scope: act, Desktop: fx, Doc: "start a task (its agents act on the desktop)", fn: s.handleCreateTask(s.opts.Tasks)},
		{Method: "GET", Pattern: "/v1/tasks", Scope: read, Doc: "list tasks", fn: s.handleListTasks},
		{Method: "GET", Pattern: "/v1/tasks/{id}", Scope: read, Doc: "one task", fn: s.handleGetTask},
		{Method: "POST", Pattern: "/v1/tasklogs", Scope: read, Doc: "register a task log", fn: s.handleCreateTaskLog},
		{Method: "GET", Pattern: "/v1/tasklogs", Scope: read, Doc: "list task logs", fn: s.handleListTaskLogs},
		{Method: "GET", Pattern: "/v1/tasklogs/{id}", Scope: read, Doc: "one task log", fn: s.handleGetTaskLog},
		{Method: "POST", Pattern: "/v1/tasklogs/{id}", Scope: read, Doc: "append to a task log", fn: s.handleAppendTaskLog},

		{Method: "POST", Pattern: "/v1/actions", Scope: act, Desktop: fx, Doc: "input (click, type, keys, scroll, drag) and element steps", fn: s.handleActions},
		{Method: "GET", Pattern: "/v1/elements", Scope: read, Desktop: rd, Doc: "the element map (accessibility tree and OCR)", fn: s.handleElements},
		{Method: "POST", Pattern: "/v1/computer/{vendor}", Scope: act, Desktop: fx, Doc: "run a computer-use model's action item", fn: s.handleComputer},
		{Method: "GET", Pattern: "/v1/computer/{vendor}", Scope: read, Doc: "a computer-use vendor's tool definition", fn: s.handleComputerTool},

		{Method: "GET", Pattern: "/v1/windows", Scope: read, Desktop: rd, Doc: "list windows (titles, classes, places)", fn: s.handleWindows},
		{Method: "GET", Pattern: "/v1/pointer", Scope: read, Desktop: rd, Doc: "the pointer and the window under it", fn: s.handlePointer},
		// Reading the clipboard needs act: people copy passwords.
		{Method: "GET", Pattern: "/v1/clipboard", Scope: act, Desktop: rd, Doc: "read the clipboard (people copy passwords: act)", fn: s.handleGetClipboard},
		{Method: "PUT", Pattern: "/v1/clipboard", Scope: act, Desktop: fx, Doc: "write the clipboard", fn: s.handleSetClipboard},
		{Method: "POST", Pattern: "/v1/windows/{id}/{op}", Scope: act, Desktop: fx, Doc: "close, move, resize, minimize, maximize or focus a window", fn: s.handleWindowOp},
		{Method: "POST", Pattern: "/v1/apps/launch", Scope: act, Raises: launchRaises, Desktop: fx, Doc: "launch a desktop entry (or an argv)", fn: s.handleLaunch},

		{Method: "GET", Pattern: "/v1/live/frames", Scope: read, Desktop: rd, Doc: "the live view's frame stream", fn: s.handleLiveFrames},
		{Method: "GET", Pattern: "/v1/live/takeover", Scope: read, Doc: "who holds a display's take-over", fn: s.handleTakeoverState},
		{Method: "POST", Pattern: "/v1/live/takeover", Scope: act, Desktop: fx, Doc: "take a display over (pauses its agents)", fn: s.handleTakeover},
		{Method: "DELETE", Pattern: "/v1/live/takeover", Scope: act, Desktop: fx, Doc: "hand a display back", fn: s.handleHandBack},
		{Method: "POST", Pattern: "/v1/live/input", Scope: act, Desktop: fx, Doc: "the take-over's input", fn: s.handleLiveInput},

		// Starting a recording runs ffmpeg and fills the disk: act, within
		// ACU_RECORD_MAX, ACU_RECORD_MAX_DURATION and ACU_RECORD_DISK.
		{Method: "POST", Pattern: "/v1/recordings", Scope: act, Desktop: rd, Doc: "start recording a display (within ACU_RECORD_MAX and its budgets)", fn: s.handleStartRecording},
		{Method: "GET", Pattern: "/v1/recordings", Scope: read, Doc: "list recordings", fn: s.handleListRecordings},
		{Method: "GET", Pattern: "/v1/recordings/{id}", Scope: read, Desktop: rd, Doc: "a recording's video file", fn: s.handleRecording},
		{Method: "POST", Pattern: "/v1/recordings/{id}/stop", Scope: act, Doc: "stop a recording", fn: s.handleStopRecording},

		// The MCP endpoint (Options.Extra): every tool calls the routes
		// above with the session's own token, so a tool needs its routes'
		// scopes (see mcpserver.Tools).
		{Pattern: "/mcp", Scope: read, Doc: "the MCP endpoint; each tool needs the scope of the routes it calls", extra: true},

		{Pattern: "/", Doc: "anything else: 404 pointing at the API overview", fn: func(w http.ResponseWriter, r *http.Request) error {
			return errNotFound("no route for %s %s: see the API overview in README.md", r.Method, r.URL.Path)
		}},
	}
}

// staticFiles are the pages' scripts and styles: open, no secrets.
var staticFiles = []string{"GET /app.js", "GET /app.css", "GET /ui/live.js", "GET /ui/runs.js", "GET /ui/ui.css"}

// launchArgvScope is the scope a launch by argv needs (ACU_LAUNCH_ARGV).
func (s *Server) launchArgvScope() string {
	if s.opts.LaunchArgv == api.ScopeAct {
		return api.ScopeAct
	}
	return api.ScopeAdmin
}

// othersKey carries a route's Others scope to its handler.
type othersKey struct{}

// mayChangeRun lets the run's creator through, and anyone else with the
// route's Others scope.
func mayChangeRun(ctx context.Context, what, id, creator string) error {
	need, _ := ctx.Value(othersKey{}).(string)
	if need == "" {
		return nil
	}
	p := PrincipalOf(ctx)
	if creator != "" && p.ID == creator || api.ScopeRank(p.Scope) >= api.ScopeRank(need) {
		return nil
	}
	return newErr(http.StatusForbidden, api.CodeScope, "",
		"%s run %q needs the token that created it or a token with scope %s; this token has scope %s: create one with `acu token create --scope %s`",
		what, id, need, p.Scope, need)
}

func withOthers(scope string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), othersKey{}, scope)))
	})
}

// mount registers the table on mux.
func (s *Server) mount(mux *http.ServeMux) {
	for _, r := range s.table {
		h := r.handler
		switch {
		case r.fn != nil:
			h = s.wrap(r.fn)
		case r.extra:
			if h = s.opts.Extra[r.Pattern]; h == nil {
				pattern := r.Pattern
				h = s.wrap(func(w http.ResponseWriter, r *http.Request) error {
					return newErr(http.StatusServiceUnavailable, api.CodeUnavailable, "", "%s is not served by this daemon", pattern)
				})
			}
		}
		if r.Others != "" {
			h = withOthers(r.Others, h)
		}
		if r.Scope != "" {
			h = s.authenticate(r.Scope, h)
		}
		pattern := r.Pattern
		if r.Method != "" {
			pattern = r.Method + " " + r.Pattern
		}
		mux.Handle(pattern, h)
	}
	for p := range s.opts.Extra {
		if !slices.ContainsFunc(s.table, func(r Route) bool { return r.extra && r.Pattern == p }) {
			panic("server: Options.Extra " + p + " has no row in the route table (internal/server/table.go)")
		}
	}
	for _, p := range staticFiles[:2] {
		mux.Handle(p, pageFiles())
	}
	for _, p := range staticFiles[2:] {
		mux.Handle(p, uiFiles())
	}
	mux.HandleFunc(guard.ScriptPattern, guard.Script)
}
