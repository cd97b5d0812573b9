package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/acu-dev/acu/internal/capture"
	"github.com/acu-dev/acu/internal/frame"
	"github.com/acu-dev/acu/internal/runs"
)

// record writes frames to ffmpeg until ctx ends, then finishes the file
// and ends the recording's run.
func (r *Recorder) record(ctx context.Context, rec *recording, first *frame.Frame) {
	defer close(rec.done)
	defer func() {
		r.mu.Lock()
		delete(r.live, rec.id)
		r.mu.Unlock()
	}()
	res, err := r.encode(ctx, rec, first)
	status, msg := runs.StatusCompleted, ""
	if err != nil {
		status, msg = runs.StatusError, err.Error()
		r.log.Warn("recording failed", "run_id", rec.id, "err", err)
	}
	if fi, serr := os.Stat(rec.path); serr == nil {
		res.Bytes = fi.Size()
	}
	res.File = rec.spec.file()
	if res.Stopped == "" {
		res.Stopped = rec.stopReason()
	}
	if err != nil {
		// ffmpeg died, or a frame could not be captured: the file keeps
		// what was written (see ffmpegArgs), and says how long that is.
		pctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		why := unplayable(rec.path, rec.spec.Format)
		if why == "" && rec.spec.Format == WebM {
			if rerr := r.remux(pctx, rec.path, WebM); rerr != nil {
				r.log.Warn("remux a recording whose ffmpeg failed", "run_id", rec.id, "err", rerr)
			}
		}
		if why != "" {
			res.Incomplete = why
		} else if p, perr := r.probe(pctx, rec.path); perr == nil && p.duration > 0 {
			res.DurationMs = p.duration.Milliseconds()
		} else {
			res.Incomplete = "ffmpeg finds no video in it"
		}
		cancel()
	}
	rec.res, rec.err = res, err
	ectx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.opts.Runs.End(ectx, rec.id, status, msg, res); err != nil {
		r.log.Warn("end recording run", "run_id", rec.id, "err", err)
	}
	r.log.Info("recording stopped", "run_id", rec.id, "frames", res.Frames, "bytes", res.Bytes, "duration_ms", res.DurationMs)
}

// encode pipes frames into ffmpeg; see the package comment.
func (r *Recorder) encode(ctx context.Context, rec *recording, f *frame.Frame) (result, error) {
	res := result{Width: f.W &^ 1, Height: f.H &^ 1} // ffmpeg crops to even sizes
	// e.last is the frame written last, held (to be written again while
	// the screen is still, and at the stop) until a newer one is; released
	// at the end, so the capture hub reuses its buffer for the next change.
	e := &encoding{r: r, rec: rec, last: f, res: &res}
	defer func() { e.last.Release() }()
	changes, err := r.opts.Capture.Watch(ctx, rec.spec.Display, capture.Target{Kind: capture.Screen})
	if err != nil {
		return res, fmt.Errorf("record %s: %w", rec.spec.Display, err)
	}
	if e.ff, err = startFFmpeg(r.opts.FFmpeg, rec, f); err != nil {
		return res, err
	}
	defer e.ff.kill()
	if err := e.ff.write(f); err != nil {
		return res, e.ff.failed(err)
	}
	// A frame is far larger than the pipe's buffer, so the write returns
	// when ffmpeg has read it, which is when ffmpeg stamped it: the file's
	// time 0. (ffmpeg takes a moment to start; the run began before.)
	start := time.Now()
	e.lastAt, e.wroteAt = start, start
	res.VideoStart = start.UTC()
	res.Frames++
	// Kept on the recording's run at once: a recording whose process dies
	// is recovered with it, and the timeline still seeks its events.
	r.link(ctx, rec.id, map[string]any{"phase": "video_start", "video_start": res.VideoStart})
	loopErr := e.loop(ctx, changes)
	// The last frame once more, stamped now: the file lasts until the stop,
	// not until the last change.
	if loopErr == nil {
		if err := e.ff.write(e.last); err != nil {
			loopErr = e.ff.failed(err)
		}
	}
	res.DurationMs = time.Since(start).Milliseconds()
	res.Stopped = rec.stopReason()
	if err := e.ff.finish(); err != nil && (loopErr == nil || !e.ff.waited) { // a stuck ffmpeg is the error
		loopErr = err
	}
	return res, loopErr
}

