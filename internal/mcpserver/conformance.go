// Conformance fixtures: what the MCP conformance suite
// (@modelcontextprotocol/conformance, server mode) calls on the server it
// tests, mirroring the suite's reference "everything" server. They exist so
// the suite can run against the real acu binary and prove that acu's own
// stack (the daemon's /mcp with its token, Host and Origin checks, SSE
// retry writer, sessions and event store; `acu mcp` over stdio) carries
// every message type the protocol has: tool results of every content type,
// tool errors, logging and progress notifications, sampling and
// elicitation requests to the client, resources and templates,
// subscriptions, prompts and completion.
//
// Options.Conformance (ACU_MCP_CONFORMANCE) turns them on; it is off by
// default and acu warns at start when it is on. Nothing here touches the
// desktop: every fixture answers with canned content.
//
//lint:file-ignore SA1019 the suite exercises sampling and logging, which protocol 2026-07-28 deprecates (SEP-2577)
package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The suite's minimal media, as its reference server sends them: a 1x1
// red PNG and a WAV of silence.
const (
	fixturePNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	fixtureWAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// Fixture resource URIs.
const (
	staticTextURI     = "test://static-text"
	staticBinaryURI   = "test://static-binary"
	watchedURI        = "test://watched-resource"
	templateURI       = "test://template/{id}/data"
	templatePrefix    = "test://template/"
	templateSuffix    = "/data"
	fixtureStepPause  = 50 * time.Millisecond // between the log and progress notifications, as the suite asks
	reconnectRetryFor = 10 * time.Millisecond // the retry test_reconnection announces when it closes its stream
	resumableSince    = "2025-11-25"          // the protocol version that brought priming events and stream resumption (SEP-1699)
)

func mustDecode(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic("mcpserver: fixture media: " + err.Error())
	}
	return b
}

// withConformance sets the server options the fixtures need: completion,
// and resource subscriptions (which the SDK then tracks per session).
func withConformance(o *mcp.ServerOptions) {
	o.CompletionHandler = completeFixture
	o.SubscribeHandler = func(_ context.Context, req *mcp.SubscribeRequest) error {
		return knownFixtureURI(req.Params.URI)
	}
	o.UnsubscribeHandler = func(_ context.Context, req *mcp.UnsubscribeRequest) error {
		return knownFixtureURI(req.Params.URI)
	}
}

// addConformance registers the fixtures on s.
func addConformance(s *mcp.Server) {
	addFixtureTools(s)
	addFixtureResources(s)
	addFixturePrompts(s)
}

// noArgs is the input of a fixture tool that takes no arguments.
type noArgs struct{}

// SamplingArgs are test_sampling's arguments.
type SamplingArgs struct {
	Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
}

// ElicitationArgs are test_elicitation's arguments.
type ElicitationArgs struct {
	Message string `json:"message" jsonschema:"the message to show the user"`
}

// addFixture registers a fixture tool with no output schema. Its input
// schema is inferred from In unless t has one, and must pass the same
// portability rule as acu's own tools (addTool).
func addFixture[In any](s *mcp.Server, t *mcp.Tool, h func(context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, error)) {
	var in *jsonschema.Schema
	if raw, ok := t.InputSchema.(json.RawMessage); ok {
		in = new(jsonschema.Schema)
		if err := json.Unmarshal(raw, in); err != nil {
			panic(fmt.Sprintf("mcpserver: input schema of %s: %v", t.Name, err))
		}
	} else {
		var err error
		if in, err = jsonschema.For[In](nil); err != nil {
			panic(fmt.Sprintf("mcpserver: input schema of %s: %v", t.Name, err))
		}
		t.InputSchema = noNull(in)
	}
	if err := portable(in, "inputSchema"); err != nil {
		panic(fmt.Sprintf("mcpserver: tool %s: %v", t.Name, err))
	}
	mcp.AddTool(s, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		res, err := h(ctx, req, in)
		return res, nil, err
	})
}

