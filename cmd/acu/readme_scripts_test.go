package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// skippedCommands are the README's shell command lines no script runs,
// each with why. Everything else in a README shell block, and every command
// line `acu act -h` shows, must be run by a script under testdata/script
// (TestScripts), so the README cannot drift from what acu does.
var skippedCommands = map[string]string{
	"bash scripts/demo.sh": "installs Debian packages as root (scripts/install-deps.sh) and builds acu; " +
		"its parts (a display, the daemon, an OCR wait on a terminal, the notification) run in readme_wait.txtar",
	"bash scripts/test.sh": "installs Debian packages and runs every test, this one included (CI runs it as .ci/run)",
	"podman build --format docker -t acu-desktop .": "needs Podman and a container image build; " +
		"scripts/container-test.sh is its check",
	"podman run -d --name acu -p 127.0.0.1:18790:18790 -v acu-data:/var/lib/acu --shm-size 1g acu-desktop": "needs Podman and the image above; " +
		"scripts/container-test.sh is its check",
	"acu wait 'the download finished' --timeout 300 --detach": "needs a vision model (a paid API key or a local Ollama); " +
		"--detach with the OCR judge runs in readme_wait.txtar",
	"claude mcp add acu -e DISPLAY=:99 -- /usr/local/bin/acu mcp": "needs Claude Code, a paid service's client, not installed here",
	"openclaw config set mcp.servers.acu '{\"command\":\"/usr/local/bin/acu\",\"args\":[\"mcp\"],\"env\":{\"DISPLAY\":\":99\"}}'": "needs OpenClaw " +
		"(an npm package and a model key); scripts/openclaw-e2e.sh runs this loop",
	"openclaw gateway restart": "needs OpenClaw; scripts/openclaw-e2e.sh runs it",
}

// placeholders are README tokens that stand for a value only known when the
// script runs, and the script token that stands for it.
var placeholders = map[string]string{
	"0x1a00003": "$WID", // a window id (acu windows focus)
}

// cmdLine is one simple command of a shell line, as argv.
type cmdLine struct {
	line string // the README line or script line it came from
	argv []string
}

func (c cmdLine) String() string { return strings.Join(c.argv, " ") }

// readmeCommands returns the simple commands of README.md's shell blocks:
// fenced blocks without a language (or sh, bash, shell), except the
// architecture picture and the MCP tool-call examples (lines with → or box
// drawing). Lines are split at ; | && and a trailing &, comments dropped;
// a segment that only feeds a pipe (echo … |) is dropped with it.
func readmeCommands(t *testing.T, path string) []cmdLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []cmdLine
	var block []string
	in, shell := false, false
	flush := func() {
		if shell && !slices.ContainsFunc(block, func(l string) bool {
			return strings.ContainsAny(l, "→─┐┘▶")
		}) {
			for _, l := range block {
				out = append(out, shellCommands(t, l)...)
			}
		}
		block = nil
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "```"); ok {
			if in {
				flush()
				in = false
			} else {
				in = true
				lang := strings.TrimSpace(rest)
				shell = lang == "" || lang == "sh" || lang == "bash" || lang == "shell"
			}
			continue
		}
		if in && strings.TrimSpace(l) != "" {
			block = append(block, l)
		}
	}
	return out
}

// shellCommands splits one shell line into its simple commands, with POSIX
// quoting (single and double quotes, backslash).
func shellCommands(t *testing.T, line string) []cmdLine {
	var (
		out  []cmdLine
		argv []string
		word strings.Builder
		inW  bool
	)
	endWord := func() {
		if inW {
			argv = append(argv, word.String())
			word.Reset()
			inW = false
		}
	}
	endCmd := func(pipe bool) {
		endWord()
		if len(argv) > 0 && !pipe {
			out = append(out, cmdLine{line: line, argv: argv})
		}
		argv = nil
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\'':
			inW = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				word.WriteRune(rs[j])
				j++
			}
			if j == len(rs) {
				t.Fatalf("README line %q: unterminated single quote", line)
			}
			i = j
		case r == '"':
			inW = true
			j := i + 1
			for j < len(rs) && rs[j] != '"' {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[j+1]) {
					j++
				}
				word.WriteRune(rs[j])
				j++
			}
			if j == len(rs) {
				t.Fatalf("README line %q: unterminated double quote", line)
			}
			i = j
		case r == '\\' && i+1 < len(rs):
			inW = true
			i++
			word.WriteRune(rs[i])
		case r == '#' && !inW:
			endCmd(false)
			return out
		case r == ';':
			endCmd(false)
		case r == '|' && i+1 < len(rs) && rs[i+1] == '|', r == '&' && i+1 < len(rs) && rs[i+1] == '&':
			endCmd(false)
			i++
		case r == '|':
			endCmd(true) // the left side only feeds the right (echo hi | acu clip set)
		case r == '&':
			endCmd(false) // background: the command is the same
		case r == ' ' || r == '\t':
			endWord()
		default:
			inW = true
			word.WriteRune(r)
		}
	}
	endCmd(false)
	return out
}

