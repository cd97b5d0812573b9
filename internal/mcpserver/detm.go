package mcpserver

// DETM's tools (the agentic_computer_use MCP server, seed 000's origin),
// where acu has the same meaning: its task log (task_register,
// task_update, task_log_action, task_summary, task_thread, task_list), its
// look (desktop_look) and its GUI agent (gui_agent, acu's run_task). An
// agent following DETM's skill file gets through a wait end to end. Its
// other tools are not offered; calling one says so and names what to use.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
)

// waitLister lists wait jobs (*api.Client), for wait_status without an id.
type waitLister interface {
	ListWaits(ctx context.Context, q api.WaitQuery) (api.WaitList, error)
}

// listWaits answers wait_status without an id: the newest page of live
// jobs, saying how many there are in all and when the page leaves some out.
func (t *tools) listWaits(ctx context.Context, l waitLister) (*mcp.CallToolResult, WaitStatus, error) {
	wl, err := l.ListWaits(ctx, api.WaitQuery{State: "live"})
	if err != nil {
		return nil, WaitStatus{}, err
	}
	out := WaitStatus{Waits: wl.Waits, Total: wl.Total, Truncated: wl.Truncated}
	if out.Waits == nil {
		out.Waits = []api.Wait{}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d live wait job(s).", wl.Total)
	if wl.Truncated {
		fmt.Fprintf(&b, " The newest %d are listed; GET /v1/waits?state=live&before=%s (or acu waits list --state live --before %s) lists the next page.", len(wl.Waits), wl.Next, wl.Next)
	}
	for _, w := range wl.Waits {
		fmt.Fprintf(&b, "\n%s: watching %s for %q, %d judgements, deadline %s", w.ID, w.Target, w.Criteria, w.Evaluations, w.Deadline.Format(time.TimeOnly))
	}
	return textResult(b.String()), out, nil
}

// TaskLogBackend is what the task tools need (*api.Client).
type TaskLogBackend interface {
	CreateTaskLog(ctx context.Context, t api.CreateTaskLog) (api.TaskLog, error)
	AppendTaskLog(ctx context.Context, id string, a api.AppendTaskLog) (api.TaskLog, error)
	TaskLog(ctx context.Context, id string) (api.TaskLog, error)
	TaskLogs(ctx context.Context, status string, limit int) (api.TaskLogList, error)
}

// notOffered are DETM tools acu leaves out on purpose, with what to use.
var notOffered = map[string]string{
	"task_item_update": "acu's task log is flat, without plan items: report progress with task_update (message, status)",
	"task_plan_append": "acu's task log is flat, without plan items: add the new steps as a task_update message",
	"task_drill_down":  "acu's task log is flat, without plan items: task_summary shows the whole log",
	"desktop_action":   "use act, click, type_text, press_key, scroll, drag or move_pointer, and desktop_state for the element ids",
	"gui_do":           "use gui_agent (or run_task) for a task in plain language, or click/type_text on element ids from desktop_state",
	"gui_find":         "use desktop_state: every element with an id and a place",
	"video_record":     "acu does not record video yet",
	"mavi_understand":  "acu has no video model: use screenshot or smart_wait",
	"health_check":     "run `acu doctor` on the machine; the daemon's /health answers too",
	"memory_search":    "acu keeps no memory files: memory is the agent's own (its workspace's MEMORY.md)",
	"memory_read":      "acu keeps no memory files: memory is the agent's own (its workspace's MEMORY.md)",
	"memory_append":    "acu keeps no memory files: memory is the agent's own (its workspace's MEMORY.md)",
}

// refuseNotOffered answers a call of a DETM tool acu leaves out with a
// tool error saying so, instead of the protocol's bare "unknown tool".
func refuseNotOffered(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				if why, ok := notOffered[p.Name]; ok {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
						Text: fmt.Sprintf("%s is a tool of DETM (agentic_computer_use) that acu does not provide: %s.", p.Name, why)}}}, nil
				}
			}
		}
		return next(ctx, method, req)
	}
}

// RegisterArgs are task_register's arguments.
type RegisterArgs struct {
	Name     string         `json:"name" jsonschema:"what the task is, for people"`
	Plan     []string       `json:"plan,omitempty" jsonschema:"an ordered checklist, kept as the log's first lines"`
	TaskID   string         `json:"task_id,omitempty" jsonschema:"an id of your own (default: acu makes one)"`
	Metadata map[string]any `json:"metadata,omitempty" jsonschema:"accepted for DETM's clients; acu keeps it in the log as JSON"`
}