// encoding is one recording's frames on their way to ffmpeg.
type encoding struct {
	r               *Recorder
	rec             *recording
	ff              *ffmpegPipe
	last            *frame.Frame // the frame written last
	lastAt, wroteAt time.Time    // when last was captured, when a frame was last written
	res             *result
}

// loop writes a frame for each change of the screen (at most MaxFPS a
// second) and the last one again every Heartbeat of a still screen, until
// ctx ends, the recording's limits stop it, or a write fails.
func (e *encoding) loop(ctx context.Context, changes <-chan struct{}) error {
	r, rec := e.r, e.rec
	beat := time.NewTicker(Heartbeat)
	defer beat.Stop()
	deadline := time.NewTimer(r.opts.MaxDuration)
	defer deadline.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-deadline.C:
			rec.stop(StopMaxDuration)
			r.log.Info("recording reached its longest duration", "run_id", rec.id, "max_duration", r.opts.MaxDuration)
			return nil
		case <-beat.C:
			if used := r.diskUsed(); r.opts.DiskBudget > 0 && used >= r.opts.DiskBudget {
				rec.stop(StopDiskBudget)
				r.log.Warn("recording stopped: the recordings directory reached its disk budget", "run_id", rec.id, "bytes", used, "budget", r.opts.DiskBudget)
				return nil
			}
			// A still screen: the last frame again, stamped now. It closes
			// the file's last fragment (ffmpeg writes a fragment when the
			// next frame comes), so the file on disk plays up to now.
			if time.Since(e.wroteAt) >= Heartbeat*9/10 {
				if err := e.ff.write(e.last); err != nil {
					return e.ff.failed(err)
				}
				e.wroteAt = time.Now()
			}
		case _, ok := <-changes:
			if !ok {
				return nil
			}
			if done, err := e.change(ctx); done || err != nil {
				return err
			}
		}
	}
}

// change writes the screen after a change, once MaxFPS allows; done: the
// recording ends (ctx ended, or err).
func (e *encoding) change(ctx context.Context) (done bool, err error) {
	r, rec := e.r, e.rec
	// At most MaxFPS frames a second: changes until then coalesce.
	if wait := time.Until(e.lastAt.Add(time.Second / time.Duration(r.opts.MaxFPS))); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return true, nil
		case <-t.C:
		}
	}
	nf, err := r.opts.Capture.Capture(ctx, rec.spec.Display, capture.Target{Kind: capture.Screen})
	if err != nil {
		if ctx.Err() != nil {
			return true, nil
		}
		return true, fmt.Errorf("record %s: %w", rec.spec.Display, err)
	}
	if nf.Hash == e.last.Hash {
		nf.Release()
		return false, nil
	}
	if err := e.ff.write(nf); err != nil {
		nf.Release()
		return true, e.ff.failed(err)
	}
	e.last.Release()
	e.last, e.lastAt = nf, time.Now()
	e.wroteAt = e.lastAt
	e.res.Frames++
	return false, nil
}

// ffmpegPipe is an ffmpeg process reading raw frames of one size on its
// standard input.
type ffmpegPipe struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	stderr strings.Builder
	w, h   int
	row    []byte
	waited bool
}

// startFFmpeg starts ffmpeg writing rec's file from frames of f's size.
func startFFmpeg(bin string, rec *recording, f *frame.Frame) (*ffmpegPipe, error) {
	p := &ffmpegPipe{w: f.W, h: f.H, row: make([]byte, f.W*4)}
	p.cmd = exec.Command(bin, ffmpegArgs(rec.spec.Format, f.W, f.H, rec.path)...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.Stderr = &limitWriter{w: &p.stderr, n: 8 << 10}
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("record %s: %w", rec.spec.Display, err)
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("record %s: start ffmpeg: %w", rec.spec.Display, err)
	}
	return p, nil
}

