package mcpserver

import "slices"

// ToolInfo is one MCP tool's row in the scope table. Every tool calls the
// daemon's HTTP API with its session's token, so it needs the scope of the
// routes it calls (server.Routes has them; a test keeps the two tables
// agreeing) and does to the desktop what they do.
type ToolInfo struct {
	Name string
	// Routes are the routes the tool calls, "METHOD PATTERN" as in the
	// server's route table.
	Routes []string
	// Scope is the token scope the tool needs: the highest of its
	// routes'. Others is the scope needed for a run another caller
	// started (wait_update, wait_cancel, run_resume); Raises name argument
	// values that need more (launch_app's argv).
	Scope  string
	Others string
	Raises string
	// Desktop is "read", "effect" or "" as for routes: effect if a route
	// it calls changes the desktop, else read if one reads it.
	Desktop string
}

const (
	scopeRead, scopeAct       = "read", "act"
	desktopRead, desktopEffct = "read", "effect"
)

// toolTable lists every tool New can register.
var toolTable = []ToolInfo{
	{Name: "smart_wait", Routes: []string{"POST /v1/waits", "GET /v1/waits/{id}", "GET /v1/runs/{id}/wait"}, Scope: scopeRead, Desktop: desktopRead},
	{Name: "wait_status", Routes: []string{"GET /v1/waits/{id}", "GET /v1/waits", "GET /v1/runs/{id}/wait"}, Scope: scopeRead},
	{Name: "wait_update", Routes: []string{"PATCH /v1/waits/{id}"}, Scope: scopeRead, Others: scopeAct},
	{Name: "wait_cancel", Routes: []string{"DELETE /v1/waits/{id}"}, Scope: scopeRead, Others: scopeAct},
	{Name: "settle", Routes: []string{"POST /v1/settle"}, Scope: scopeRead, Desktop: desktopRead},
	{Name: "screenshot", Routes: []string{"GET /v1/screenshot"}, Scope: scopeRead, Desktop: desktopRead},

	{Name: "act", Routes: []string{"POST /v1/actions"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "click", Routes: []string{"POST /v1/actions"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "type_text", Routes: []string{"POST /v1/actions"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "press_key", Routes: []string{"POST /v1/actions"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "scroll", Routes: []string{"POST /v1/actions"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "drag", Routes: []string{"POST /v1/actions"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "move_pointer", Routes: []string{"POST /v1/actions"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "desktop_state", Routes: []string{"GET /v1/elements"}, Scope: scopeRead, Desktop: desktopRead},

	{Name: "computer_anthropic", Routes: []string{"POST /v1/computer/{vendor}"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "computer_openai", Routes: []string{"POST /v1/computer/{vendor}"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "computer_uitars", Routes: []string{"POST /v1/computer/{vendor}"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "run_resume", Routes: []string{"POST /v1/runs/{id}/resume"}, Scope: scopeRead, Others: scopeAct, Raises: "acknowledge: admin"},

	{Name: "list_windows", Routes: []string{"GET /v1/windows"}, Scope: scopeRead, Desktop: desktopRead},
	{Name: "focus_window", Routes: []string{"GET /v1/windows", "POST /v1/windows/{id}/{op}"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "window", Routes: []string{"GET /v1/windows", "POST /v1/windows/{id}/{op}"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "launch_app", Routes: []string{"POST /v1/apps/launch"}, Scope: scopeAct, Raises: "argv: admin (act with ACU_LAUNCH_ARGV=act)", Desktop: desktopEffct},
	{Name: "clipboard_get", Routes: []string{"GET /v1/clipboard"}, Scope: scopeAct, Desktop: desktopRead},
	{Name: "clipboard_set", Routes: []string{"PUT /v1/clipboard"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "pointer", Routes: []string{"GET /v1/pointer"}, Scope: scopeRead, Desktop: desktopRead},

	{Name: "task_register", Routes: []string{"POST /v1/tasklogs"}, Scope: scopeRead},
	{Name: "task_update", Routes: []string{"POST /v1/tasklogs/{id}"}, Scope: scopeRead},
	{Name: "task_log_action", Routes: []string{"POST /v1/tasklogs/{id}"}, Scope: scopeRead},
	{Name: "task_summary", Routes: []string{"GET /v1/tasklogs/{id}"}, Scope: scopeRead},
	{Name: "task_thread", Routes: []string{"GET /v1/tasklogs/{id}"}, Scope: scopeRead},
	{Name: "task_list", Routes: []string{"GET /v1/tasklogs"}, Scope: scopeRead},
	{Name: "desktop_look", Routes: []string{"GET /v1/screenshot"}, Scope: scopeRead, Desktop: desktopRead},
	{Name: "gui_agent", Routes: []string{"POST /v1/tasks", "GET /v1/runs/{id}", "GET /v1/runs/{id}/wait"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "run_task", Routes: []string{"POST /v1/tasks", "GET /v1/runs/{id}", "GET /v1/runs/{id}/wait"}, Scope: scopeAct, Desktop: desktopEffct},
	{Name: "task_status", Routes: []string{"GET /v1/runs/{id}", "GET /v1/runs/{id}/wait"}, Scope: scopeRead},
}

// Tools is the tool scope table: every tool New can register, with the
// routes it calls, its scope and what it does to the desktop.
func Tools() []ToolInfo {
	out := make([]ToolInfo, len(toolTable))
	for i, t := range toolTable {
		t.Routes = slices.Clone(t.Routes)
		out[i] = t
	}
	return out
}
