// Package record records displays into video files with Debian's ffmpeg:
// frames come from the capture hub (Watch + Capture: a frame is written
// only when XDamage reports a change and its content hash differs), are
// piped to ffmpeg as raw pixels, and ffmpeg stamps each with the time it
// arrived (-use_wallclock_as_timestamps), so the file has a variable frame
// rate: an idle screen adds almost nothing and plays back at true speed.
// Files survive a kill of the daemon or of ffmpeg (fragmented MP4, a frame
// at least every second, no B-frames: see ffmpegArgs); Adopt recovers the
// recording of a process that died, and a file that cannot play is
// ErrIncomplete, never served. Max, MaxDuration and DiskBudget bound how
// many run, how long and how much disk they take.
// Each recording is a run of kind "recording" (its spec names the display,
// the file and the run it belongs to; its result the file's size and
// duration). With Options.Auto the recorder starts a recording for every
// run of those kinds (agent sessions, tasks, action sessions) and stops it
// when the run ends, linking the file to the run with a "recording" event.
//
// It sits among the features, beside live and smartwait; the server serves
// its routes, cmd/acu its CLI. It does not decode or play files: the run
// timeline page does, in the browser.
package record