// write sends f's pixels.
func (p *ffmpegPipe) write(f *frame.Frame) error {
	if f.W != p.w || f.H != p.h {
		return fmt.Errorf("the screen changed size to %dx%d: a recording keeps one size", f.W, f.H)
	}
	if f.Stride == f.W*4 {
		_, err := p.in.Write(f.Pix[:f.H*f.Stride])
		return err
	}
	for y := range f.H {
		copy(p.row, f.Pix[y*f.Stride:y*f.Stride+f.W*4])
		if _, err := p.in.Write(p.row); err != nil {
			return err
		}
	}
	return nil
}

// failed is a write's error with what ffmpeg said.
func (p *ffmpegPipe) failed(err error) error { return ffmpegError(err, &p.stderr) }

// finish closes ffmpeg's input and waits for it to finish the file, at
// most 2 minutes.
func (p *ffmpegPipe) finish() error {
	_ = p.in.Close()
	werr := make(chan error, 1)
	go func() { werr <- p.cmd.Wait() }()
	select {
	case err := <-werr:
		p.waited = true
		if err != nil {
			return fmt.Errorf("ffmpeg: %w: %s", err, strings.TrimSpace(p.stderr.String()))
		}
		return nil
	case <-time.After(2 * time.Minute):
		return errors.New("ffmpeg did not finish the file within 2 minutes")
	}
}

// kill stops an ffmpeg that was not waited for.
func (p *ffmpegPipe) kill() {
	if !p.waited {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

func ffmpegError(err error, stderr *strings.Builder) error {
	return fmt.Errorf("write a frame to ffmpeg: %w: %s", err, strings.TrimSpace(stderr.String()))
}

// ffmpegArgs: raw BGRX frames on stdin, each stamped with its arrival
// (1 ms time base), encoded at a variable frame rate into a file that
// survives a kill of the daemon or of ffmpeg:
//   - the input is not probed (-probesize 32): ffmpeg would otherwise read
//     5 MB of frames (two of a 1280x720 screen, which an idle screen may
//     take minutes to send) before it opens the output;
//   - no B-frames and no look-ahead (x264 -tune zerolatency, libvpx
//     -lag-in-frames 0): a frame is written as soon as it is encoded, and
//     frames are stored in the order they are shown, so the video track
//     lasts exactly as long as the frames' times say (with B-frames and
//     irregular intervals the track's decode times lagged: 8.6 s of track
//     for 15.3 s of frames);
//   - MP4 is fragmented, each frame its own fragment after an empty moov
//     (written first): a fragment is on disk when the next frame comes,
//     which the heartbeat sends at least every second. WebM writes a
//     cluster a second; a killed WebM is remuxed (to get its index back)
//     when the next daemon recovers it;
//   - -flush_packets 1: what is written reaches the file at once.
func ffmpegArgs(format string, w, h int, out string) []string {
	args := []string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y",
		"-f", "rawvideo", "-pix_fmt", "bgr0", "-video_size", strconv.Itoa(w) + "x" + strconv.Itoa(h),
		"-probesize", "32", "-analyzeduration", "0",
		"-framerate", "1000", "-use_wallclock_as_timestamps", "1", "-i", "pipe:0",
		"-an", "-vf", "crop=trunc(iw/2)*2:trunc(ih/2)*2", "-fps_mode", "vfr",
		// A 1 ms time base: without it ffmpeg guesses a frame rate from the
		// first intervals and gives the file's last frame that long.
		"-r", "1000", "-flush_packets", "1"}
	switch format {
	case WebM:
		args = append(args, "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-lag-in-frames", "0", "-b:v", "2M", "-pix_fmt", "yuv420p",
			"-cluster_time_limit", "1000", "-f", "webm")
	default:
		args = append(args, "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-crf", "28", "-pix_fmt", "yuv420p",
			"-video_track_timescale", "1000", "-movflags", "+frag_every_frame+empty_moov+default_base_moof", "-f", "mp4")
	}
	return append(args, out)
}

// limitWriter keeps the first n bytes written to it.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// Run records runs of the Auto kinds while they last, until ctx ends; then