// scriptCommands returns the commands the scripts run: each `exec` line
// (and the `export` command), words split by testscript's rules (single
// quotes, ” for a quote), variables left unexpanded, a leading ! or
// [condition] and a trailing & or &name& dropped.
func scriptCommands(t *testing.T) []cmdLine {
	t.Helper()
	files, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/script (%v)", err)
	}
	var out []cmdLine
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") {
				break // the archive's files
			}
			words := scriptWords(l)
			for len(words) > 0 && (words[0] == "!" || strings.HasPrefix(words[0], "[")) {
				words = words[1:]
			}
			if len(words) > 0 && (words[len(words)-1] == "&" || regexp.MustCompile(`^&\w+&$`).MatchString(words[len(words)-1])) {
				words = words[:len(words)-1]
			}
			switch {
			case len(words) > 1 && words[0] == "exec":
				out = append(out, cmdLine{line: filepath.Base(f) + ": " + l, argv: words[1:]})
			case len(words) > 1 && (words[0] == "export" || words[0] == "eval"):
				out = append(out, cmdLine{line: filepath.Base(f) + ": " + l, argv: words})
			}
		}
		fh.Close()
	}
	return out
}

func scriptWords(l string) []string {
	var (
		words []string
		w     strings.Builder
		inW   bool
	)
	rs := []rune(l)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\'':
			inW = true
			for i++; i < len(rs); i++ {
				if rs[i] == '\'' {
					if i+1 < len(rs) && rs[i+1] == '\'' {
						w.WriteRune('\'')
						i++
						continue
					}
					break
				}
				w.WriteRune(rs[i])
			}
		case r == '#' && !inW:
			i = len(rs)
		case r == ' ' || r == '\t':
			if inW {
				words = append(words, w.String())
				w.Reset()
				inW = false
			}
		default:
			inW = true
			w.WriteRune(r)
		}
	}
	if inW {
		words = append(words, w.String())
	}
	return words
}

// runBy reports whether a script command is the README command, token for
// token (a placeholder token matching its script variable).
func runBy(readme, script []string) bool {
	if len(readme) != len(script) {
		return false
	}
	for i, r := range readme {
		if script[i] != r && script[i] != placeholders[r] {
			return false
		}
	}
	return true
}

// actHelp is what `acu act -h` prints.
func actHelp(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(acuBin, "act", "-h").CombinedOutput()
	if err != nil {
		t.Fatalf("acu act -h: %v\n%s", err, out)
	}
	return string(out)
}

// actHelpCommands are the command lines `acu act -h` shows in quotes
// ("acu act click btn_ok --settle"), and the --json form of its usage line.
func actHelpCommands(t *testing.T, help string) []cmdLine {
	var out []cmdLine
	for _, m := range regexp.MustCompile(`"(acu act [^"]*)"`).FindAllStringSubmatch(help, -1) {
		out = append(out, shellCommands(t, m[1])...)
	}
	if !strings.Contains(help, "acu act --json FILE|-") {
		t.Fatalf("acu act -h no longer shows `acu act --json FILE|-`: update actHelpCommands\n%s", help)
	}
	out = append(out, cmdLine{line: "acu act --json FILE|-", argv: []string{"acu", "act", "--json", "FILE"}},
		cmdLine{line: "acu act --json FILE|-", argv: []string{"acu", "act", "--json", "-"}})
	return out
}

// actForm is one action form of `acu act -h`: "click POS [--button right]
// [--count 2]", or an older form such as "scroll X Y DY".
type actForm struct {
	text  string
	kind  string
	args  *regexp.Regexp // the positional arguments after the kind
	flags []string       // each [--flag V] must be run with this kind
}

// columns splits a help line's columns (two or more spaces apart).
var columns = regexp.MustCompile(`\s{2,}`)

