// Package api holds acu's JSON wire types and a typed client for the
// daemon's HTTP API. The CLI, `acu mcp` and the tests use the client; the
// package imports no server code.
package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ErrorDetail is the body of every error response:
// {"error":{"code":"invalid","message":"timeout: must be 1..86400 seconds","field":"timeout"}}.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// Acting errors only: how long the user has been active and when to
	// retry (user_active), near matches of an unknown element id.
	ActiveMs     int64    `json:"active_ms,omitempty"`
	RetryAfterMs int64    `json:"retry_after_ms,omitempty"`
	Suggestions  []string `json:"suggestions,omitempty"`
}

// ErrorBody wraps ErrorDetail on the wire.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// Error codes.
const (
	CodeInvalid      = "invalid"      // 400: malformed or invalid request
	CodeUnauthorized = "unauthorized" // 401
	CodeForbidden    = "forbidden"    // 403: foreign Host or Origin
	CodeScope        = "scope"        // 403: the token lacks the scope the route needs
	CodeNotFound     = "not_found"    // 404
	CodeConflict     = "conflict"     // 409: e.g. the run already ended
	CodeIncomplete   = "incomplete"   // 409: a recording's file cannot be played
	CodeLimit        = "limit"        // 429 or 507: a configured limit is reached (e.g. ACU_RECORD_MAX)
	CodeTooLarge     = "too_large"    // 413
	CodeWaitTimeout  = "wait_timeout" // 504: a run wait's own timeout fired
	CodeUnavailable  = "unavailable"  // 503: e.g. display unreachable
	CodeInternal     = "internal"     // 500
)

