package main

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/acu-dev/acu/internal/api"
)

func init() {
	featureCommands = append(featureCommands, command{"record", "record a display to MP4 or WebM: start, stop ID, list, get ID", runRecord})
}

func runRecord(ctx context.Context, e *env, args []string) error {
	r := &recordCommand{e: e}
	fs := newFlags(e, "record", "start [--display :99] [--format mp4|webm] [--run ID] | stop ID | list [--run ID] | get ID [-o FILE]")
	fs.StringVar(&r.display, "display", "", "start: the display to record (default: the daemon's)")
	fs.StringVar(&r.format, "format", "", "start: mp4 (H.264) or webm (VP8); default ACU_RECORD_FORMAT")
	fs.StringVar(&r.run, "run", "", "start: the run the recording belongs to; list: only that run's recordings")
	fs.StringVar(&r.out, "o", "", "get: the file to write (default ID.FORMAT in the current directory)")
	fs.IntVar(&r.limit, "limit", 20, "list: how many")
	fs.BoolVar(&r.json, "json", false, "print JSON")
	sub := "list"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	if sub == "stop" || sub == "get" {
		if len(args) == 0 || args[0] == "" || args[0][0] == '-' {
			fs.Usage()
			return fmt.Errorf("%s needs a recording id (acu record list)", sub)
		}
		r.id, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if r.cl, _, err = newClient(e); err != nil {
		return err
	}
	do, ok := map[string]func(context.Context) error{"start": r.start, "stop": r.stop, "get": r.get, "list": r.list}[sub]
	if !ok {
		fs.Usage()
		return fmt.Errorf("unknown record command %q: use start, stop, list or get", sub)
	}
	return do(ctx)
}

// recordCommand is `acu record`'s flags and its subcommands.
type recordCommand struct {
	e                         *env
	cl                        *api.Client
	id                        string // stop, get: the recording
	display, format, run, out string
	limit                     int
	json                      bool
}

func (r *recordCommand) start(ctx context.Context) error {
	rec, err := r.cl.StartRecording(ctx, api.StartRecording{Display: r.display, Format: r.format, RunID: r.run})
	if err != nil {
		return err
	}
	if r.json {
		return printJSON(r.e.stdout, rec)
	}
	fmt.Fprintln(r.e.stdout, rec.ID)
	fmt.Fprintf(r.e.stderr, "recording %s to %s (in the daemon's recordings directory); stop it with `acu record stop %s`\n", rec.Display, rec.File, rec.ID)
	return nil
}

func (r *recordCommand) stop(ctx context.Context) error {
	rec, err := r.cl.StopRecording(ctx, r.id)
	if err != nil {
		return err
	}
	if r.json {
		return printJSON(r.e.stdout, rec)
	}
	fmt.Fprintf(r.e.stdout, "%s\t%s\t%s\t%d frames\t%d bytes\n", rec.ID, rec.File, time.Duration(rec.DurationMs)*time.Millisecond, rec.Frames, rec.Bytes)
	return nil
}

func (r *recordCommand) get(ctx context.Context) error {
	path := r.out
	if path == "" {
		rec, err := r.cl.Recordings(ctx, "", 1000)
		if err != nil {
			return err
		}
		path = r.id + ".mp4"
		for _, rr := range rec.Recordings {
			if rr.ID == r.id {
				path = r.id + "." + rr.Format
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	n, err := r.cl.DownloadRecording(ctx, r.id, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	fmt.Fprintf(r.e.stdout, "%s (%d bytes)\n", path, n)
	return nil
}

func (r *recordCommand) list(ctx context.Context) error {
	l, err := r.cl.Recordings(ctx, r.run, r.limit)
	if err != nil {
		return err
	}
	if r.json {
		return printJSON(r.e.stdout, l)
	}
	tw := tabwriter.NewWriter(r.e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tDISPLAY\tSTARTED\tDURATION\tSIZE\tRUN\tFILE")
	for _, rr := range l.Recordings {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", rr.ID, rr.Status, rr.Display, rr.StartedAt.Local().Format(time.DateTime),
			time.Duration(rr.DurationMs)*time.Millisecond, rr.Bytes, rr.RunID, rr.File)
	}
	return tw.Flush()
}
