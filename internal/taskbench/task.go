package taskbench

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
)

//go:embed tasks/*.json tasks/files
var builtin embed.FS

// Task is one task of the suite, as its JSON file declares it.
type Task struct {
	ID    string   `json:"id"`
	Title string   `json:"title"`
	Tags  []string `json:"tags,omitempty"`
	// Needs are programs that must be on PATH; a task whose programs are
	// missing is reported as skipped, not failed.
	Needs  []string `json:"needs,omitempty"`
	Prompt string   `json:"prompt"`
	// TimeLimit bounds the engine's run ("2m"); StepLimit its iterations
	// or turns.
	TimeLimit Duration `json:"timeLimit"`
	StepLimit int      `json:"stepLimit"`
	// Files are created in the task's work directory ($WORK) before setup:
	// name to content. A content of "@name" copies tasks/files/name of the
	// suite.
	Files map[string]string `json:"files,omitempty"`
	// Setup starts the applications, in order; Teardown runs after the
	// check (the started processes are killed anyway).
	Setup    []Process  `json:"setup"`
	Teardown [][]string `json:"teardown,omitempty"`
	Check    Check      `json:"check"`
	// CI puts the task in the subset the scripted model solves in `go test`.
	CI bool `json:"ci,omitempty"`
	// Script is how the scripted CI model solves the task: one step per
	// fast-agent call, on elements it finds in the element map.
	Script []ScriptStep `json:"script,omitempty"`

	dir string // where the task's files come from: "" the embedded suite
}

// Process is an application the setup starts, with $WORK, $HOME and
// $CDP_PORT expanded in its arguments.
type Process struct {
	// Name names it for a stdout check.
	Name string `json:"name,omitempty"`
	// Run is the command line; Shell a sh -c script instead.
	Run   []string `json:"run,omitempty"`
	Shell string   `json:"shell,omitempty"`
	// Browser opens this page (relative to $WORK, or a URL) in Chromium
	// with the DevTools protocol on $CDP_PORT and accessibility on.
	Browser string `json:"browser,omitempty"`
	// WaitWindow waits until a top-level window whose title contains it
	// exists; WaitExit waits until the process exits (a preparation step).
	WaitWindow string `json:"waitWindow,omitempty"`
	WaitExit   bool   `json:"waitExit,omitempty"`
}

// Check reads the application's result. Kind is one of stdout (of the setup
// process Process), file (Path, relative to $WORK), command (Run or Shell,
// its stdout) or page (Expr, a JavaScript expression evaluated in the
// Chromium page, its value as a string). The value, trimmed of surrounding
// white space, must match every condition given: Equals, Contains, Matches
// (a regular expression), Absent (Contains must not occur). All checks
// every one of its checks instead.
type Check struct {
	Kind     string   `json:"kind,omitempty"`
	Process  string   `json:"process,omitempty"`
	Path     string   `json:"path,omitempty"`
	Run      []string `json:"run,omitempty"`
	Shell    string   `json:"shell,omitempty"`
	Expr     string   `json:"expr,omitempty"`
	Equals   *string  `json:"equals,omitempty"`
	Contains string   `json:"contains,omitempty"`
	Matches  string   `json:"matches,omitempty"`
	Lacks    string   `json:"lacks,omitempty"`
	All      []Check  `json:"all,omitempty"`
}

// ScriptStep is one step of the scripted model: an action on the element
// the selector finds on screen (Role and Name: exact text; NameHas: a
// substring of the line; Nth: the nth match, from 0; only elements whose
// centre is on the screen count), or "wait" until the selector finds one,
// or "done". Until repeats the step until an element with that exact text
// is on screen.
//
// Actions: click, double_click, right_click, type (Text), key (Keys; the
// selector, when given, is focused first), scroll (over the selector's
// element, or the screen's centre without one; Direction, Amount), drag
// (the selector's element onto the one named ToName), launch (App, a
// desktop entry), wait_for (Condition, Timeout in seconds: acu's smart
// wait), clicks (one click a character of Text on the element of that
// name: "{1}+{2}=" on a calculator's keys), read (Pattern, a regular
// expression, matched on the selector's line: its groups become {1}, {2}
// in later steps' Text and Keys), wait and done.
type ScriptStep struct {
	Action    string  `json:"action"`
	Role      string  `json:"role,omitempty"`
	Name      string  `json:"name,omitempty"`
	NameHas   string  `json:"nameHas,omitempty"`
	Nth       int     `json:"nth,omitempty"`
	Text      string  `json:"text,omitempty"`
	Keys      string  `json:"keys,omitempty"`
	Until     string  `json:"until,omitempty"`
	Direction string  `json:"direction,omitempty"`
	Amount    int     `json:"amount,omitempty"`
	ToName    string  `json:"toName,omitempty"`
	App       string  `json:"app,omitempty"`
	Condition string  `json:"condition,omitempty"`
	Timeout   float64 `json:"timeout,omitempty"`
	Pattern   string  `json:"pattern,omitempty"`
}

// ScriptActions are the actions a ScriptStep may take.
var ScriptActions = []string{"click", "double_click", "right_click", "type", "key", "scroll", "drag", "launch", "wait_for", "clicks", "read", "wait", "done"}

// Duration is a time.Duration written as "90s" or "2m" in JSON.
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string like \"90s\" or \"2m\": %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w (write it like \"90s\" or \"2m\")", s, err)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

var checkKinds = []string{"stdout", "file", "command", "page"}

