// Command acu is the daemon and CLI that gives LLM agents cheap eyes and
// hands on a Linux X11 desktop: smart waits, screenshots, input.
//
// The CLI uses the standard library's flag package, one FlagSet per
// subcommand (each subcommand is a struct with Run(ctx, args) error): it is
// enough for acu's flat command tree, costs no dependency, and keeps every
// subcommand's flags next to its code.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Environ(), os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// env is what a subcommand may read from its process.
type env struct {
	getenv  func(string) string
	environ []string
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// exitError carries a specific exit status (acu wait: 2 on timeout).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// featureCommands are added by the files of optional features (relay,
// agent, task) in their init functions, so each feature's CLI lives in its
// own file.
var featureCommands []command

func commands() []command {
	return append([]command{
		{"serve", "run the daemon (HTTP API, events, wait engine)", runServe},
		{"wait", "wait until a condition holds on screen (smart wait)", runWait},
		{"waits", "list, show, update or cancel wait jobs", runWaits},
		{"settle", "wait until the screen stops changing", runSettle},
		{"runs", "list runs, show one, wait for one, cancel one", runRuns},
		{"hosts", "list the hosts sharing this database, their processes and displays", runHosts},
		{"events", "follow the event stream", runEvents},
		{"screenshot", "save a screenshot of a display or window", runScreenshot},
		{"act", "move, click, drag, scroll, type or press keys", runAct},
		{"display", "start, list and stop virtual X displays (Xvfb)", runDisplay},
		{"mcp", "serve the MCP tools over stdio (starts the daemon, detached, when none runs)", runMCP},
		{"install", "write systemd user units that keep the daemon up: `acu install --user`", runInstall},
		{"doctor", "check the set-up: display, judge, notifiers", runDoctor},
		{"bench", "benchmarks: `acu bench judge`, `acu bench tasks`", runBench},
		{"open", "print a one-time login URL for the web pages", runOpen},
		{"config", "print the effective configuration (secrets redacted)", runConfig},
		{"version", "print the version", runVersion},
	}, featureCommands...)
}

func run(ctx context.Context, args []string, getenv func(string) string, environ []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{getenv: getenv, environ: environ, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		if err == nil {
			return 0
		}
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(stderr, "acu:", ee.msg)
			}
			return ee.code
		}
		fmt.Fprintln(stderr, "acu "+c.name+":", err)
		return 1
	}
	fmt.Fprintf(stderr, "acu: unknown command %q\n\n", args[0])
	usage(stderr)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "acu: eyes and hands on a Linux desktop for LLM agents\n\nUsage: acu <command> [flags] [args]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `acu <command> -h` for a command's flags. Configuration: `acu config --list`.")
}

func newFlags(e *env, name, usageLine string) *flag.FlagSet {
	fs := flag.NewFlagSet("acu "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: acu %s %s\n\nFlags:\n", name, usageLine)
		fs.PrintDefaults()
	}
	return fs
}

func runVersion(ctx context.Context, e *env, args []string) error {
	fmt.Fprintln(e.stdout, "acu", Version)
	return nil
}