// TaskUpdateArgs are task_update's arguments.
type TaskUpdateArgs struct {
	TaskID  string `json:"task_id" jsonschema:"the task"`
	Message string `json:"message,omitempty" jsonschema:"a progress line"`
	Status  string `json:"status,omitempty" jsonschema:"active, paused, completed, failed or cancelled"`
	Query   string `json:"query,omitempty" jsonschema:"accepted for DETM's clients: acu answers with the log, not a model's reading of it"`
}

// LogActionArgs are task_log_action's arguments.
type LogActionArgs struct {
	TaskID     string `json:"task_id" jsonschema:"the task"`
	ActionType string `json:"action_type" jsonschema:"cli, gui, wait, vision, reasoning or other"`
	Summary    string `json:"summary" jsonschema:"what was done"`
	InputData  string `json:"input_data,omitempty" jsonschema:"the command or input"`
	OutputData string `json:"output_data,omitempty" jsonschema:"the result"`
	Status     string `json:"status,omitempty" jsonschema:"started, completed (default) or failed"`
}

// TaskIDArgs name one task.
type TaskIDArgs struct {
	TaskID      string `json:"task_id" jsonschema:"the task"`
	DetailLevel string `json:"detail_level,omitempty" jsonschema:"accepted for DETM's clients; acu always shows the whole log"`
	Limit       int    `json:"limit,omitempty" jsonschema:"show at most this many of the newest lines"`
}

// TaskListArgs are task_list's arguments.
type TaskListArgs struct {
	Status string `json:"status,omitempty" jsonschema:"active (default), paused, completed, failed, cancelled or all"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many (default 10)"`
}

// LookArgs are desktop_look's arguments.
type LookArgs struct {
	TaskID     string `json:"task_id,omitempty" jsonschema:"accepted for DETM's clients (acu has one display per daemon or per request)"`
	WindowName string `json:"window_name,omitempty" jsonschema:"show only this window (title substring)"`
	Display    string `json:"display,omitempty" jsonschema:"X display (default: the daemon's)"`
}

// GUIAgentArgs are gui_agent's arguments.
type GUIAgentArgs struct {
	Instruction string `json:"instruction" jsonschema:"what to accomplish on the desktop, specific and complete"`
	TaskID      string `json:"task_id,omitempty" jsonschema:"the task whose log gets the outcome"`
	Timeout     int    `json:"timeout,omitempty" jsonschema:"seconds to wait here for it (default 180, at most 300)"`
	Context     string `json:"context,omitempty" jsonschema:"extra context: URLs, prior state"`
}

// AddDETMTools registers DETM's task, look and GUI-agent tools.
func AddDETMTools(s *mcp.Server, t *tools, tl TaskLogBackend) {
	d := &detm{t: t, tl: tl}
	addTool(s, &mcp.Tool{Name: "task_register", Description: "Register a task with an optional plan (a checklist); returns its task_id. Link waits to it with smart_wait's task_id: their outcomes land in its log.", Annotations: additive}, d.register)
	addTool(s, &mcp.Tool{Name: "task_update", Description: "Report progress on a task: a message, a new status (active, paused, completed, failed, cancelled), or both. Returns the task's log.", Annotations: additive}, d.update)
	addTool(s, &mcp.Tool{Name: "task_log_action", Description: "Log a discrete action under a task (e.g. ran ffmpeg, clicked Export).", Annotations: additive}, d.logAction)
	addTool(s, &mcp.Tool{Name: "task_summary", Description: "A task's status and its whole progress log, waits' outcomes included.", Annotations: readOnly}, d.summary)
	addTool(s, &mcp.Tool{Name: "task_thread", Description: "A task's progress log (the same as task_summary).", Annotations: readOnly}, d.summary)
	addTool(s, &mcp.Tool{Name: "task_list", Description: "List tasks (active by default) with their status and log size.", Annotations: readOnly}, d.list)
	addTool(s, &mcp.Tool{Name: "desktop_look", Description: "Take a screenshot and return it to you as an image (jpeg, 960 wide), with the id to click its pixels.", Annotations: readOnly}, d.look)
	if tb, ok := t.b.(TaskBackend); ok {
		d.tasks = &taskTools{b: tb, opts: t.opts}
		addTool(s, &mcp.Tool{Name: "gui_agent", Description: "Complete a multi-step GUI task in plain language with acu's task agents (the same as run_task); waits here up to timeout seconds.", Annotations: destructive}, d.guiAgent)
	}
}

type detm struct {
	t     *tools
	tl    TaskLogBackend
	tasks *taskTools
}

