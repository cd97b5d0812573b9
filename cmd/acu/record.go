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
	fs := newFlags(e, "record", "start [--display :99] [--format mp4|webm] [--run ID] | stop ID | list [--run ID] | get ID [-o FILE]")
	dpy := fs.String("display", "", "start: the display to record (default: the daemon's)")
	format := fs.String("format", "", "start: mp4 (H.264) or webm (VP8); default ACU_RECORD_FORMAT")
	run := fs.String("run", "", "start: the run the recording belongs to; list: only that run's recordings")
	out := fs.String("o", "", "get: the file to write (default ID.FORMAT in the current directory)")
	limit := fs.Int("limit", 20, "list: how many")
	asJSON := fs.Bool("json", false, "print JSON")
	sub := "list"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	id := ""
	if sub == "stop" || sub == "get" {
		if len(args) == 0 || args[0] == "" || args[0][0] == '-' {
			fs.Usage()
			return fmt.Errorf("%s needs a recording id (acu record list)", sub)
		}
		id, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	cl, _, err := newClient(e)
	if err != nil {
		return err
	}
	switch sub {
	case "start":
		rec, err := cl.StartRecording(ctx, api.StartRecording{Display: *dpy, Format: *format, RunID: *run})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, rec)
		}
		fmt.Fprintln(e.stdout, rec.ID)
		fmt.Fprintf(e.stderr, "recording %s to %s (in the daemon's recordings directory); stop it with `acu record stop %s`\n", rec.Display, rec.File, rec.ID)
		return nil
	case "stop":
		rec, err := cl.StopRecording(ctx, id)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, rec)
		}
		fmt.Fprintf(e.stdout, "%s\t%s\t%s\t%d frames\t%d bytes\n", rec.ID, rec.File, time.Duration(rec.DurationMs)*time.Millisecond, rec.Frames, rec.Bytes)
		return nil
	case "get":
		path := *out
		if path == "" {
			rec, err := cl.Recordings(ctx, "", 1000)
			if err != nil {
				return err
			}
			path = id + ".mp4"
			for _, r := range rec.Recordings {
				if r.ID == id {
					path = id + "." + r.Format
				}
			}
		}
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		n, err := cl.DownloadRecording(ctx, id, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return err
		}
		fmt.Fprintf(e.stdout, "%s (%d bytes)\n", path, n)
		return nil
	case "list":
		l, err := cl.Recordings(ctx, *run, *limit)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, l)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tDISPLAY\tSTARTED\tDURATION\tSIZE\tRUN\tFILE")
		for _, r := range l.Recordings {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Status, r.Display, r.StartedAt.Local().Format(time.DateTime),
				time.Duration(r.DurationMs)*time.Millisecond, r.Bytes, r.RunID, r.File)
		}
		return tw.Flush()
	}
	fs.Usage()
	return fmt.Errorf("unknown record command %q: use start, stop, list or get", sub)
}
