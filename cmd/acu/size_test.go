package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxFileLines bounds a Go file of the module's code (tests excluded): a
// file holds one job (issue 25, "no Go file over 800 lines").
const maxFileLines = 800

// maxFuncLines bounds the functions of longFuncs and cmd/acu's run
// functions, counted from func to the closing brace: the hot spots that
// became tables or named steps stay so.
const maxFuncLines = 60

// longFuncs are the functions that grew long once, by package directory
// and name ("Type.Method" for a method, pointer receiver or not). A name
// missing from its package fails the test: name the successors of a
// function renamed or split.
var longFuncs = map[string][]string{
	"internal/actions":           {"Service.Act", "Service.run", "checkAction"},
	"internal/dialect/anthropic": {"Tool.Plan"},
	"internal/dialect/openai":    {"Tool.action"},
	"internal/capture":           {"source.readFull"},
	"internal/runs":              {"Registry.Recover"},
	"internal/smartwait":         {"Engine.evaluate"},
}

// TestFileSizes fails on a non-test Go file of the module with more than
// maxFileLines lines.
func TestFileSizes(t *testing.T) {
	root := moduleRoot(t)
	for _, name := range goFiles(t, root) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n > maxFileLines {
			t.Errorf("%s has %d lines, over %d: split it into files of one job each", name, n, maxFileLines)
		}
	}
}

// TestFunctionSizes fails on a function of longFuncs, or of cmd/acu whose
// name starts with "run", longer than maxFuncLines lines.
func TestFunctionSizes(t *testing.T) {
	root := moduleRoot(t)
	checked := 0
	for dir, names := range longFuncs {
		found := map[string]bool{}
		for _, fn := range funcsIn(t, root, dir) {
			if !slices.Contains(names, fn.name) {
				continue
			}
			found[fn.name] = true
			checked++
			if fn.lines > maxFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: split it into named steps or a table", fn.at, fn.name, fn.lines, maxFuncLines)
			}
		}
		for _, name := range names {
			if !found[name] {
				t.Errorf("%s has no function %s: name its successors in longFuncs (cmd/acu/size_test.go)", dir, name)
			}
		}
	}
	for _, fn := range funcsIn(t, root, "cmd/acu") {
		base := fn.name[strings.LastIndex(fn.name, ".")+1:]
		if !strings.HasPrefix(base, "run") {
			continue
		}
		checked++
		if fn.lines > maxFuncLines {
			t.Errorf("%s: %s is %d lines, over %d: split it into named steps", fn.at, fn.name, fn.lines, maxFuncLines)
		}
	}
	t.Logf("%d functions checked", checked)
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// goFiles lists the Go files tracked by git under root, relative to it;
// outside a git checkout, every Go file under root but in testdata,
// node_modules and hidden directories.
func goFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--", "*.go")
	cmd.Dir = root
	out, err := cmd.Output()
	if err == nil {
		return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	}
	t.Logf("git ls-files: %v; walking %s instead", err, root)
	var files []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, path)
			files = append(files, rel)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// fnSize is one function's name ("Type.Method" for a method), where it
// starts and its length in lines.
type fnSize struct {
	name  string
	at    token.Position
	lines int
}

// funcsIn lists the functions of the non-test Go files of dir (relative to
// root), of every build tag.
func funcsIn(t *testing.T, root, dir string) []fnSize {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	fset := token.NewFileSet()
	var fns []fnSize
	for _, path := range names {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				name = recvType(fd.Recv.List[0].Type) + "." + name
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			start.Filename, _ = filepath.Rel(root, start.Filename)
			fns = append(fns, fnSize{name: name, at: start, lines: end.Line - start.Line + 1})
		}
	}
	return fns
}

// recvType is the name of a receiver's type: T for T, *T, T[P] and *T[P].
func recvType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}
