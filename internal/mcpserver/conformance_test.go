//lint:file-ignore SA1019 the conformance fixtures answer sampling and logging, which protocol 2026-07-28 deprecates (SEP-2577)

package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
)

// connect returns a client session, answering sampling and elicitation,
// to a server made with opts over in-memory transports.
func connect(t *testing.T, opts Options, copts *mcp.ClientOptions) *mcp.ClientSession {
	return connectAt(t, opts, copts, "")
}

// connectAt is connect negotiating protocol version v ("" the newest).
func connectAt(t *testing.T, opts Options, copts *mcp.ClientOptions, v string) *mcp.ClientSession {
	t.Helper()
	srv := New(api.NewClient("http://127.0.0.1:1", "unused"), opts)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, copts).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// fixtureNames are every fixture the suite calls.
var (
	fixtureTools = []string{"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_tool_with_logging", "test_tool_with_progress", "test_error_handling",
		"test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
		"json_schema_2020_12_tool", "test_reconnection"}
	fixturePrompts = []string{"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image"}
)

// TestConformanceOffByDefault: without Options.Conformance the server
// offers no fixture, no resources or prompts, and no completion.
func TestConformanceOffByDefault(t *testing.T) {
	cs := connect(t, Options{Version: "test"}, nil)
	caps := cs.InitializeResult().Capabilities
	if caps.Completions != nil || caps.Resources != nil || caps.Prompts != nil {
		t.Errorf("capabilities = completions %v, resources %v, prompts %v; want none", caps.Completions, caps.Resources, caps.Prompts)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if slices.Contains(fixtureTools, tl.Name) {
			t.Errorf("tool %s listed with Conformance off", tl.Name)
		}
	}
	if r, err := cs.ListResources(t.Context(), nil); err == nil && len(r.Resources) > 0 {
		t.Errorf("resources listed with Conformance off: %v", r.Resources[0].URI)
	}
	if r, err := cs.ListPrompts(t.Context(), nil); err == nil && len(r.Prompts) > 0 {
		t.Errorf("prompts listed with Conformance off: %v", r.Prompts[0].Name)
	}
}

// TestConformanceFixtures calls every fixture in-process; the suite itself
// runs against the binary in cmd/acu's TestConformanceSuite.
func TestConformanceFixtures(t *testing.T) {
	var mu sync.Mutex
	var logs []string
	var progress []float64
	var elicited []*mcp.ElicitParams
	// The suite's protocol version: from 2026-07-28 on a tool asks for
	// sampling and elicitation with an InputRequests result instead
	// (SEP-2322), which the suite does not test yet.
	cs := connectAt(t, Options{Version: "test", Conformance: true}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "reply to " + req.Params.Messages[0].Content.(*mcp.TextContent).Text}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			elicited = append(elicited, req.Params)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, req.Params.Data.(string))
			mu.Unlock()
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
	}, "2025-11-25")
	caps := cs.InitializeResult().Capabilities
	if caps.Completions == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil {
		t.Fatalf("capabilities = %+v, want completions, resources with subscribe, prompts", caps)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, n := range fixtureTools {
		if !slices.Contains(names, n) {
			t.Errorf("tool %s not listed", n)
		}
	}
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	call := func(name string, args map[string]any, progressToken any) *mcp.CallToolResult {
		t.Helper()
		p := &mcp.CallToolParams{Name: name, Arguments: args}
		if progressToken != nil {
			p.SetProgressToken(progressToken)
		}
		res, err := cs.CallTool(t.Context(), p)
		if err != nil {
			t.Fatalf("call %s: %v", name, err)
		}
		return res
	}
	kinds := func(res *mcp.CallToolResult) string {
		var ks []string
		for _, c := range res.Content {
			b, _ := json.Marshal(c)
			var m struct{ Type string }
			json.Unmarshal(b, &m)
			ks = append(ks, m.Type)
		}
		return strings.Join(ks, ",")
	}
	for name, want := range map[string]string{"test_simple_text": "text", "test_image_content": "image", "test_audio_content": "audio",
		"test_embedded_resource": "resource", "test_multiple_content_types": "text,image,resource"} {
		if got := kinds(call(name, nil, nil)); got != want {
			t.Errorf("%s content = %s, want %s", name, got, want)
		}
	}
	if res := call("test_error_handling", nil, nil); !res.IsError || resultText(res) == "" {
		t.Errorf("test_error_handling = %+v, want a tool error with a message", res)
	}
	call("test_tool_with_logging", nil, nil)
	call("test_tool_with_progress", nil, "p1")
	if res := call("test_sampling", map[string]any{"prompt": "hi"}, nil); resultText(res) != "LLM response: reply to hi" {
		t.Errorf("test_sampling = %q", resultText(res))
	}
	call("test_elicitation", map[string]any{"message": "who?"}, nil)
	call("test_elicitation_sep1330_enums", nil, nil)
	mu.Lock()
	if strings.Join(logs, "|") != "Tool execution started|Tool processing data|Tool execution completed" {
		t.Errorf("log messages = %q", logs)
	}
	if !slices.Equal(progress, []float64{0, 50, 100}) {
		t.Errorf("progress = %v, want 0, 50, 100", progress)
	}
	if len(elicited) != 2 || elicited[0].Message != "who?" {
		t.Errorf("elicitations = %+v", elicited)
	}
	mu.Unlock()

	for uri, want := range map[string]string{"test://static-text": "text/plain", "test://static-binary": "image/png", "test://template/42/data": "application/json"} {
		r, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(r.Contents) != 1 || r.Contents[0].MIMEType != want || r.Contents[0].URI != uri {
			t.Errorf("read %s = %+v, %v", uri, r, err)
		}
	}
	if r, _ := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://template/42/data"}); r == nil || !strings.Contains(r.Contents[0].Text, `"id":"42"`) {
		t.Errorf("template read does not name its id: %+v", r)
	}
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Errorf("subscribe: %v", err)
	}
	if err := cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "file:///etc/passwd"}); err == nil || !strings.Contains(err.Error(), "no resource") {
		t.Errorf("subscribe to an unknown URI = %v, want an error naming it", err)
	}

	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil || len(prompts.Prompts) != len(fixturePrompts) {
		t.Fatalf("prompts = %+v, %v", prompts, err)
	}
	p, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a1", "arg2": "a2"}})
	if err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "arg1='a1', arg2='a2'") {
		t.Errorf("test_prompt_with_arguments = %+v, %v", p, err)
	}
	c, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
		Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "par"}})
	if err != nil || !slices.Equal(c.Completion.Values, []string{"paris", "park", "party"}) {
		t.Errorf("complete arg1=par = %+v, %v", c, err)
	}
	c, err = cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
		Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "zzz"}})
	if err != nil || c.Completion.Values == nil || len(c.Completion.Values) != 0 {
		t.Errorf("complete arg1=zzz = %+v, %v; want an empty list, not null", c, err)
	}
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