// Run is one unit of work: a wait job, an agent session, a task.
type Run struct {
	ID         string          `json:"id"`
	Kind       string          `json:"kind"`
	SessionKey string          `json:"sessionKey,omitempty"`
	TaskID     string          `json:"taskId,omitempty"`
	Status     string          `json:"status"`
	StartedAt  time.Time       `json:"startedAt"`
	EndedAt    *time.Time      `json:"endedAt,omitempty"`
	Error      string          `json:"error,omitempty"`
	Spec       json.RawMessage `json:"spec,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	// Host is the host whose daemon runs it (a fleet); Owner is the process
	// that owns it now (none while it waits for its host's daemon, while it
	// is orphaned, and for runs from before ownership).
	Host  string    `json:"host,omitempty"`
	Owner *RunOwner `json:"owner,omitempty"`
	// Creator is the principal whose request started the run: a token's
	// id (acu token list), "token-file" or "session". Its token may cancel
	// or change the run; anyone else needs the act scope.
	Creator string `json:"creator,omitempty"`
}

// RunOwner is a process instance that owns runs: `acu serve`, a standalone
// `acu agent`, `acu task` or `acu computer`. Alive is whether its lease
// covers its runs now; once it is false, the daemon takes the live ones
// over (a wait resumes) or ends them.
type RunOwner struct {
	ID         string    `json:"id"`
	Host       string    `json:"host"`
	PID        int       `json:"pid"`
	Program    string    `json:"program"`
	StartedAt  time.Time `json:"startedAt"`
	LeaseUntil time.Time `json:"leaseUntil"`
	Alive      bool      `json:"alive"`
}

// String is how the CLI shows an owner: "agent pid 123 on host".
func (o *RunOwner) String() string {
	if o == nil {
		return "-"
	}
	s := fmt.Sprintf("%s pid %d on %s", o.Program, o.PID, o.Host)
	if !o.Alive {
		s += " (stopped)"
	}
	return s
}

// Host is one machine of a fleet (or this machine): its live processes
// (daemon, standalone agents) and the displays they serve.
type Host struct {
	Host      string     `json:"host"`
	Displays  []string   `json:"displays"`
	Processes []RunOwner `json:"processes"`
}

// HostList is GET /v1/hosts: every host with a live process.
type HostList struct {
	Hosts []Host `json:"hosts"`
	// Self is the host of the daemon that answered.
	Self string `json:"self"`
}

// RunList is a page of runs, newest first. Next is the cursor for the
// following page ("" when there is none).
type RunList struct {
	Runs []Run  `json:"runs"`
	Next string `json:"next,omitempty"`
}

// Event is one entry of a run's event stream. Cursor is global and
// resumable (it is the SSE id); Seq increases strictly per run.
type Event struct {
	Cursor int64           `json:"cursor"`
	RunID  string          `json:"runId"`
	Seq    int64           `json:"seq"`
	Stream string          `json:"stream"`
	At     time.Time       `json:"at"`
	Data   json.RawMessage `json:"data"`
}

// Lifecycle is the data of an event on the "lifecycle" stream.
type Lifecycle struct {
	Phase     string     `json:"phase"` // start, end, error
	Status    string     `json:"status,omitempty"`
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	Error     string     `json:"error,omitempty"`
}

// EventList answers the catch-up path GET /v1/events?after=N (without
// Accept: text/event-stream). Epoch changes at every daemon start.
type EventList struct {
	Events []Event `json:"events"`
	Epoch  string  `json:"epoch"`
	Cursor int64   `json:"cursor"`
}

// WaitResult is what waiting on a run returns: it resolves only on the
// run's lifecycle end or error.
type WaitResult struct {
	RunID     string     `json:"runId"`
	Status    string     `json:"status"`
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	Error     string     `json:"error,omitempty"`
}

// StreamControl is the stream of a run's hand-offs to the user
// (ControlNeedsUser) and the user's answers (ControlResume).
const StreamControl = "control"

// Control actions.
const (
	ControlNeedsUser = "needs_user"
	ControlResume    = "resume"
)

// Control reasons of a ControlNeedsUser event.
const (
	NeedsCallUser    = "call_user"    // the model asks for the user's help
	NeedsSafetyCheck = "safety_check" // the model's action has safety checks to acknowledge
)

// ControlEvent is the data of a StreamControl event.
type ControlEvent struct {
	Action  string          `json:"action"`
	Reason  string          `json:"reason,omitempty"`
	Message string          `json:"message,omitempty"`
	Pending json.RawMessage `json:"pending_safety_checks,omitempty"`
	// Acknowledge (resume) accepts the pending safety checks.
	Acknowledge bool   `json:"acknowledge,omitempty"`
	By          string `json:"by,omitempty"`
}

// ResumeRequest is the optional body of POST /v1/runs/{id}/resume: the
// user's answer to a run waiting for them.
type ResumeRequest struct {
	// Acknowledge accepts the pending safety checks. It is required to
	// resume a run stopped by safety checks, and needs the admin scope: a
	// person's decision, not an agent's.
	Acknowledge bool `json:"acknowledge,omitempty"`
	// Message is handed to the model, e.g. what the user did for it.
	Message string `json:"message,omitempty"`
}

// ResumeResult is the answer of a resume: the run and the event written.
type ResumeResult struct {
	Run   Run   `json:"run"`
	Event Event `json:"event"`
}

// CancelRequest is the optional body of a cancel call.
type CancelRequest struct {
	Reason string `json:"reason,omitempty"`
}

// Health is GET /health. It needs no token and reveals no secrets.
type Health struct {
	Status   string            `json:"status"` // ok, degraded
	Version  string            `json:"version"`
	Epoch    string            `json:"epoch"`
	Started  time.Time         `json:"started"`
	LiveRuns int               `json:"liveRuns"`
	Judge    *JudgeInfo        `json:"judge,omitempty"`
	Breakers map[string]string `json:"breakers,omitempty"` // model client role -> closed, open, half-open
	Problems []string          `json:"problems,omitempty"`
	// Degraded lists the optional parts that are off because they could
	// not start (a listener whose port another process holds); waits and
	// actions work without them.
	Degraded []Degraded `json:"degraded,omitempty"`
}

// Degraded is an optional part of the daemon that is off: which, the
// address it could not listen on, why, and the setting that moves it.
type Degraded struct {
	Component string `json:"component"` // relay, agent
	Addr      string `json:"addr,omitempty"`
	Error     string `json:"error"`
	Setting   string `json:"setting"` // e.g. ACU_RELAY_PORT
}

// JudgeInfo says which judge backend is in use and why.
type JudgeInfo struct {
	Backend string `json:"backend"`
	Model   string `json:"model,omitempty"`
	Reason  string `json:"reason"`
}

// CreateWait is POST /v1/waits. Timeout and PollInterval are seconds.
// WakeWhen is accepted as another name for Criteria.
type CreateWait struct {
	Criteria string  `json:"criteria"`
	WakeWhen string  `json:"wake_when,omitempty"`
	Timeout  float64 `json:"timeout,omitempty"`
	Target   string  `json:"target,omitempty"`
	Display  string  `json:"display,omitempty"`
	// Host runs the wait on another daemon of a fleet sharing one
	// PostgreSQL database (its ACU_HOST_ID); that daemon claims and judges
	// it on its display. Empty: this daemon.
	Host         string  `json:"host,omitempty"`
	TaskID       string  `json:"task_id,omitempty"`
	PollInterval float64 `json:"poll_interval,omitempty"`
	// StrictTarget refuses a window target that matches no window now; by
	// default the wait waits for the window to open.
	StrictTarget bool `json:"strict_target,omitempty"`
}

// UpdateWait is PATCH /v1/waits/{id}: new criteria, or a new timeout
// counted from now (the clock is reset).
type UpdateWait struct {
	Criteria *string  `json:"criteria,omitempty"`
	Timeout  *float64 `json:"timeout,omitempty"`
}

// Verdict is one judgement of a wait job.
type Verdict struct {
	At        time.Time `json:"at"`
	Met       bool      `json:"met"`
	Evidence  string    `json:"evidence,omitempty"`
	FrameHash string    `json:"frame_hash,omitempty"`
	LatencyMs float64   `json:"latency_ms"`
	CostUSD   float64   `json:"cost_usd"`
	// CostUnknown: the judgement's model call had no known cost (no
	// provider figure, no price); CostUSD is then 0, not its cost.
	CostUnknown bool   `json:"cost_unknown,omitempty"`
	Backend     string `json:"backend,omitempty"`
	Model       string `json:"model,omitempty"`
	Deduped     bool   `json:"deduped,omitempty"`
	Error       string `json:"error,omitempty"`
}

// Revision is one entry of a wait's history (creation and each update).
type Revision struct {
	At       time.Time `json:"at"`
	Criteria string    `json:"criteria"`
	Timeout  float64   `json:"timeout"`
	Deadline time.Time `json:"deadline"`
}

// Wait is a smart-wait job. Its ID is its run id. State is watching,
// resolved, timeout, cancelled or error; Message is the notification text
// once it ended. Durations are seconds.
type Wait struct {
	ID           string     `json:"id"`
	WaitID       string     `json:"wait_id"` // ID again, under the name DETM's clients read
	State        string     `json:"state"`
	Criteria     string     `json:"criteria"`
	Target       string     `json:"target"`
	Display      string     `json:"display,omitempty"`
	Host         string     `json:"host,omitempty"`
	Source       string     `json:"source,omitempty"`
	TaskID       string     `json:"task_id,omitempty"`
	Timeout      float64    `json:"timeout"`
	PollInterval float64    `json:"poll_interval,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	Deadline     time.Time  `json:"deadline"`
	EndedAt      *time.Time `json:"ended_at,omitempty"`
	Evaluations  int        `json:"evaluations"`
	JudgeErrors  int        `json:"judge_errors"`
	Skipped      int        `json:"skipped"`
	LastVerdict  *Verdict   `json:"last_verdict,omitempty"`
	LastError    string     `json:"last_error,omitempty"`
	Evidence     string     `json:"evidence,omitempty"`
	Screenshot   string     `json:"screenshot,omitempty"`
	FrameHash    string     `json:"frame_hash,omitempty"`
	Message      string     `json:"message,omitempty"`
	Reason       string     `json:"reason,omitempty"`
	History      []Revision `json:"history,omitempty"`
}

