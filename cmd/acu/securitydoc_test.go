package main

import (
	"os"
	"strings"
	"testing"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/mcpserver"
	"github.com/acu-dev/acu/internal/server"
)

const (
	securityDoc   = "../../docs/security.md"
	securityBegin = "<!-- scopes:begin (written by TestSecurityDoc from the route and tool tables: ACU_UPDATE_DOCS=1 go test ./cmd/acu -run TestSecurityDoc) -->"
	securityEnd   = "<!-- scopes:end -->"
)

// TestSecurityDoc keeps docs/security.md's per-scope lists the route
// table's and the tool table's: for each scope, exactly the routes and
// tools it can use, and what needs more.
func TestSecurityDoc(t *testing.T) {
	want := scopesDoc(server.Routes(), mcpserver.Tools())
	doc, err := os.ReadFile(securityDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), securityBegin+"\n")
	got, after, ok2 := strings.Cut(rest, securityEnd)
	if !ok1 || !ok2 {
		t.Fatalf("docs/security.md has no lists between %q and %q", securityBegin, securityEnd)
	}
	if got == want {
		return
	}
	if os.Getenv("ACU_UPDATE_DOCS") != "" {
		if err := os.WriteFile(securityDoc, []byte(before+securityBegin+"\n"+want+securityEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/security.md's scope lists differ from the tables; they should read:\n%s(ACU_UPDATE_DOCS=1 rewrites them)", want)
}

func scopesDoc(routes []server.RouteInfo, tools []mcpserver.ToolInfo) string {
	var b strings.Builder
	desktop := func(d string) string {
		switch d {
		case server.DesktopRead:
			return "reads the desktop"
		case server.DesktopEffect:
			return "changes the desktop"
		}
		return ""
	}
	row := func(name, d, doc string, notes []string) {
		cells := []string{desktop(d), doc}
		cells = append(cells, notes...)
		var parts []string
		for _, c := range cells {
			if c != "" {
				parts = append(parts, c)
			}
		}
		b.WriteString("- `" + name + "`")
		if len(parts) > 0 {
			b.WriteString(": " + strings.Join(parts, "; "))
		}
		b.WriteString("\n")
	}
	b.WriteString("### No token\n\n")
	for _, r := range routes {
		if r.Scope == "" {
			row(r.Key(), r.Desktop, r.Doc, nil)
		}
	}
	for _, scope := range api.Scopes {
		b.WriteString("\n### " + scope + "\n\nEverything above, and these routes:\n\n")
		for _, r := range routes {
			var notes []string
			switch {
			case r.Scope == scope && r.Others != "":
				notes = append(notes, "runs this token started; others' need "+r.Others)
			case r.Others == scope:
				row(r.Key(), r.Desktop, "", []string{"runs any caller started"})
				continue
			case r.Scope != scope:
				for _, x := range r.Raises {
					if x.Scope == scope {
						row(r.Key(), "", "", []string{"with " + x.When + ": " + x.Doc})
					}
				}
				continue
			}
			for _, x := range r.Raises {
				notes = append(notes, "with "+x.When+": needs "+x.Scope)
			}
			row(r.Key(), r.Desktop, r.Doc, notes)
		}
		b.WriteString("\nand these MCP tools:\n\n")
		for _, ti := range tools {
			var notes []string
			switch {
			case ti.Scope == scope && ti.Others != "":
				notes = append(notes, "runs this token started; others' need "+ti.Others)
			case ti.Others == scope:
				row(ti.Name, "", "", []string{"runs any caller started"})
				continue
			case ti.Scope != scope:
				if strings.Contains(ti.Raises, ": "+scope) {
					row(ti.Name, "", "", []string{"with " + ti.Raises})
				}
				continue
			}
			if ti.Raises != "" {
				notes = append(notes, "with "+ti.Raises)
			}
			row(ti.Name, ti.Desktop, "calls "+strings.Join(ti.Routes, ", "), notes)
		}
	}
	return b.String()
}