// jsonSchema202012 is json_schema_2020_12_tool's input schema, with the
// keywords the suite checks survive tools/list ($schema, $defs,
// additionalProperties; SEP-1613).
const jsonSchema202012 = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"type": "object",
			"properties": {
				"street": {"type": "string"},
				"city": {"type": "string"}
			}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"}
	},
	"additionalProperties": false
}`

func addFixtureTools(s *mcp.Server) {
	text := func(msg string) func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, error) {
		return func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, error) {
			return textResult(msg), nil
		}
	}
	content := func(cs ...mcp.Content) func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, error) {
		return func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: cs}, nil
		}
	}
	addFixture(s, &mcp.Tool{Name: "test_simple_text", Description: "Conformance fixture: answers with one text block."},
		text("This is a simple text response for testing."))
	addFixture(s, &mcp.Tool{Name: "test_image_content", Description: "Conformance fixture: answers with a 1x1 PNG image."},
		content(&mcp.ImageContent{Data: mustDecode(fixturePNG), MIMEType: "image/png"}))
	addFixture(s, &mcp.Tool{Name: "test_audio_content", Description: "Conformance fixture: answers with a short WAV of silence."},
		content(&mcp.AudioContent{Data: mustDecode(fixtureWAV), MIMEType: "audio/wav"}))
	addFixture(s, &mcp.Tool{Name: "test_embedded_resource", Description: "Conformance fixture: answers with an embedded text resource."},
		content(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain",
			Text: "This is an embedded resource content."}}))
	addFixture(s, &mcp.Tool{Name: "test_multiple_content_types", Description: "Conformance fixture: answers with text, an image and an embedded resource."},
		content(&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: mustDecode(fixturePNG), MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json",
				Text: `{"test":"data","value":123}`}}))
	addFixture(s, &mcp.Tool{Name: "test_tool_with_logging", Description: "Conformance fixture: sends three info log messages while it runs."}, fixtureLogging)
	addFixture(s, &mcp.Tool{Name: "test_tool_with_progress", Description: "Conformance fixture: reports progress 0, 50 and 100 of 100 when given a progress token."}, fixtureProgress)
	addFixture(s, &mcp.Tool{Name: "test_error_handling", Description: "Conformance fixture: always answers with a tool error."},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "This tool intentionally returns an error for testing"}}}, nil
		})
	addFixture(s, &mcp.Tool{Name: "test_sampling", Description: "Conformance fixture: asks the client's model (sampling/createMessage) and answers with its reply."}, fixtureSampling)
	addFixture(s, &mcp.Tool{Name: "test_elicitation", Description: "Conformance fixture: asks the user for a username and email (elicitation/create) and answers with the reply."}, fixtureElicitation)
	addFixture(s, &mcp.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Conformance fixture: elicitation whose schema gives a default for every primitive type (SEP-1034)."},
		elicitWith("Test defaults for primitives", map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
				"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
				"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
				"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
				"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
			},
		}))
	titled := func(prefix string) []map[string]any {
		return []map[string]any{{"const": "value1", "title": "First " + prefix}, {"const": "value2", "title": "Second " + prefix}, {"const": "value3", "title": "Third " + prefix}}
	}
	addFixture(s, &mcp.Tool{Name: "test_elicitation_sep1330_enums", Description: "Conformance fixture: elicitation with every enum form (SEP-1330)."},
		elicitWith("Test enum schemas", map[string]any{
			"type": "object",
			"properties": map[string]any{
				"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
				"titledSingle":   map[string]any{"type": "string", "oneOf": titled("Option")},
				"legacyEnum":     map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
				"untitledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
					"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
				"titledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
					"items": map[string]any{"anyOf": titled("Choice")}},
			},
		}))
	addFixture(s, &mcp.Tool{Name: "json_schema_2020_12_tool", Description: "Conformance fixture: a tool whose input schema uses JSON Schema 2020-12 keywords ($schema, $defs, $ref).",
		InputSchema: json.RawMessage(jsonSchema202012)},
		func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(in)
			return textResult("JSON Schema 2020-12 tool called with: " + string(b)), nil
		})
	addFixture(s, &mcp.Tool{Name: "test_reconnection", Description: "Conformance fixture: over streamable HTTP, closes its response stream before answering; the client reconnects and gets the answer replayed (SEP-1699)."},
		func(_ context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			// A client of an older protocol got no priming event to
			// resume from: closing its stream would lose the answer, so
			// it gets the answer on the stream, as the TypeScript SDK's
			// server does.
			if req.Extra != nil && req.Extra.CloseSSEStream != nil && req.Extra.Header.Get("Mcp-Protocol-Version") >= resumableSince {
				req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: reconnectRetryFor})
			}
			return textResult("Reconnection test completed: this answer reached the client after its stream was closed."), nil
		})
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func fixtureLogging(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			if err := pause(ctx, fixtureStepPause); err != nil {
				return nil, err
			}
		}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "acu-conformance", Data: msg}); err != nil {
			return nil, fmt.Errorf("log %q: %w", msg, err)
		}
	}
	return textResult("Tool with logging executed successfully: three log messages sent."), nil
}

func fixtureProgress(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
	token := req.Params.GetProgressToken()
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := pause(ctx, fixtureStepPause); err != nil {
				return nil, err
			}
		}
		if token == nil {
			continue
		}
		if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100,
			Message: fmt.Sprintf("step %.0f of 100", p)}); err != nil {
			return nil, fmt.Errorf("progress %g: %w", p, err)
		}
	}
	if token == nil {
		return textResult("Tool with progress executed (no progress token was given, so no progress was reported)."), nil
	}
	return textResult(fmt.Sprintf("Tool with progress executed: reported 0, 50 and 100 of 100 for token %v.", token)), nil
}

func fixtureSampling(ctx context.Context, req *mcp.CallToolRequest, in SamplingArgs) (*mcp.CallToolResult, error) {
	if in.Prompt == "" {
		return nil, fmt.Errorf("test_sampling: give a prompt")
	}
	res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 100,
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}}})
	if err != nil {
		return nil, fmt.Errorf("sampling: %w", err)
	}
	reply := "(a reply that is not text)"
	if tc, ok := res.Content.(*mcp.TextContent); ok {
		reply = tc.Text
	}
	return textResult("LLM response: " + reply), nil
}

func fixtureElicitation(ctx context.Context, req *mcp.CallToolRequest, in ElicitationArgs) (*mcp.CallToolResult, error) {
	if in.Message == "" {
		return nil, fmt.Errorf("test_elicitation: give a message")
	}
	return elicit(ctx, req, in.Message, map[string]any{
		"type": "object",
		"properties": map[string]any{
			"username": map[string]any{"type": "string", "description": "User's response"},
			"email":    map[string]any{"type": "string", "description": "User's email address"},
		},
		"required": []string{"username", "email"},
	}, "User response")
}

func elicitWith(message string, schema map[string]any) func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, error) {
	return func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
		return elicit(ctx, req, message, schema, "Elicitation completed")
	}
}

func elicit(ctx context.Context, req *mcp.CallToolRequest, message string, schema map[string]any, lead string) (*mcp.CallToolResult, error) {
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: message, RequestedSchema: schema})
	if err != nil {
		return nil, fmt.Errorf("elicitation: %w", err)
	}
	b, _ := json.Marshal(res.Content)
	return textResult(fmt.Sprintf("%s: action=%s, content=%s", lead, res.Action, b)), nil
}

// knownFixtureURI refuses a subscription to a resource acu does not have.
func knownFixtureURI(uri string) error {
	switch {
	case uri == staticTextURI, uri == staticBinaryURI, uri == watchedURI:
		return nil
	case templateID(uri) != "":
		return nil
	}
	return fmt.Errorf("no resource %q: the conformance fixtures are %s, %s, %s and %s", uri, staticTextURI, staticBinaryURI, watchedURI, templateURI)
}

// templateID is the {id} of a test://template/{id}/data URI, or "".
func templateID(uri string) string {
	rest, ok := strings.CutPrefix(uri, templatePrefix)
	if !ok {
		return ""
	}
	id, ok := strings.CutSuffix(rest, templateSuffix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return ""
	}
	return id
}

func addFixtureResources(s *mcp.Server) {
	one := func(mime, text string, blob []byte) mcp.ResourceHandler {
		return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: mime, Text: text, Blob: blob}}}, nil
		}
	}
	s.AddResource(&mcp.Resource{URI: staticTextURI, Name: "static-text", MIMEType: "text/plain",
		Description: "Conformance fixture: a static text resource."},
		one("text/plain", "This is the content of the static text resource.", nil))
	s.AddResource(&mcp.Resource{URI: staticBinaryURI, Name: "static-binary", MIMEType: "image/png",
		Description: "Conformance fixture: a static binary resource (a 1x1 PNG)."},
		one("image/png", "", mustDecode(fixturePNG)))
	s.AddResource(&mcp.Resource{URI: watchedURI, Name: "watched-resource", MIMEType: "text/plain",
		Description: "Conformance fixture: a resource to subscribe to (its content never changes, so no update is sent)."},
		one("text/plain", "Watched resource content.", nil))
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: templateURI, Name: "template", MIMEType: "application/json",
		Description: "Conformance fixture: a resource template; its content names the id it was read with."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := templateID(req.Params.URI)
			if id == "" {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			b, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
		})
}

func addFixturePrompts(s *mcp.Server) {
	user := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Title: "Simple test prompt", Description: "Conformance fixture: a prompt without arguments."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A simple test prompt",
				Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt with arguments", Description: "Conformance fixture: a prompt with two required arguments.",
		Arguments: []*mcp.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Description: "A prompt with arguments",
				Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt with an embedded resource",
		Description: "Conformance fixture: a prompt that embeds the resource it is given.",
		Arguments:   []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A prompt with an embedded resource", Messages: []*mcp.PromptMessage{
				user(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain",
					Text: "Embedded resource content for testing."}}),
				user(&mcp.TextContent{Text: "Please process the embedded resource above."}),
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt with an image", Description: "Conformance fixture: a prompt with an image."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A prompt with an image", Messages: []*mcp.PromptMessage{
				user(&mcp.ImageContent{Data: mustDecode(fixturePNG), MIMEType: "image/png"}),
				user(&mcp.TextContent{Text: "Please analyze the image above."}),
			}}, nil
		})
}

// completions are the values completion/complete offers for the
// arguments of test_prompt_with_arguments.
var completions = []string{"paris", "park", "party", "test", "testing"}

// completeFixture completes test_prompt_with_arguments' arguments from a
// fixed list by prefix; anything else gets an empty list.
func completeFixture(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	values := []string{}
	p := req.Params
	if p != nil && p.Ref != nil && p.Ref.Type == "ref/prompt" && p.Ref.Name == "test_prompt_with_arguments" && p.Argument.Name != "" {
		for _, v := range completions {
			if strings.HasPrefix(v, p.Argument.Value) {
				values = append(values, v)
			}
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}