// WaitList is GET /v1/waits.
type WaitList struct {
	Waits []Wait `json:"waits"`
	// Total is how many waits match the state filter, across all pages.
	Total int `json:"total"`
	// Truncated is true when more waits follow this page; Next is then the
	// id to pass as before for the next page.
	Truncated bool   `json:"truncated"`
	Next      string `json:"next,omitempty"`
}

// WaitQuery selects a page of GET /v1/waits: newest first, Limit per page
// (default 100, at most 1000), after the wait Before.
type WaitQuery struct {
	State  string
	Limit  int
	Before string
}

// SettleRequest is POST /v1/settle: wait until a target's frames stop
// changing for Quiet seconds, at most Timeout seconds.
type SettleRequest struct {
	Target  string  `json:"target,omitempty"`
	Display string  `json:"display,omitempty"`
	Quiet   float64 `json:"quiet,omitempty"`
	Timeout float64 `json:"timeout,omitempty"`
}

// SettleResult answers a settle.
type SettleResult struct {
	RunID     string  `json:"run_id,omitempty"`
	Settled   bool    `json:"settled"`
	Waited    float64 `json:"waited"` // seconds
	Changes   int     `json:"changes"`
	FrameHash string  `json:"frame_hash,omitempty"`
}

// LoginLink is POST /v1/auth/link: a one-time URL of the API page, whose
// code (in the URL fragment) the page swaps for a session of its own, so no
// page ever holds the token and no cookie is set.
type LoginLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Token scopes, each including the ones before it: read (screenshots,
// waits, runs, events, element map and windows listed), act (input,
// window operations, launch, clipboard, tasks) and admin (login links and
// everything else). The daemon's own token has admin.
const (
	ScopeRead  = "read"
	ScopeAct   = "act"
	ScopeAdmin = "admin"
)

// Scopes lists the scopes from least to most.
var Scopes = []string{ScopeRead, ScopeAct, ScopeAdmin}

// ScopeRank orders scopes: 0 for an unknown one.
func ScopeRank(scope string) int {
	for i, s := range Scopes {
		if s == scope {
			return i + 1
		}
	}
	return 0
}

// Error codes of the acting routes (POST /v1/actions).
const (
	CodeActDisabled    = "act_disabled"    // 403: acting is off (ACU_ACT_ENABLED=false)
	CodeDisplayDenied  = "display_denied"  // 403: the display is not in ACU_ACT_DISPLAYS
	CodeWindowDenied   = "window_denied"   // 403: the action lands in a window of ACU_ACT_DENY
	CodeUserActive     = "user_active"     // 409: the user is using the display; retry after RetryAfterMs
	CodeActionFailed   = "action_failed"   // an action's own failure, in its ActionResult
	CodeElementMissing = "element_missing" // an element id no longer in the map, in its ActionResult
)

// Point is a position in one of three forms:
//   - an element of the element map: {"element":"btn_ok"};
//   - normalized 0..1000 of the screen {"x":500,"y":500}, or of a window
//     {"x":500,"y":500,"window":"Firefox"} (title substring or window:0x…);
//   - pixels of a screenshot acu returned: {"x":412,"y":233,"shot":"shot_…"}
//     (the id of GET /v1/screenshot's X-Acu-Shot-Id or of an ActShot), or
//     {"x":412,"y":233,"image":"960x540"} (a screenshot of that size of the
//     screen, or of the window when window is set).
//
// A point with x,y and no window, shot or image takes the request's.
type Point struct {
	X       *int   `json:"x,omitempty"`
	Y       *int   `json:"y,omitempty"`
	Element string `json:"element,omitempty"`
	Window  string `json:"window,omitempty"`
	Shot    string `json:"shot,omitempty"`
	Image   string `json:"image,omitempty"`
}

// Pt returns a point at x, y (normalized 0..1000 of the screen unless the
// request or the point says otherwise).
func Pt(x, y int) *Point { return &Point{X: &x, Y: &y} }

// El returns a point at an element of the element map.
func El(id string) *Point { return &Point{Element: id} }

// Action kinds.
const (
	ActMove      = "move"       // at
	ActClick     = "click"      // at (optional: where the pointer is), button, count 1-3
	ActMouseDown = "mouse_down" // at (optional), button
	ActMouseUp   = "mouse_up"   // at (optional), button
	ActDrag      = "drag"       // path (2+ points), button, hold_ms before moving
	ActScroll    = "scroll"     // at (optional), dx, dy wheel clicks (positive: right, down)
	ActType      = "type"       // text; at (optional): an element or point to focus first
	ActKey       = "key"        // keys ("ctrl+l", "alt+Tab", "Return"), hold_ms, repeat; at (optional) to focus first
	ActWait      = "wait"       // ms
)

// ActionKinds lists the action kinds, for help and errors.
var ActionKinds = []string{ActMove, ActClick, ActMouseDown, ActMouseUp, ActDrag, ActScroll, ActType, ActKey, ActWait}

// Action is one step of POST /v1/actions.
type Action struct {
	Kind   string  `json:"kind"`
	At     *Point  `json:"at,omitempty"`
	Path   []Point `json:"path,omitempty"`
	Button string  `json:"button,omitempty"` // left (default), right, middle, back (X button 8), forward (9)
	Count  int     `json:"count,omitempty"`  // click: 1 (default) to 3
	DX     int     `json:"dx,omitempty"`
	DY     int     `json:"dy,omitempty"`
	Text   string  `json:"text,omitempty"`
	Keys   string  `json:"keys,omitempty"`
	HoldMs int     `json:"hold_ms,omitempty"` // key: how long each key is held; drag: hold before moving
	Repeat int     `json:"repeat,omitempty"`  // key: 1 (default) to 100
	Ms     int     `json:"ms,omitempty"`      // wait: 1..60000
	// Mods (click, scroll, drag, move, mouse_down, mouse_up): modifier
	// keys held down during the action, as "shift" or "ctrl+shift".
	Mods string `json:"mods,omitempty"`
	// Verify (element targets of click, type, key): re-extract the element
	// map after the action and check it had an effect, retrying once.
	Verify bool `json:"verify,omitempty"`
	// Pointer (element targets): use the pointer and keyboard even where
	// the element offers an accessibility action.
	Pointer bool `json:"pointer,omitempty"`
}

// SettleOptions asks for a wait after the actions until the target stops
// changing: QuietMs unchanged (default 100), at most TimeoutMs (default
// 5000). Target is a capture target (default screen).
type SettleOptions struct {
	QuietMs   int    `json:"quiet_ms,omitempty"`
	TimeoutMs int    `json:"timeout_ms,omitempty"`
	Target    string `json:"target,omitempty"`
}

// ShotOptions asks for a screenshot: Format jpeg (default) or png; the
// image at most MaxWidth pixels wide (default 960 for jpeg, full size for
// png) or scaled by Scale (0..1]; Region a capture target (screen,
// window:<title>, crop:x1,y1,x2,y2 in 0..1000); Quality 1..100 for jpeg
// (default 72).
type ShotOptions struct {
	Format   string  `json:"format,omitempty"`
	MaxWidth int     `json:"max_width,omitempty"`
	Scale    float64 `json:"scale,omitempty"`
	Region   string  `json:"region,omitempty"`
	Quality  int     `json:"quality,omitempty"`
	// Labels draws each element's id on the picture (set-of-marks).
	Labels bool `json:"labels,omitempty"`
}

// ActRequest is POST /v1/actions: actions run in order on one display,
// stopping at the first failure. Window, Shot and Image are the frame of
// x,y points that name none (see Point).
type ActRequest struct {
	// Host runs the request on another daemon of a fleet sharing one
	// PostgreSQL database (its ACU_HOST_ID), through the database: that
	// daemon claims it, acts on its display and the answer comes back here.
	Host       string         `json:"host,omitempty"`
	Display    string         `json:"display,omitempty"`
	Window     string         `json:"window,omitempty"`
	Shot       string         `json:"shot,omitempty"`
	Image      string         `json:"image,omitempty"`
	Actions    []Action       `json:"actions"`
	Settle     *SettleOptions `json:"settle,omitempty"`
	Screenshot *ShotOptions   `json:"screenshot,omitempty"`
	// Diff returns the element-map diff from before the actions to after
	// them (and the settle).
	Diff bool `json:"diff,omitempty"`
	// OrderTimeoutMs bounds each wait for an application to handle the
	// input before an action by another mechanism (default 1000, at most
	// 10000); see ActionResult.Ordered.
	OrderTimeoutMs int `json:"order_timeout_ms,omitempty"`
}

// ActionResult is the outcome of one action.
type ActionResult struct {
	Index   int    `json:"index"`
	Kind    string `json:"kind"`
	OK      bool   `json:"ok"`
	Skipped bool   `json:"skipped,omitempty"` // not run: an earlier action failed
	// Via says how: xtest, or for element targets action:<name>,
	// editable_text or pointer.
	Via      string  `json:"via,omitempty"`
	Element  string  `json:"element,omitempty"`
	At       *[2]int `json:"at,omitempty"` // screen pixels acted at
	Window   string  `json:"window,omitempty"`
	Attempts int     `json:"attempts,omitempty"` // verified element actions
	// Ordered is set on an action carried by another mechanism than the
	// one before it (XTest, an AT-SPI action, AT-SPI text): true when acu
	// proved the application handled the earlier input first, false when
	// it could not within order_timeout_ms (OrderNote says why; the action
	// ran all the same).
	Ordered   *bool        `json:"ordered,omitempty"`
	OrderNote string       `json:"order_note,omitempty"`
	OrderMs   float64      `json:"order_ms,omitempty"`
	Error     *ErrorDetail `json:"error,omitempty"`
	Ms        float64      `json:"ms"`
}

// SettleInfo is what the settle after the actions saw.
type SettleInfo struct {
	Settled  bool    `json:"settled"`
	WaitedMs float64 `json:"waited_ms"`
	Changes  int     `json:"changes"`
}

// ActShot is a screenshot in a JSON answer. ID maps its pixels back to the
// screen in later requests ({"shot": id}); Region is the captured
// rectangle in screen pixels, x,y,w,h.
type ActShot struct {
	ID     string `json:"id"`
	Format string `json:"format"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Region [4]int `json:"region"`
	Screen [2]int `json:"screen"` // the whole screen's size
	Data   []byte `json:"data"`   // base64 in JSON
}

// ElementChange is one changed element of a diff.
type ElementChange struct {
	ID     string   `json:"id"`
	What   []string `json:"what"`
	Before Element  `json:"before"`
	After  Element  `json:"after"`
}

// ElementDiff is the element-map diff; Text is its compact form.
type ElementDiff struct {
	Added   []Element       `json:"added,omitempty"`
	Removed []Element       `json:"removed,omitempty"`
	Changed []ElementChange `json:"changed,omitempty"`
	Text    string          `json:"text"`
}

// ActResponse answers POST /v1/actions. OK is false when an action failed
// or was refused after others ran (its result says why; the ones after it
// are skipped).
type ActResponse struct {
	OK         bool           `json:"ok"`
	Display    string         `json:"display"`
	SessionRun string         `json:"session_run,omitempty"`
	Results    []ActionResult `json:"results"`
	Settle     *SettleInfo    `json:"settle,omitempty"`
	Screenshot *ActShot       `json:"screenshot,omitempty"`
	Diff       *ElementDiff   `json:"diff,omitempty"`
	Ms         float64        `json:"ms"`
}

// Element is one entry of the element map. Box is x,y,w,h and Center x,y
// in screen pixels.
type Element struct {
	ID        string   `json:"id"`
	Type      string   `json:"type"`
	Text      string   `json:"text,omitempty"`
	Value     string   `json:"value,omitempty"`
	Desc      string   `json:"desc,omitempty"`
	Role      string   `json:"role,omitempty"`
	Box       [4]int   `json:"box"`
	Center    [2]int   `json:"center"`
	App       string   `json:"app,omitempty"`
	Window    string   `json:"window,omitempty"`
	Clickable bool     `json:"clickable,omitempty"`
	Editable  bool     `json:"editable,omitempty"`
	Focused   bool     `json:"focused,omitempty"`
	Enabled   bool     `json:"enabled,omitempty"`
	Checked   bool     `json:"checked,omitempty"`
	Showing   bool     `json:"showing,omitempty"`
	Active    bool     `json:"active,omitempty"`
	Actions   []string `json:"actions,omitempty"`
	Source    string   `json:"source"`
}

// ElementMap answers GET /v1/elements: the map as JSON and as the compact
// text a model reads (Text), and with labels=true a screenshot with each
// element's id drawn on it.
type ElementMap struct {
	Display    string    `json:"display"`
	Iteration  int       `json:"iteration"`
	Screen     [2]int    `json:"screen"`
	Elements   []Element `json:"elements"`
	Text       string    `json:"text"`
	Dropped    int       `json:"dropped,omitempty"`
	TreeError  string    `json:"tree_error,omitempty"`
	Screenshot *ActShot  `json:"screenshot,omitempty"`
	Ms         float64   `json:"ms"`
}

// ElementsQuery is GET /v1/elements' parameters.
type ElementsQuery struct {
	Display string
	Window  string // only elements inside this window (title substring or window:0x…)
	Labels  bool   // add a labelled screenshot
	Shot    *ShotOptions
}

// Task log statuses (an agent's own word for its task).
var TaskLogStatuses = []string{"active", "paused", "completed", "failed", "cancelled"}

// TaskLog is a task's progress log: an agent's unit of intent that waits
// (task_id), agent turns and its own notes report to.
type TaskLog struct {
	ID        string         `json:"task_id"`
	Name      string         `json:"name"`
	Status    string         `json:"status"`
	CreatedAt time.Time      `json:"created_at"`
	Entries   []TaskLogEntry `json:"entries,omitempty"`
	Count     int            `json:"count"` // entries in the log
}

// TaskLogEntry is one line of a task's progress log.
type TaskLogEntry struct {
	At      time.Time `json:"at"`
	Message string    `json:"message"`
	RunID   string    `json:"run_id,omitempty"`
}

// CreateTaskLog is POST /v1/tasklogs: a task with an optional plan, kept
// as the log's first lines. ID may be given; else one is made.
type CreateTaskLog struct {
	ID   string   `json:"task_id,omitempty"`
	Name string   `json:"name"`
	Plan []string `json:"plan,omitempty"`
}

// AppendTaskLog is POST /v1/tasklogs/{id}: a progress line, a new status,
// or both.
type AppendTaskLog struct {
	Message string `json:"message,omitempty"`
	Status  string `json:"status,omitempty"`
}

// TaskLogList is GET /v1/tasklogs.
type TaskLogList struct {
	Tasks []TaskLog `json:"tasks"`
}

// LiveInput is one input event of a human driving a display from the live
// view (POST /v1/live/input). Positions are screen pixels.
type LiveInput struct {
	// Type is move, down, up, wheel, key or text.
	Type   string `json:"type"`
	X      int    `json:"x"`
	Y      int    `json:"y"`
	Button int    `json:"button,omitempty"` // 1 left, 2 middle, 3 right
	DX     int    `json:"dx,omitempty"`     // wheel clicks, positive right
	DY     int    `json:"dy,omitempty"`     // wheel clicks, positive down
	Keys   string `json:"keys,omitempty"`   // a key chord in acu's syntax: ctrl+l, Return
	Text   string `json:"text,omitempty"`   // text to type
}

// LiveInputRequest is the body of POST /v1/live/input.
type LiveInputRequest struct {
	Display string      `json:"display,omitempty"`
	Events  []LiveInput `json:"events"`
}

// TakeoverRequest is the body of POST /v1/live/takeover.
type TakeoverRequest struct {
	Display string `json:"display,omitempty"`
}

// Takeover is the state of a display's take-over by a human in the live
// view (GET/POST/DELETE /v1/live/takeover).
type Takeover struct {
	Display string     `json:"display"`
	Active  bool       `json:"active"`
	By      string     `json:"by,omitempty"`
	RunID   string     `json:"run_id,omitempty"`
	Since   *time.Time `json:"since,omitempty"`
	Inputs  int        `json:"inputs"`
}

// LiveFrame is the data of a "frame" event of GET /v1/live/frames: one
// JPEG of the screen, sent only after the screen changed.
type LiveFrame struct {
	Seq     uint64    `json:"seq"`
	At      time.Time `json:"at"` // when it was captured
	W       int       `json:"w"`  // the JPEG's size
	H       int       `json:"h"`
	ScreenW int       `json:"screen_w"`
	ScreenH int       `json:"screen_h"`
	Hash    string    `json:"hash"`
	JPEG    string    `json:"jpeg"` // base64
}

// RunFrame is a frame a run's judgement saw (GET /v1/runs/{id}/frames):
// its content hash (the frameHash of the verdict events) and when the run
// first saw it; GET /v1/frames/{hash} is the JPEG.
type RunFrame struct {
	Hash string    `json:"hash"`
	At   time.Time `json:"at"`
	URL  string    `json:"url"`
}

// RunFrameList is GET /v1/runs/{id}/frames.
type RunFrameList struct {
	Frames []RunFrame `json:"frames"`
}

// Recording is a recording of a display (POST/GET /v1/recordings): a run
// of kind "recording" and its video file (GET /v1/recordings/{id}).
type Recording struct {
	ID        string     `json:"id"`
	Display   string     `json:"display"`
	Format    string     `json:"format"` // mp4 or webm
	RunID     string     `json:"run_id,omitempty"`
	Status    string     `json:"status"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// File is the file's name in the daemon's recordings directory
	// (ACU_DATA_DIR/recordings); answers carry no absolute path.
	File       string `json:"file"`
	URL        string `json:"url"`
	Bytes      int64  `json:"bytes,omitempty"`
	Frames     int    `json:"frames,omitempty"`
	DurationMs int64  `json:"duration_ms,omitempty"`
	Width      int    `json:"width,omitempty"`
	Height     int    `json:"height,omitempty"`
	// VideoStart is when the file's first frame was shown: an event at t
	// plays at t - VideoStart.
	VideoStart *time.Time `json:"video_start,omitempty"`
	// Stopped says why it stopped: request, run_ended, shutdown,
	// max_duration (ACU_RECORD_MAX_DURATION), disk_budget
	// (ACU_RECORD_DISK), process_lost (its daemon was killed; the file
	// was recovered by the next one).
	Stopped string `json:"stopped,omitempty"`
	// Incomplete, when set, says why the file cannot be played: GET of the
	// file answers 409 incomplete.
	Incomplete string `json:"incomplete,omitempty"`
	Error      string `json:"error,omitempty"`
}

// StartRecording is the body of POST /v1/recordings.
type StartRecording struct {
	Display string `json:"display,omitempty"`
	Format  string `json:"format,omitempty"`
	RunID   string `json:"run_id,omitempty"`
}

// RecordingList is GET /v1/recordings.
type RecordingList struct {
	Recordings []Recording `json:"recordings"`
}

// Computer-use dialects, for POST /v1/computer/{vendor}.
const (
	VendorAnthropic = "anthropic"
	VendorOpenAI    = "openai"
	VendorUITARS    = "uitars"
)

// Vendors lists the computer-use dialects.
var Vendors = []string{VendorAnthropic, VendorOpenAI, VendorUITARS}

// Statuses of a computer-use step besides acting.
const (
	ComputerActed       = "acted"        // the actions ran (or a screenshot was taken)
	ComputerError       = "error"        // the item was malformed or refused: Result is the vendor's error result
	ComputerFinished    = "finished"     // UI-TARS finished(): the model says the task is done
	ComputerCallUser    = "call_user"    // UI-TARS call_user(): the model asks for a human
	ComputerSafetyCheck = "safety_check" // OpenAI pending_safety_checks the caller has not acknowledged: nothing ran
)

// ComputerQuery is POST /v1/computer/{vendor}'s parameters: the display,
// the largest picture offered to the model (Limit, "1280x800"), the
// screenshots' format and quality, the Anthropic tool version, the
// UI-TARS coordinate mode (relative, absolute, smart) and the OpenAI
// safety checks the caller acknowledges (ids).
type ComputerQuery struct {
	Display     string
	Limit       string
	Format      string
	Quality     int
	Version     string
	Mode        string
	Acknowledge []string
}

// ComputerResult answers POST /v1/computer/{vendor}: Result is the
// vendor's result item to hand back to the model as it is (an Anthropic
// tool_result block, an OpenAI computer_call_output item, a UI-TARS user
// message with the screenshot). The rest is for the caller.
type ComputerResult struct {
	Result json.RawMessage `json:"result,omitempty"`
	Status string          `json:"status"`
	// Error is what failed; for Anthropic it is also in Result (is_error).
	Error *ErrorDetail `json:"error,omitempty"`
	// Content is UI-TARS' finished or call_user text.
	Content string `json:"content,omitempty"`
	// PendingSafetyChecks are the OpenAI checks to show the user and, if
	// they agree, acknowledge in a repeated request (acknowledge=ids).
	PendingSafetyChecks json.RawMessage `json:"pending_safety_checks,omitempty"`
	// Tool is the tool declaration for this display (Anthropic and
	// OpenAI), with the picture size the coordinates are in.
	Tool       json.RawMessage `json:"tool,omitempty"`
	Display    string          `json:"display"`
	Screen     [2]int          `json:"screen"`
	Image      [2]int          `json:"image"`
	Actions    []ActionResult  `json:"actions,omitempty"`
	Settle     *SettleInfo     `json:"settle,omitempty"`
	Waited     *SettleResult   `json:"waited,omitempty"`
	ShotID     string          `json:"shot_id,omitempty"`
	SessionRun string          `json:"session_run,omitempty"`
	Ms         float64         `json:"ms"`
}

// String is the result on one line, as the CLI and the MCP tools print it:
// "0 click: ok on btn_ok at 412,233 via action:click", "1 type: skipped",
// "1 key: failed: <message>".
func (x ActionResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s: ", x.Index, x.Kind)
	switch {
	case x.Skipped:
		b.WriteString("skipped")
	case !x.OK:
		b.WriteString("failed")
		if x.Error != nil {
			b.WriteString(": " + x.Error.Message)
		}
	default:
		b.WriteString("ok")
		if x.Element != "" {
			b.WriteString(" on " + x.Element)
		}
		if x.At != nil {
			fmt.Fprintf(&b, " at %d,%d", x.At[0], x.At[1])
		}
		if x.Via != "" {
			b.WriteString(" via " + x.Via)
		}
	}
	return b.String()
}
