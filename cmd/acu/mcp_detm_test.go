package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDETMClientFlow follows DETM's skill file with its own tool names and
// argument shapes (issue 12, part 2): task_register first, smart_wait with
// target and wake_when answered with DETM's JSON text, wait_status by
// wait_id and with no id (a listing), wait_update with wait_id, wake_when,
// timeout and message, the wake, then task_summary with the outcome; a DETM
// tool acu leaves out says so.
func TestDETMClientFlow(t *testing.T) {
	dpy := startDisplay(t)
	env, dataDir, port := newEnv(t, dpy)
	startDaemon(t, env, dataDir, port)
	xtermShowing(t, dpy, "exporter", "Export finished", 4*time.Second)

	client := mcp.NewClient(&mcp.Implementation{Name: "detm-skill", Version: "1"}, nil)
	cmd := exec.Command(acuBin, "mcp")
	cmd.Env = env
	s, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	_, task := callTool(t, s, "task_register", map[string]any{"name": "Export the report", "plan": []string{"start the export", "wait for it"}})
	taskID, _ := task["task_id"].(string)
	if taskID == "" || task["status"] != "active" {
		t.Fatalf("task_register = %v", task)
	}

	res, _ := callTool(t, s, "smart_wait", map[string]any{"target": "window:exporter", "wake_when": `"Export finished" is visible`,
		"timeout": 60, "task_id": taskID})
	var detm struct {
		WaitID  string `json:"wait_id"`
		Status  string `json:"status"`
		Target  string `json:"target"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(resultText(res)), &detm); err != nil || detm.WaitID == "" || detm.Status != "watching" || detm.Target == "" {
		t.Fatalf("smart_wait text %q (%v): want DETM's JSON {wait_id, status, target, message}", resultText(res), err)
	}
	_, st := callTool(t, s, "wait_status", map[string]any{"wait_id": detm.WaitID})
	if st["wait_id"] != detm.WaitID || st["id"] != detm.WaitID {
		t.Errorf("wait_status by wait_id = %v", st)
	}
	_, all := callTool(t, s, "wait_status", map[string]any{})
	if ws, _ := all["waits"].([]any); len(ws) != 1 || all["total"] != float64(1) || all["truncated"] == true {
		t.Errorf("wait_status without an id = %v, want the one live job", all)
	}
	res, up := callTool(t, s, "wait_update", map[string]any{"wait_id": detm.WaitID, "wake_when": `"Export finished" is visible`,
		"timeout": 90, "message": "still exporting"})
	if up["timeout"] != float64(90) || !strings.Contains(resultText(res), "logged") {
		t.Errorf("wait_update = %v %q", up, resultText(res))
	}
	_, done := callTool(t, s, "wait_status", map[string]any{"wait_id": detm.WaitID, "block_seconds": 50})
	if done["state"] != "resolved" {
		t.Fatalf("wait ended %v", done)
	}
	res, sum := callTool(t, s, "task_summary", map[string]any{"task_id": taskID})
	text := resultText(res)
	if !strings.Contains(text, "still exporting") || !strings.Contains(text, "resolved") || !strings.Contains(text, "plan 1: start the export") {
		t.Errorf("task_summary = %s (%v)", text, sum)
	}
	_, upd := callTool(t, s, "task_update", map[string]any{"task_id": taskID, "message": "exported", "status": "completed"})
	if upd["status"] != "completed" {
		t.Errorf("task_update = %v", upd)
	}
	_, list := callTool(t, s, "task_list", map[string]any{"status": "completed"})
	if ts, _ := list["tasks"].([]any); len(ts) != 1 {
		t.Errorf("task_list completed = %v", list)
	}
	res, _ = callTool(t, s, "desktop_look", map[string]any{"window_name": "exporter"})
	if res.IsError || len(res.Content) < 2 {
		t.Errorf("desktop_look = %q", resultText(res))
	}
	res, err = s.CallTool(t.Context(), &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": "x"}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "does not provide") {
		t.Errorf("memory_search = %v %q", err, resultText(res))
	}
}
