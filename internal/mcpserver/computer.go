package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/dialect/openai"
)

// ComputerBackend is what the computer-use tools need (*api.Client): POST
// /v1/computer/{vendor}.
type ComputerBackend interface {
	Computer(ctx context.Context, vendor string, q api.ComputerQuery, item json.RawMessage) (api.ComputerResult, error)
}

// AddComputerTools registers computer_anthropic, computer_openai and
// computer_uitars: a client that drives a computer-use model relays the
// model's action item to acu and hands the result back.
func AddComputerTools(s *mcp.Server, b ComputerBackend) {
	c := &computerTools{b: b}
	addTool(s, &mcp.Tool{Name: "computer_anthropic", Description: computerAnthropicDesc, Annotations: destructive}, computerHandler[ComputerArgs](c, api.VendorAnthropic))
	addTool(s, &mcp.Tool{Name: "computer_openai", Description: computerOpenAIDesc, Annotations: destructive}, computerHandler[ComputerArgs](c, api.VendorOpenAI))
	addTool(s, &mcp.Tool{Name: "computer_uitars", Description: computerUITARSDesc, Annotations: destructive}, computerHandler[UITARSArgs](c, api.VendorUITARS))
}

const computerCommon = ` acu runs it on the display (settling after each action instead of sleeping) and returns the result item to hand back to the model as it is (result), with the status: acted, error (the model's mistake or a refusal: result says so in the vendor's form), finished or call_user (UI-TARS), safety_check (OpenAI: nothing ran). Screenshots are offered at most at limit (default 1280x800); coordinates map back to the exact screen pixel.`

const computerAnthropicDesc = `Run one action of Anthropic's computer tool (computer_20250124, computer_20251124 with zoom, computer_20241022): item is the tool_use block (or its input), and result is the tool_result block (screenshot as a base64 image, is_error on failure). Declare the tool with display_width_px/display_height_px of image.` + computerCommon

const computerOpenAIDesc = `Run one OpenAI computer_call (the Responses API's computer use): item is the computer_call item, result the computer_call_output with the screenshot. A call with pending_safety_checks does not run until you show them to the user and, if they agree, call again with acknowledge = their ids.` + computerCommon

const computerUITARSDesc = `Run one UI-TARS output (Thought: … Action: click(start_box='(x1,y1)')): item is the model's text; mode says its coordinates: relative (0..1000, default), absolute (pixels of the screenshot) or smart (Qwen2.5-VL smart-resize pixels). result is the user message with the next screenshot.` + computerCommon

// ComputerArgs is the input of computer_anthropic and computer_openai,
// whose action items are JSON objects.
type ComputerArgs struct {
	Item map[string]any `json:"item" jsonschema:"the model's action item as the vendor sent it: Anthropic's tool_use block (or its input), OpenAI's computer_call item"`
	ComputerOptions
}

// UITARSArgs is computer_uitars' input: UI-TARS speaks text.
type UITARSArgs struct {
	Item string `json:"item" jsonschema:"the model's output text, as Thought: … Action: click(start_box='(x1,y1)')"`
	ComputerOptions
}

// ComputerOptions are what every computer tool takes beside its item.
type ComputerOptions struct {
	Display     string   `json:"display,omitempty" jsonschema:"X display, as :99 (default the daemon's)"`
	Limit       string   `json:"limit,omitempty" jsonschema:"largest screenshot offered to the model, WxH (default 1280x800)"`
	Format      string   `json:"format,omitempty" jsonschema:"png (default) or jpeg"`
	Version     string   `json:"version,omitempty" jsonschema:"Anthropic tool version, as computer_20250124"`
	Mode        string   `json:"mode,omitempty" jsonschema:"UI-TARS coordinates: relative, absolute or smart"`
	Acknowledge []string `json:"acknowledge,omitempty" jsonschema:"OpenAI safety check ids the user agreed to"`
}

// computerArgs is either tool input: its item as JSON, and its options.
type computerArgs interface {
	ComputerArgs | UITARSArgs
}

// ComputerOutput is a computer tool's structured result. Result is the
// vendor's result item, always a JSON object (Anthropic's tool_result
// block, OpenAI's computer_call_output, UI-TARS' user message).
type ComputerOutput struct {
	Result              map[string]any       `json:"result,omitempty" jsonschema:"the vendor's result item, to hand back to the model as it is"`
	Status              string               `json:"status" jsonschema:"acted, error, finished, call_user or safety_check"`
	Error               *api.ErrorDetail     `json:"error,omitempty"`
	Content             string               `json:"content,omitempty"`
	PendingSafetyChecks []openai.SafetyCheck `json:"pending_safety_checks,omitempty" jsonschema:"OpenAI: the checks to show the user before the action runs"`
	Screen              [2]int               `json:"screen"`
	Image               [2]int               `json:"image"`
	Actions             []api.ActionResult   `json:"actions,omitempty"`
	Ms                  float64              `json:"ms"`
}

