package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/acu-dev/acu/internal/api"
	"github.com/acu-dev/acu/internal/config"
)

func runWaits(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "waits", "[list [--state watching] [--limit N] [--before ID]] | show ID | update ID [--criteria TEXT] [--timeout S] | cancel ID [--reason TEXT]")
	state := fs.String("state", "", "with list: only waits in this state (watching, resolved, timeout, cancelled, error)")
	limit := fs.Int("limit", 0, "with list: waits per page (default 100, at most 1000)")
	before := fs.String("before", "", "with list: the page after this wait id (the previous page's next)")
	criteria := fs.String("criteria", "", "with update: the new condition")
	timeoutS := fs.String("timeout", "", "with update: a new timeout, counted from now")
	reason := fs.String("reason", "", "with cancel: why")
	asJSON := fs.Bool("json", false, "print JSON")
	sub, id, err := subcommand(fs, args, "wait")
	if err != nil {
		return err
	}
	cl, done, err := clientFor(ctx, e, sub == "list" || sub == "show")
	if err != nil {
		return err
	}
	defer done()
	switch sub {
	case "list":
		l, err := cl.ListWaits(ctx, api.WaitQuery{State: *state, Limit: *limit, Before: *before})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, l)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATE\tTARGET\tJUDGED\tDEADLINE\tCRITERIA")
		for _, w := range l.Waits {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", w.ID, w.State, w.Target, w.Evaluations, w.Deadline.Local().Format(time.TimeOnly), w.Criteria)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if l.Truncated {
			fmt.Fprintf(e.stderr, "%d of %d waits shown; next page: acu waits list --before %s\n", len(l.Waits), l.Total, l.Next)
		}
		return nil
	case "show":
		return jsonOut{e.stdout}.print(cl.GetWait(ctx, id))
	case "update":
		var u api.UpdateWait
		if *criteria != "" {
			u.Criteria = criteria
		}
		if *timeoutS != "" {
			d, err := config.ParseDuration(*timeoutS)
			if err != nil {
				return fmt.Errorf("--timeout %q: %v", *timeoutS, err)
			}
			s := d.Seconds()
			u.Timeout = &s
		}
		return jsonOut{e.stdout}.print(cl.UpdateWait(ctx, id, u))
	case "cancel":
		return jsonOut{e.stdout}.print(cl.CancelWait(ctx, id, *reason))
	}
	return fmt.Errorf("unknown subcommand %q: use list, show, update or cancel", sub)
}

func runSettle(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "settle", "[--target screen] [--quiet 1s] [--timeout 30s]")
	target := fs.String("target", "screen", "what must stop changing")
	dpy := fs.String("display", "", "X display (default: the daemon's DISPLAY)")
	quiet := fs.Duration("quiet", time.Second, "how long frames must stay unchanged")
	timeout := fs.Duration("timeout", 30*time.Second, "give up after")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cl, _, err := newClient(e)
	if err != nil {
		return err
	}
	res, err := cl.Settle(ctx, api.SettleRequest{Target: *target, Display: *dpy, Quiet: quiet.Seconds(), Timeout: timeout.Seconds()})
	if err != nil {
		return err
	}
	if err := printJSON(e.stdout, res); err != nil {
		return err
	}
	if !res.Settled {
		return &exitError{code: exitTimeout}
	}
	return nil
}