// Validate says what is wrong with the task, with the fix.
func (t *Task) Validate() error {
	var errs []error
	bad := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
	if !idPattern.MatchString(t.ID) {
		bad("id %q: use lower-case letters, digits and dashes", t.ID)
	}
	if strings.TrimSpace(t.Prompt) == "" {
		bad("no prompt: say what the agent must do")
	}
	if t.TimeLimit <= 0 {
		bad("no timeLimit: give one like \"2m\"")
	}
	if t.StepLimit <= 0 {
		bad("no stepLimit: give the most iterations the engine may take, like 15")
	}
	if len(t.Setup) == 0 {
		bad("no setup: start at least one application")
	}
	names := map[string]bool{}
	for i, p := range t.Setup {
		n := 0
		for _, set := range []bool{len(p.Run) > 0, p.Shell != "", p.Browser != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			bad("setup[%d]: give exactly one of run, shell or browser", i)
		}
		if p.Name != "" {
			names[p.Name] = true
		}
	}
	for name := range t.Files {
		if path.IsAbs(name) || strings.Contains(path.Clean(name), "..") {
			bad("files: %q must be a relative path inside $WORK", name)
		}
	}
	if err := t.Check.validate(names, t.hasBrowser()); err != nil {
		bad("check: %v", err)
	}
	for i, s := range t.Script {
		switch {
		case !slices.Contains(ScriptActions, s.Action):
			bad("script[%d]: action %q: use one of %s", i, s.Action, strings.Join(ScriptActions, ", "))
		case s.Action == "drag" && s.ToName == "":
			bad("script[%d]: drag without toName, the element to drop on", i)
		case s.Action == "launch" && s.App == "":
			bad("script[%d]: launch without app, the desktop entry", i)
		case s.Action == "wait_for" && s.Condition == "":
			bad("script[%d]: wait_for without condition", i)
		case s.Action == "read":
			if _, err := regexp.Compile(s.Pattern); err != nil || s.Pattern == "" {
				bad("script[%d]: read needs a pattern, a regular expression with groups: %v", i, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (t *Task) hasBrowser() bool {
	return slices.ContainsFunc(t.Setup, func(p Process) bool { return p.Browser != "" })
}

func (c *Check) validate(procs map[string]bool, browser bool) error {
	if len(c.All) > 0 {
		if c.Kind != "" {
			return errors.New("give either all or kind, not both")
		}
		for i := range c.All {
			if err := c.All[i].validate(procs, browser); err != nil {
				return fmt.Errorf("all[%d]: %w", i, err)
			}
		}
		return nil
	}
	switch c.Kind {
	case "stdout":
		if !procs[c.Process] {
			return fmt.Errorf("stdout of process %q: name a setup process", c.Process)
		}
	case "file":
		if c.Path == "" {
			return errors.New("file check without a path")
		}
	case "command":
		if len(c.Run) == 0 && c.Shell == "" {
			return errors.New("command check without run or shell")
		}
	case "page":
		if c.Expr == "" || !browser {
			return errors.New("page check needs an expr and a browser setup process")
		}
	default:
		return fmt.Errorf("kind %q: use one of %s, or all", c.Kind, strings.Join(checkKinds, ", "))
	}
	if c.Equals == nil && c.Contains == "" && c.Matches == "" && c.Lacks == "" {
		return errors.New("no condition: give equals, contains, matches or lacks")
	}
	if c.Matches != "" {
		if _, err := regexp.Compile(c.Matches); err != nil {
			return fmt.Errorf("matches: %w", err)
		}
	}
	return nil
}

// Builtin is the suite built into acu.
func Builtin() ([]Task, error) {
	sub, err := fs.Sub(builtin, "tasks")
	if err != nil {
		return nil, err
	}
	return load(sub, "")
}

// Load reads every *.json task file of dir.
func Load(dir string) ([]Task, error) {
	ts, err := load(os.DirFS(dir), dir)
	if err != nil {
		return nil, fmt.Errorf("tasks in %s: %w", dir, err)
	}
	return ts, nil
}

func load(fsys fs.FS, dir string) ([]Task, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("no *.json task files")
	}
	slices.Sort(names)
	var out []Task
	seen := map[string]string{}
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		var t Task
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if prev, ok := seen[t.ID]; ok {
			return nil, fmt.Errorf("%s: id %q already used by %s", n, t.ID, prev)
		}
		seen[t.ID] = n
		t.dir = dir
		out = append(out, t)
	}
	return out, nil
}

// fileContent is the content of a Files entry: "@name" reads the suite's
// files/name.
func (t *Task) fileContent(v string) ([]byte, error) {
	name, ok := strings.CutPrefix(v, "@")
	if !ok {
		return []byte(v), nil
	}
	if t.dir == "" {
		return builtin.ReadFile(path.Join("tasks/files", name))
	}
	return os.ReadFile(path.Join(t.dir, "files", name))
}

// Select keeps the tasks whose id or tag is in sel (all when empty), and
// only the CI subset when ci.
func Select(ts []Task, sel []string, ci bool) ([]Task, error) {
	var out []Task
	used := map[string]bool{}
	for _, t := range ts {
		if ci && !t.CI {
			continue
		}
		if len(sel) > 0 {
			hit := false
			for _, s := range sel {
				if s == t.ID || slices.Contains(t.Tags, s) {
					hit, used[s] = true, true
				}
			}
			if !hit {
				continue
			}
		}
		out = append(out, t)
	}
	for _, s := range sel {
		if !used[s] {
			return nil, fmt.Errorf("no task has the id or tag %q (see `acu bench tasks -list`)", s)
		}
	}
	return out, nil
}
