package notify

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Environment variables every exec attempt gets, besides acu's own
// environment (or ExecOptions.Env): the message and its context, for
// commands that need a shell and must not splice {message} into a script.
// The message is also written to the command's standard input.
const (
	EnvMessage = "ACU_MESSAGE"
	EnvRunID   = "ACU_RUN_ID"
	EnvEvent   = "ACU_EVENT"
	EnvKey     = "ACU_NOTIFY_KEY"
)

// shells run their -c argument as code.
var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true,
	"yash": true, "fish": true, "csh": true, "tcsh": true,
}

// codeFlags are the interpreters that run an argument as code, and the
// option that introduces it.
var codeFlags = map[string]string{
	"python": "-c", "python2": "-c", "python3": "-c", "perl": "-e", "ruby": "-e", "node": "-e", "nodejs": "-e",
	"php": "-r", "lua": "-e", "osascript": "-e", "pwsh": "-c", "powershell": "-c",
}

// Warnings lists the risks of the command template for `acu doctor` and
// start-up: {message} spliced into code that a shell or an interpreter
// runs (sh -c '… {message} …'), where the message, which holds criteria
// from the agent and evidence from a model, runs as code.
func (e *Exec) Warnings() []string {
	code, prog := codeArg(e.argv)
	if code < 0 || !strings.Contains(e.argv[code], PlaceholderMessage) {
		return nil
	}
	return []string{fmt.Sprintf("exec notifier %q: ACU_NOTIFY_COMMAND puts %s inside the code %s runs (%q): the message, "+
		"with the agent's criteria and the model's evidence, then runs as code (prompt injection becomes command execution). "+
		"Pass it as an argument of its own (sh -c '… \"$1\"' sh %s), or read $%s or standard input instead",
		e.name, PlaceholderMessage, prog, e.argv[code], PlaceholderMessage, EnvMessage)}
}

// codeArg returns the index in argv of the argument a shell (-c) or an
// interpreter (-c, -e, …) runs as code, and the program's name; -1 when
// there is none. A leading env (with its options and NAME=value
// assignments) and busybox are looked through.
func codeArg(argv []string) (int, string) {
	i := 0
	if i < len(argv) && filepath.Base(argv[i]) == "env" {
		i++
		for i < len(argv) && (strings.HasPrefix(argv[i], "-") || strings.Contains(argv[i], "=")) {
			i++
		}
	}
	if i < len(argv) && filepath.Base(argv[i]) == "busybox" {
		i++
	}
	if i >= len(argv) {
		return -1, ""
	}
	prog := filepath.Base(argv[i])
	if shells[prog] {
		// sh [options] -c script [name [args…]]: -c may be combined (-ec, -lc).
		withC := false
		for j := i + 1; j < len(argv); j++ {
			a := argv[j]
			if a == "--" {
				if withC && j+1 < len(argv) {
					return j + 1, prog
				}
				return -1, ""
			}
			if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+") {
				if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a[1:], "c") {
					withC = true
				}
				if a == "-o" || a == "+o" || a == "-O" || a == "+O" {
					j++ // takes an option name
				}
				continue
			}
			if withC {
				return j, prog
			}
			return -1, ""
		}
		return -1, ""
	}
	flag, ok := codeFlags[strings.TrimRight(prog, "0123456789.")]
	if !ok {
		flag, ok = codeFlags[prog]
	}
	if !ok {
		return -1, ""
	}
	for j := i + 1; j < len(argv); j++ {
		if argv[j] == flag && j+1 < len(argv) {
			return j + 1, prog
		}
		if strings.HasPrefix(argv[j], flag) && len(argv[j]) > len(flag) { // -c'code' joined
			return j, prog
		}
	}
	return -1, ""
}
