package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acu-dev/acu/internal/api"
)

// jsonOut prints a call's result as JSON or returns its error:
// jsonOut{w}.print(cl.Run(ctx, id)).
type jsonOut struct{ w io.Writer }

func (o jsonOut) print(v any, err error) error {
	if err != nil {
		return err
	}
	return printJSON(o.w, v)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func runRuns(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "runs", "[list] [flags] | show ID | wait ID [--timeout 30s] | cancel ID [--reason TEXT] | resume ID [--acknowledge] [--message TEXT]")
	kind := fs.String("kind", "", "only runs of this kind (wait, settle, agent, task, session)")
	status := fs.String("status", "", "only runs with this status (running, resolved, timeout, cancelled, error, ...)")
	live := fs.Bool("live", false, "only live runs")
	limit := fs.Int("limit", 20, "how many runs")
	asJSON := fs.Bool("json", false, "print JSON")
	timeout := fs.Duration("timeout", 30*time.Second, "with wait: how long to wait for the run's end")
	reason := fs.String("reason", "", "with cancel: why")
	ack := fs.Bool("acknowledge", false, "with resume: accept the model's pending safety checks (needs an admin token)")
	message := fs.String("message", "", "with resume: what to tell the model (e.g. what you did for it)")
	sub, id, err := subcommand(fs, args, "run")
	if err != nil {
		return err
	}
	cl, done, err := clientFor(ctx, e, sub == "list" || sub == "show" || sub == "wait")
	if err != nil {
		return err
	}
	defer done()
	switch sub {
	case "list":
		q := api.RunQuery{Kind: *kind, Status: *status, Limit: *limit}
		if *live {
			q.Live = live
		}
		l, err := cl.Runs(ctx, q)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, l)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tSTARTED\tENDED\tOWNER\tERROR")
		for _, r := range l.Runs {
			ended, owner := "-", "-"
			if r.EndedAt != nil {
				ended = r.EndedAt.Local().Format(time.TimeOnly)
			} else if r.Owner != nil {
				owner = r.Owner.String()
			} else if r.Host != "" {
				owner = "host " + r.Host + ": none yet" // waiting for its daemon, or orphaned
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Kind, r.Status, r.StartedAt.Local().Format(time.DateTime), ended, owner, r.Error)
		}
		return tw.Flush()
	case "show":
		return jsonOut{e.stdout}.print(cl.Run(ctx, id))
	case "wait":
		return jsonOut{e.stdout}.print(cl.WaitRun(ctx, id, *timeout))
	case "cancel":
		return jsonOut{e.stdout}.print(cl.CancelRun(ctx, id, *reason))
	case "resume":
		return jsonOut{e.stdout}.print(cl.ResumeRun(ctx, id, api.ResumeRequest{Acknowledge: *ack, Message: *message}))
	}
	return fmt.Errorf("unknown subcommand %q: use list, show, wait, cancel or resume", sub)
}

func runEvents(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "events", "[--run ID] [--stream lifecycle,verdict] [--after CURSOR | --from start|now] [--follow=false]")
	run := fs.String("run", "", "only this run's events")
	stream := fs.String("stream", "", "only these streams (comma-separated)")
	after := fs.Int64("after", 0, "start after this cursor")
	from := fs.String("from", "", "without --after, where following starts: start (every stored event) or now (default with no --run; with --run: start)")
	follow := fs.Bool("follow", true, "keep following new events (false: print what is stored, from the start or --after, and exit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fromStart := *run != ""
	switch *from {
	case "":
	case "start":
		fromStart = true
	case "now":
		fromStart = false
	default:
		return fmt.Errorf("events: --from must be start or now, got %q", *from)
	}
	cl, done, err := readClient(ctx, e)
	if err != nil {
		return err
	}
	defer done()
	q := api.EventQuery{RunID: *run, After: *after, FromStart: fromStart}
	if *stream != "" {
		q.Streams = strings.Split(*stream, ",")
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	if !*follow {
		l, err := cl.EventsAfter(ctx, q)
		if err != nil {
			return err
		}
		for _, ev := range l.Events {
			if err := enc.Encode(ev); err != nil {
				return err
			}
		}
		return nil
	}
	err = cl.Follow(ctx, q, func(ev api.Event) error { return enc.Encode(ev) })
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func runOpen(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "open", "[PATH]")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cl, _, err := newClient(e)
	if err != nil {
		return err
	}
	link, err := cl.LoginLink(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, link.URL)
	fmt.Fprintf(e.stderr, "one-time link, valid until %s; the page swaps it for a session of its own (no cookie) and never sees the token\n", link.ExpiresAt.Local().Format(time.TimeOnly))
	return nil
}

// subcommand splits "[SUB [ID]] [flags]" for commands like `acu runs` and
// `acu waits`: SUB defaults to list, and every other SUB needs an id.
func subcommand(fs *flag.FlagSet, args []string, noun string) (sub, id string, err error) {
	sub = "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	if sub != "list" {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			fs.Usage()
			return "", "", fmt.Errorf("%s needs a %s id", sub, noun)
		}
		id, args = args[0], args[1:]
	}
	return sub, id, fs.Parse(args)
}

func runHosts(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "hosts", "[--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cl, done, err := readClient(ctx, e)
	if err != nil {
		return err
	}
	defer done()
	l, err := cl.Hosts(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, l)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tDISPLAYS\tPROCESSES")
	for _, h := range l.Hosts {
		var ps []string
		for _, p := range h.Processes {
			ps = append(ps, fmt.Sprintf("%s pid %d", p.Program, p.PID))
		}
		name := h.Host
		if h.Host == l.Self {
			name += " (this one)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, strings.Join(h.Displays, ","), strings.Join(ps, ", "))
	}
	return tw.Flush()
}
