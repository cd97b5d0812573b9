package record

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/acu-dev/acu/internal/runs"
)

// diskUsed is the bytes the recordings directory's files hold.
func (r *Recorder) diskUsed() int64 {
	entries, err := os.ReadDir(r.opts.Dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// Adopt takes a recording run whose process stopped (killed, crashed),
// offered by the run registry's Recover at start-up and by its sweeps: in
// the background it makes the file playable up to its last second (an MP4
// already is: see ffmpegArgs; a WebM is remuxed to get its index back),
// reads the file's duration and size, and ends the run with status error,
// Stopped StopLost and, when nothing playable is left, Incomplete. It
// reports whether run is a recording (the registry ends others itself).
func (r *Recorder) Adopt(run runs.Run) bool {
	if run.Kind != RunKind {
		return false
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		res := r.recover(ctx, run)
		msg := "the recording's process stopped (killed or crashed) before it finished; the file keeps what was written up to its last second"
		if res.Incomplete != "" {
			msg = "the recording's process stopped (killed or crashed) before it finished, and its file cannot be played: " + res.Incomplete
		}
		if _, err := r.opts.Runs.End(ctx, run.ID, runs.StatusError, msg, res); err != nil && !errors.Is(err, runs.ErrEnded) {
			r.log.Warn("end a recovered recording", "run_id", run.ID, "err", err)
			return
		}
		r.log.Info("recovered a recording whose process stopped", "run_id", run.ID, "duration_ms", res.DurationMs,
			"bytes", res.Bytes, "incomplete", res.Incomplete)
	}()
	return true
}

// recover makes a stopped process's recording file as playable as it can
// and describes it.
func (r *Recorder) recover(ctx context.Context, run runs.Run) result {
	sp, _ := runSpec(run)
	res := result{File: sp.file(), Stopped: StopLost, VideoStart: r.videoStart(ctx, run)}
	path := r.path(sp)
	_ = os.Chmod(path, 0o600)
	if sp.file() == "" {
		res.Incomplete = "the recording names no file"
		return res
	}
	if why := unplayable(path, sp.Format); why != "" {
		res.Incomplete = why
		if fi, err := os.Stat(path); err == nil {
			res.Bytes = fi.Size()
		}
		return res
	}
	if sp.Format == WebM {
		// A killed WebM has no index and no duration (players cannot seek
		// it): a copy of its streams gets both.
		if err := r.remux(ctx, path, sp.Format); err != nil {
			r.log.Warn("remux a recovered recording", "run_id", run.ID, "err", err)
		}
	}
	if fi, err := os.Stat(path); err == nil {
		res.Bytes = fi.Size()
	}
	p, err := r.probe(ctx, path)
	if err != nil || p.duration <= 0 {
		res.Incomplete = "ffmpeg finds no video in it"
		if err != nil {
			res.Incomplete += ": " + err.Error()
		}
		return res
	}
	res.DurationMs, res.Width, res.Height = p.duration.Milliseconds(), p.w, p.h
	return res
}

// videoStart is the time of a recording's first frame, from the event its
// process wrote when it wrote that frame; the run's start without one.
func (r *Recorder) videoStart(ctx context.Context, run runs.Run) time.Time {
	evs, err := r.opts.Runs.Events(ctx, 0, runs.Filter{RunID: run.ID, Streams: []string{Stream}}, 10)
	if err == nil {
		for _, ev := range evs {
			var d struct {
				Phase      string    `json:"phase"`
				VideoStart time.Time `json:"video_start"`
			}
			if json.Unmarshal(ev.Data, &d) == nil && d.Phase == "video_start" && !d.VideoStart.IsZero() {
				return d.VideoStart.UTC()
			}
		}
	}
	return run.StartedAt.UTC()
}

// remux copies path's streams into a new file of the same format (owner
// only) that replaces it.
func (r *Recorder) remux(ctx context.Context, path, format string) error {
	tmp := path + ".remux"
	fh, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	fh.Close()
	cmd := exec.CommandContext(ctx, r.opts.FFmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i", path, "-c", "copy", "-f", format, tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("ffmpeg: %w: %s", err, bytes.TrimSpace(out))
	}
	return os.Rename(tmp, path)
}

// probed is what ffmpeg reads of a file's header.
type probed struct {
	duration time.Duration
	w, h     int
}

var (
	durationRE = regexp.MustCompile(`Duration: (\d+):(\d\d):(\d\d)\.(\d\d)`)
	sizeRE     = regexp.MustCompile(`Video: [^\n]*?, (\d+)x(\d+)`)
)

// probe reads a file's duration and size with ffmpeg (ffprobe is not
// needed: ffmpeg -i prints both, then complains of no output).
func (r *Recorder) probe(ctx context.Context, path string) (probed, error) {
	out, _ := exec.CommandContext(ctx, r.opts.FFmpeg, "-hide_banner", "-nostdin", "-i", path).CombinedOutput()
	var p probed
	m := durationRE.FindSubmatch(out)
	if m == nil {
		return p, fmt.Errorf("no duration: %s", lastLine(out))
	}
	hh, _ := strconv.Atoi(string(m[1]))
	mm, _ := strconv.Atoi(string(m[2]))
	ss, _ := strconv.Atoi(string(m[3]))
	cs, _ := strconv.Atoi(string(m[4]))
	p.duration = time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute + time.Duration(ss)*time.Second + time.Duration(cs)*10*time.Millisecond
	if m := sizeRE.FindSubmatch(out); m != nil {
		p.w, _ = strconv.Atoi(string(m[1]))
		p.h, _ = strconv.Atoi(string(m[2]))
	}
	return p, nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// unplayable says why the file at path cannot be played, or "" when its
// structure holds a video: an MP4 needs its movie header (moov) and at
// least one fragment or media box with data; a WebM its EBML header and a
// cluster. It reads box and element headers only, not the frames.
func unplayable(path, format string) string {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "the file is gone"
		}
		return "the file cannot be read"
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "the file cannot be read"
	}
	if fi.Size() == 0 {
		return "the file is empty: no frame was written"
	}
	if format == WebM {
		return webmUnplayable(f)
	}
	return mp4Unplayable(f, fi.Size())
}

// mp4Unplayable walks an MP4's top-level boxes.
func mp4Unplayable(f io.ReaderAt, size int64) string {
	var moov, media bool
	var hdr [16]byte
	for off := int64(0); off+8 <= size; {
		if _, err := f.ReadAt(hdr[:8], off); err != nil {
			break
		}
		n := int64(binary.BigEndian.Uint32(hdr[:4]))
		typ := string(hdr[4:8])
		head := int64(8)
		switch n {
		case 0: // to the end of the file
			n = size - off
		case 1:
			if _, err := f.ReadAt(hdr[8:16], off+8); err != nil {
				return "the file ends inside a box header"
			}
			n, head = int64(binary.BigEndian.Uint64(hdr[8:16])), 16
		}
		if n < head {
			return fmt.Sprintf("a box (%q) has a bad size at byte %d", typ, off)
		}
		switch typ {
		case "moov":
			moov = off+n <= size
		case "moof":
			media = media || off+n <= size
		case "mdat":
			media = media || (n > head && off+head < size)
		}
		off += n
	}
	switch {
	case !moov:
		return fmt.Sprintf("it has no movie header (moov): its process stopped before writing one (%d bytes)", size)
	case !media:
		return "it holds no frame"
	}
	return ""
}

// webmUnplayable checks a WebM's EBML header and looks for a cluster in
// its first 16 MiB.
func webmUnplayable(f io.ReaderAt) string {
	buf := make([]byte, 16<<20)
	n, _ := f.ReadAt(buf, 0)
	buf = buf[:n]
	if !bytes.HasPrefix(buf, []byte{0x1a, 0x45, 0xdf, 0xa3}) {
		return "it has no WebM header"
	}
	if !bytes.Contains(buf, []byte{0x1f, 0x43, 0xb6, 0x75}) {
		return "it holds no frame (no cluster)"
	}
	return ""
}

// keepPrivate makes the recordings directory and the files in it owner
// only (earlier versions wrote them 0644).
func (r *Recorder) keepPrivate() {
	entries, err := os.ReadDir(r.opts.Dir)
	if err != nil {
		return
	}
	_ = os.Chmod(r.opts.Dir, 0o700)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
			_ = os.Chmod(r.path(spec{File: e.Name()}), 0o600)
		}
	}
}
