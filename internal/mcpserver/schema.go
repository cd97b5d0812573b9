package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool registers a tool with input and output schemas inferred from its
// types, with "type": ["null", T] narrowed to "type": T. Go pointers and
// slices infer as nullable unions, which some clients (Gemini's function
// declarations, MCP Inspector's lint) handle poorly; acu never sends null
// where it can omit a field, and omits, never nulls, what it does not set.
// A schema that would accept anything (an interface field infers as the
// boolean schema true) is refused here, at start: the TypeScript SDK's
// tools/list rejects a boolean where a property's schema belongs, and a
// host built on it would then see none of acu's tools (docs/clients.md).
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
	if err := portable(in, "inputSchema"); err != nil {
		panic(fmt.Sprintf("mcpserver: tool %s: %v", t.Name, err))
	}
	if err := portable(out, "outputSchema"); err != nil {
		panic(fmt.Sprintf("mcpserver: tool %s: %v", t.Name, err))
	}
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

// portable reports the first place in s where a schema says nothing (no
// type or other validation keyword: with no description either, it is
// sent as the boolean schema true): a property, an item, a branch or a
// definition. JSON Schema
// allows booleans there; the TypeScript SDK's tool types and MCP
// Inspector's strict lint do not. additionalProperties is the exception:
// false (a struct's fields only) and true (a free-form object) are what
// the TypeScript SDK's own servers send.
func portable(s *jsonschema.Schema, path string) error {
	if s == nil {
		return nil
	}
	if says, _ := json.Marshal(s); string(says) == "true" || string(says) == "false" {
		return fmt.Errorf("%s is the boolean schema %s: give the field a type (an interface field infers as one)", path, says)
	}
	if s.Type == "" && len(s.Types) == 0 && s.Ref == "" && s.Enum == nil && s.Const == nil && s.Not == nil &&
		s.AnyOf == nil && s.OneOf == nil && s.AllOf == nil {
		return fmt.Errorf("%s has no type, so it accepts any value: give the field a type", path)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if err := portable(s.Properties[name], path+".properties."+name); err != nil {
			return err
		}
	}
	for name, d := range s.Defs {
		if err := portable(d, path+".$defs."+name); err != nil {
			return err
		}
	}
	for name, d := range s.Definitions {
		if err := portable(d, path+".definitions."+name); err != nil {
			return err
		}
	}
	if err := portable(s.Items, path+".items"); err != nil {
		return err
	}
	for i, x := range s.PrefixItems {
		if err := portable(x, fmt.Sprintf("%s.prefixItems[%d]", path, i)); err != nil {
			return err
		}
	}
	for kw, xs := range map[string][]*jsonschema.Schema{"anyOf": s.AnyOf, "oneOf": s.OneOf, "allOf": s.AllOf} {
		for i, x := range xs {
			if err := portable(x, fmt.Sprintf("%s.%s[%d]", path, kw, i)); err != nil {
				return err
			}
		}
	}
	return nil
}
