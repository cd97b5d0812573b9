package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acu-dev/acu/internal/api"
)

// listAll lists the tools of a server with every backend (*api.Client
// offers them all; listing calls none of them) as a client sees them,
// with the conformance fixtures when conformance is set.
func listAll(t *testing.T, conformance bool) []*mcp.Tool {
	t.Helper()
	srv := New(api.NewClient("http://127.0.0.1:1", "unused"), Options{Version: "test", Conformance: conformance})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// TestSchemasArePortable walks every tool's schemas as sent on the wire:
// no boolean schema and no typeless one where a schema belongs, the
// shapes the TypeScript SDK's tools/list accepts. The TypeScript client
// in CI (cmd/acu's TestTypeScriptClients) is the proof with the client
// people use; this test names the field at once.
func TestSchemasArePortable(t *testing.T) {
	tools := listAll(t, true) // acu's own tools and the conformance fixtures
	if len(tools) < 30 {
		t.Fatalf("only %d tools listed", len(tools))
	}
	for _, tl := range tools {
		for _, sc := range []struct {
			name string
			v    any
		}{{"inputSchema", tl.InputSchema}, {"outputSchema", tl.OutputSchema}} {
			if sc.v == nil {
				continue
			}
			b, _ := json.Marshal(sc.v)
			var wire any
			json.Unmarshal(b, &wire)
			if top, ok := wire.(map[string]any); !ok || top["type"] != "object" {
				t.Errorf("%s %s: top level is not {\"type\":\"object\"}: %s", tl.Name, sc.name, b)
			}
			walkSchemas(wire, tl.Name+" "+sc.name, func(path string, s any) {
				m, ok := s.(map[string]any)
				if !ok {
					t.Errorf("%s: %v where a schema object belongs", path, s)
					return
				}
				if _, typed := m["type"]; !typed && m["$ref"] == nil && m["anyOf"] == nil && m["oneOf"] == nil && m["enum"] == nil && m["const"] == nil {
					t.Errorf("%s: no type, accepts any value: %v", path, m)
				}
			})
		}
	}
}

// walkSchemas calls f on every schema in a property, items, prefixItems,
// anyOf/oneOf/allOf or $defs position below s.
func walkSchemas(s any, path string, f func(string, any)) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	visit := func(p string, x any) {
		f(p, x)
		walkSchemas(x, p, f)
	}
	for _, kw := range []string{"properties", "$defs", "definitions"} {
		if props, ok := m[kw].(map[string]any); ok {
			for k, v := range props {
				visit(path+"."+kw+"."+k, v)
			}
		}
	}
	if it, ok := m["items"]; ok {
		visit(path+".items", it)
	}
	for _, kw := range []string{"prefixItems", "anyOf", "oneOf", "allOf"} {
		if xs, ok := m[kw].([]any); ok {
			for _, x := range xs {
				visit(path+"."+kw, x)
			}
		}
	}
}

// TestPortableRefusesAnySchema shows the guard at registration catches
// what broke every TypeScript-SDK host: an interface field.
func TestPortableRefusesAnySchema(t *testing.T) {
	type bad struct {
		Result any `json:"result,omitempty"`
	}
	type described struct {
		Item any `json:"item" jsonschema:"anything"`
	}
	type good struct {
		Result map[string]any `json:"result,omitempty"`
		Checks []struct {
			ID string `json:"id"`
		} `json:"checks,omitempty"`
	}
	for _, c := range []struct {
		schema func(*jsonschema.ForOptions) (*jsonschema.Schema, error)
		want   string
	}{
		{jsonschema.For[bad], "outputSchema.properties.result is the boolean schema true"},
		{jsonschema.For[described], "outputSchema.properties.item has no type"},
		{jsonschema.For[good], ""},
	} {
		s, err := c.schema(nil)
		if err != nil {
			t.Fatal(err)
		}
		err = portable(s, "outputSchema")
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("portable = %v, want %q", err, c.want)
		}
	}
}