func logText(l api.TaskLog, limit int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s %q: %s, %d log lines.", l.ID, l.Name, l.Status, l.Count)
	es := l.Entries
	if limit > 0 && len(es) > limit {
		es = es[len(es)-limit:]
	}
	for _, e := range es {
		fmt.Fprintf(&b, "\n%s %s", e.At.Local().Format(time.TimeOnly), e.Message)
	}
	return b.String()
}

func (d *detm) register(ctx context.Context, _ *mcp.CallToolRequest, in RegisterArgs) (*mcp.CallToolResult, api.TaskLog, error) {
	l, err := d.tl.CreateTaskLog(ctx, api.CreateTaskLog{ID: in.TaskID, Name: in.Name, Plan: in.Plan})
	if err != nil {
		return nil, api.TaskLog{}, err
	}
	if len(in.Metadata) > 0 {
		b, _ := json.Marshal(in.Metadata)
		if l, err = d.tl.AppendTaskLog(ctx, l.ID, api.AppendTaskLog{Message: "metadata: " + string(b)}); err != nil {
			return nil, api.TaskLog{}, err
		}
	}
	return textResult(logText(l, 0)), l, nil
}

func (d *detm) update(ctx context.Context, _ *mcp.CallToolRequest, in TaskUpdateArgs) (*mcp.CallToolResult, api.TaskLog, error) {
	var l api.TaskLog
	var err error
	if in.Message == "" && in.Status == "" {
		l, err = d.tl.TaskLog(ctx, in.TaskID) // a query: the log answers it
	} else {
		l, err = d.tl.AppendTaskLog(ctx, in.TaskID, api.AppendTaskLog{Message: in.Message, Status: in.Status})
	}
	if err != nil {
		return nil, api.TaskLog{}, err
	}
	return textResult(logText(l, 20)), l, nil
}

func (d *detm) logAction(ctx context.Context, _ *mcp.CallToolRequest, in LogActionArgs) (*mcp.CallToolResult, api.TaskLog, error) {
	status := in.Status
	if status == "" {
		status = "completed"
	}
	msg := fmt.Sprintf("[%s %s] %s", in.ActionType, status, in.Summary)
	if in.InputData != "" {
		msg += "\ninput: " + in.InputData
	}
	if in.OutputData != "" {
		msg += "\noutput: " + in.OutputData
	}
	l, err := d.tl.AppendTaskLog(ctx, in.TaskID, api.AppendTaskLog{Message: msg})
	if err != nil {
		return nil, api.TaskLog{}, err
	}
	return textResult(logText(l, 5)), l, nil
}

func (d *detm) summary(ctx context.Context, _ *mcp.CallToolRequest, in TaskIDArgs) (*mcp.CallToolResult, api.TaskLog, error) {
	l, err := d.tl.TaskLog(ctx, in.TaskID)
	if err != nil {
		return nil, api.TaskLog{}, err
	}
	return textResult(logText(l, in.Limit)), l, nil
}

func (d *detm) list(ctx context.Context, _ *mcp.CallToolRequest, in TaskListArgs) (*mcp.CallToolResult, api.TaskLogList, error) {
	status := in.Status
	if status == "" {
		status = "active"
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 10
	}
	ls, err := d.tl.TaskLogs(ctx, status, limit)
	if err != nil {
		return nil, api.TaskLogList{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d task(s).", len(ls.Tasks))
	for _, l := range ls.Tasks {
		fmt.Fprintf(&b, "\n%s %q: %s, %d log lines", l.ID, l.Name, l.Status, l.Count)
	}
	return textResult(b.String()), ls, nil
}

func (d *detm) look(ctx context.Context, req *mcp.CallToolRequest, in LookArgs) (*mcp.CallToolResult, ShotInfo, error) {
	args := ShotArgs{Display: in.Display, Format: "jpeg"}
	if in.WindowName != "" {
		args.Target = "window:" + in.WindowName
	}
	return d.t.screenshot(ctx, req, args)
}

func (d *detm) guiAgent(ctx context.Context, req *mcp.CallToolRequest, in GUIAgentArgs) (*mcp.CallToolResult, TaskInfo, error) {
	task := strings.TrimSpace(in.Instruction)
	if in.Context != "" {
		task += "\nContext: " + in.Context
	}
	// DETM blocks up to 300 s; MCP clients tend to time calls out after
	// about a minute, so acu waits at most MaxBlock here and the agent
	// keeps waiting with task_status.
	block := d.t.opts.MaxBlock
	if in.Timeout > 0 && time.Duration(in.Timeout)*time.Second < block {
		block = time.Duration(in.Timeout) * time.Second
	}
	return d.tasks.runTask(ctx, req, TaskArgs{Task: task, TaskID: in.TaskID, BlockSeconds: block.Seconds()})
}
