package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool registers a tool with input and output schemas inferred from its
// types, with "type": ["null", T] narrowed to "type": T. Go pointers and
// slices infer as nullable unions, which some clients (Gemini's function
// declarations, MCP Inspector's lint) handle poorly; acu never sends null
// where it can omit a field, and omits, never nulls, what it does not set.
func addTool[In, Out any](s *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema of %s: %v", t.Name, err))
	}
	t.InputSchema = noNull(in)
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema of %s: %v", t.Name, err))
	}
	t.OutputSchema = noNull(out)
	mcp.AddTool(s, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		res, v, err := h(ctx, req, in)
		if err != nil || res != nil && res.IsError {
			return res, nil, err
		}
		o, err := withoutNulls(v)
		return res, o, err
	})
}

// withoutNulls is v as JSON with every null-valued object member left out,
// so structured results match the narrowed output schema.
func withoutNulls(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var o any
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, err
	}
	return dropNulls(o), nil
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = dropNulls(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}

// noNull narrows nullable type unions throughout a schema, in place.
func noNull(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	if len(s.Types) > 0 && slices.Contains(s.Types, "null") {
		rest := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
		if len(rest) == 1 {
			s.Type, s.Types = rest[0], nil
		} else {
			s.Types = rest
		}
	}
	for _, p := range s.Properties {
		noNull(p)
	}
	for _, d := range s.Defs {
		noNull(d)
	}
	for _, d := range s.Definitions {
		noNull(d)
	}
	noNull(s.Items)
	for _, x := range s.PrefixItems {
		noNull(x)
	}
	noNull(s.AdditionalProperties)
	for _, x := range s.AnyOf {
		noNull(x)
	}
	for _, x := range s.OneOf {
		noNull(x)
	}
	for _, x := range s.AllOf {
		noNull(x)
	}
	return s
}
