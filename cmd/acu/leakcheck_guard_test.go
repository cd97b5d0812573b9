package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// leakCheckExceptions are packages that start goroutines without calling
// internal/leakcheck in their tests, each with why.
var leakCheckExceptions = map[string]string{
	"internal/agent":        "its TestMain checks with leakedGoroutines (helpers_test.go)",
	"internal/orchestrator": "its TestMain counts the goroutines before and after the tests (main_test.go)",
	"bench/relay":           "a load generator run as a program (docs/perf/relay.md), with no tests",
}

// TestEveryGoroutineStarterChecksLeaks fails when a package of the module
// has a go statement in its code but its tests do not fail on a goroutine
// left running after them (leakcheck.Main or MainThen in TestMain, or a
// check of its own, listed in leakCheckExceptions). Test helpers are left out:
// the tests of the packages that use them check their goroutines.
func TestEveryGoroutineStarterChecksLeaks(t *testing.T) {
	root := filepath.Join("..", "..")
	starts := map[string]string{} // package → the first go statement's place
	checks := map[string]bool{}   // package → its tests call leakcheck.Main*
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, "_test.go") {
			if strings.Contains(string(src), "leakcheck.Main(") || strings.Contains(string(src), "leakcheck.MainThen(") {
				checks[pkg] = true
			}
			return nil
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok && starts[pkg] == "" {
				p := fset.Position(g.Pos())
				starts[pkg] = filepath.Base(p.Filename) + ":" + itoa(p.Line)
			}
			return starts[pkg] == ""
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(starts) < 10 {
		t.Fatalf("found only %d packages that start goroutines: is the walk broken?", len(starts))
	}
	for pkg, at := range starts {
		if checks[pkg] || leakCheckExceptions[pkg] != "" || slices.Contains(testHelpers, pkg) {
			continue
		}
		t.Errorf("%s starts goroutines (%s) but its tests do not check for leaked ones: "+
			"add func TestMain(m *testing.M) { leakcheck.Main(m, \"acu-dev/acu/\") } (internal/leakcheck)", pkg, at)
	}
	for pkg := range leakCheckExceptions {
		if starts[pkg] == "" {
			t.Errorf("leakCheckExceptions lists %s, which starts no goroutine: remove it", pkg)
		}
	}
}