type computerTools struct{ b ComputerBackend }

func computerHandler[A computerArgs](c *computerTools, vendor string) mcp.ToolHandlerFor[A, ComputerOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in A) (*mcp.CallToolResult, ComputerOutput, error) {
		var item json.RawMessage
		var o ComputerOptions
		switch a := any(in).(type) {
		case ComputerArgs:
			if a.Item == nil {
				return nil, ComputerOutput{}, fmt.Errorf("item is missing: pass the model's action item as the vendor sent it")
			}
			item, _ = json.Marshal(a.Item)
			o = a.ComputerOptions
		case UITARSArgs:
			if strings.TrimSpace(a.Item) == "" {
				return nil, ComputerOutput{}, fmt.Errorf("item is missing: pass the model's output text")
			}
			item, _ = json.Marshal(a.Item)
			o = a.ComputerOptions
		}
		res, err := c.b.Computer(ctx, vendor, api.ComputerQuery{Display: o.Display, Limit: o.Limit, Format: o.Format,
			Version: o.Version, Mode: o.Mode, Acknowledge: o.Acknowledge}, item)
		if err != nil {
			return nil, ComputerOutput{}, actError(err)
		}
		out := ComputerOutput{Status: res.Status, Error: res.Error, Content: res.Content, Screen: res.Screen, Image: res.Image, Actions: res.Actions, Ms: res.Ms}
		if len(res.Result) > 0 {
			if err := json.Unmarshal(res.Result, &out.Result); err != nil {
				return nil, ComputerOutput{}, fmt.Errorf("the daemon's %s result is not a JSON object: %w", vendor, err)
			}
		}
		if len(res.PendingSafetyChecks) > 0 {
			if err := json.Unmarshal(res.PendingSafetyChecks, &out.PendingSafetyChecks); err != nil {
				return nil, ComputerOutput{}, fmt.Errorf("the daemon's pending_safety_checks are not a list of checks: %w", err)
			}
		}
		text := string(res.Result)
		if res.Status == api.ComputerSafetyCheck && res.Error != nil {
			text = res.Error.Message + ": " + string(res.PendingSafetyChecks)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
	}
}

// RunResumer answers runs that wait for the user (*api.Client).
type RunResumer interface {
	ResumeRun(ctx context.Context, id string, req api.ResumeRequest) (api.ResumeResult, error)
}

const runResumeDesc = `Answer a run that waits for the user: an acu computer run stopped because the model called for the user (UI-TARS call_user) or because its action has safety checks (OpenAI). message is handed to the model. acknowledge accepts the safety checks; it needs an admin token, because the checks are for a person to accept, not the agent.`

// ResumeArgs is run_resume's input.
type ResumeArgs struct {
	RunID       string `json:"run_id" jsonschema:"the waiting run's id"`
	Message     string `json:"message,omitempty" jsonschema:"what to tell the model, e.g. what the user did"`
	Acknowledge bool   `json:"acknowledge,omitempty" jsonschema:"accept the pending safety checks (admin token only)"`
}

// ResumeOutput is run_resume's structured result.
type ResumeOutput struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"` // the run's: running while the loop goes on
	Cursor int64  `json:"cursor"` // the resume event's place in the event stream
	By     string `json:"by,omitempty"`
}

type resumeTool struct{ b RunResumer }

func (r *resumeTool) resume(ctx context.Context, _ *mcp.CallToolRequest, in ResumeArgs) (*mcp.CallToolResult, ResumeOutput, error) {
	if in.RunID == "" {
		return nil, ResumeOutput{}, fmt.Errorf("run_id is missing: give the id of the run that waits for the user")
	}
	res, err := r.b.ResumeRun(ctx, in.RunID, api.ResumeRequest{Acknowledge: in.Acknowledge, Message: in.Message})
	if err != nil {
		return nil, ResumeOutput{}, err
	}
	var ce api.ControlEvent
	_ = json.Unmarshal(res.Event.Data, &ce)
	return textResult(fmt.Sprintf("Run %s resumed.", in.RunID)), ResumeOutput{RunID: res.Run.ID, Status: res.Run.Status, Cursor: res.Event.Cursor, By: ce.By}, nil
}