// actForms reads the forms of the Actions block (columns split at two or
// more spaces) and of the "older forms" sentence.
func actForms(t *testing.T, help string) []actForm {
	var texts []string
	lines := strings.Split(help, "\n")
	in := false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "Actions"):
			in = true
			continue
		case in && strings.HasPrefix(l, "  "):
			texts = append(texts, columns.Split(strings.TrimSpace(l), -1)...)
		case in && !strings.HasPrefix(l, "or of") && !strings.HasPrefix(l, "or X") && !strings.HasPrefix(l, "  "):
			if len(texts) > 0 {
				in = false
			}
		}
		if strings.HasPrefix(l, "The older forms") {
			for _, m := range regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(l, -1) {
				texts = append(texts, m[1])
			}
		}
	}
	if len(texts) < 10 {
		t.Fatalf("acu act -h: found only %d action forms (%q): update actForms\n%s", len(texts), texts, help)
	}
	ints := map[string]bool{"X": true, "Y": true, "X1": true, "Y1": true, "X2": true, "Y2": true, "DY": true, "DX": true, "MS": true, "N": true}
	var out []actForm
	for _, text := range texts {
		words := strings.Fields(text)
		f := actForm{text: text, kind: words[0]}
		var re strings.Builder
		for i := 1; i < len(words); i++ {
			w := words[i]
			if strings.HasPrefix(w, "[--") {
				f.flags = append(f.flags, strings.TrimPrefix(w, "["))
				for i < len(words) && !strings.HasSuffix(words[i], "]") {
					i++
				}
				continue
			}
			opt := strings.HasPrefix(w, "[")
			name := strings.Trim(w, "[]")
			many := strings.HasSuffix(name, "...")
			name = strings.TrimSuffix(name, "...")
			tok := `\S+`
			if ints[name] {
				tok = `-?\d+`
			}
			switch {
			case many:
				re.WriteString(`(?: ` + tok + `)*`)
			case opt:
				re.WriteString(`(?: ` + tok + `)?`)
			default:
				re.WriteString(` ` + tok)
			}
		}
		f.args = regexp.MustCompile(`^` + re.String() + `$`)
		out = append(out, f)
	}
	return out
}

// actValueFlags are the flags of acu act that take a value.
var actValueFlags = map[string]bool{"--display": true, "--window": true, "--json": true, "--button": true, "--count": true,
	"--at": true, "--hold-ms": true, "--repeat": true, "--screenshot": true, "--crop": true}

// actPositional splits `acu act` arguments into the action's words and
// the flags given.
func actPositional(args []string) (pos, flags []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), flags
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 && !isInt(a) {
			name, _, hasV := strings.Cut(a, "=")
			name = "--" + strings.TrimLeft(name, "-")
			flags = append(flags, name)
			if actValueFlags[name] && !hasV {
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return pos, flags
}

// TestReadmeCommandsHaveScripts fails when a command line of the README's
// shell blocks or of `acu act -h` is not run by a script under
// testdata/script (and is not in skippedCommands with its reason), and when
// an action form of `acu act -h` (each [--flag] included) is not.
func TestReadmeCommandsHaveScripts(t *testing.T) {
	scripts := scriptCommands(t)
	covered := func(c cmdLine) bool {
		return slices.ContainsFunc(scripts, func(s cmdLine) bool { return runBy(c.argv, s.argv) })
	}
	readme := readmeCommands(t, "../../README.md")
	if len(readme) < 20 {
		t.Fatalf("found only %d command lines in README.md's shell blocks: is the parser broken?", len(readme))
	}
	usedSkips := map[string]bool{}
	for _, c := range readme {
		key := strings.Join(quoteAll(c.argv), " ")
		if reason, ok := skippedCommands[key]; ok {
			usedSkips[key] = true
			t.Logf("skipped (README): %s: %s", key, reason)
			continue
		}
		if !covered(c) {
			t.Errorf("README.md command %q (line %q) is run by no script in testdata/script: add one that runs it and checks its effect, or fix the README", c, c.line)
		}
	}
	for k := range skippedCommands {
		if !usedSkips[k] {
			t.Errorf("skippedCommands lists %q, which README.md no longer shows: remove it", k)
		}
	}

	help := actHelp(t)
	for _, c := range actHelpCommands(t, help) {
		ok := covered(c)
		if !ok && c.argv[len(c.argv)-1] == "FILE" {
			ok = slices.ContainsFunc(scripts, func(s cmdLine) bool {
				return len(s.argv) == 4 && s.argv[0] == "acu" && s.argv[1] == "act" && s.argv[2] == "--json" && s.argv[3] != "-"
			})
		}
		if !ok {
			t.Errorf("acu act -h shows %q (%q), which no script runs", c, c.line)
		}
	}
	for _, f := range actForms(t, help) {
		var withKind [][]string // flags of the script lines running this form
		for _, s := range scripts {
			if len(s.argv) < 3 || s.argv[0] != "acu" || s.argv[1] != "act" {
				continue
			}
			pos, flags := actPositional(s.argv[2:])
			var rest strings.Builder
			for _, a := range pos[min(1, len(pos)):] {
				rest.WriteString(" " + a)
			}
			if len(pos) > 0 && pos[0] == f.kind && f.args.MatchString(rest.String()) {
				withKind = append(withKind, flags)
			}
		}
		if len(withKind) == 0 {
			t.Errorf("acu act -h shows the form %q, which no script runs", f.text)
			continue
		}
		for _, fl := range f.flags {
			if !slices.ContainsFunc(withKind, func(flags []string) bool { return slices.Contains(flags, fl) }) {
				t.Errorf("acu act -h shows %q with %s, which no script runs", f.text, fl)
			}
		}
	}
}

// quoteAll quotes words as the skip list writes them: single quotes around
// a word with a space or a shell character.
func quoteAll(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if strings.ContainsAny(a, " \"'{}$") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}
