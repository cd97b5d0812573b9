// Package capture turns targets into frames. A Hub owns one connection per
// display (through internal/display) and captures each display at most once
// per moment: concurrent callers join the capture in flight, and a full frame
// is reused for as long as XDamage reports no change since it was taken, so a
// static screen watched by a thousand jobs is captured once. Window and crop
// targets are Sub views of the shared full frame; a window's geometry is
// looked up at capture time, so the view follows the window when it moves.
//
// Pixels come through MIT-SHM (one SysV segment per connection, removed with
// IPC_RMID right after the server attached it) or, where SHM is missing or
// fails (a remote X server), plain GetImage. Windows matching the privacy
// exclusions are blacked out before a frame is published. A display read
// in quick succession (a live view, a recording) has each read hashed and
// copied out of the segment in one pass (frame.HashCopy) into the buffer of
// an earlier frame that nothing references any more (pixpool.go); after a
// read that found the screen unchanged, and for a display read now and
// then, the read is hashed in place and copied only if it changed.
//
// Watch delivers XDamage change notifications filtered by the target's
// rectangle. A display whose X server dies is reconnected with bounded
// backoff on the next Capture, or at once while someone watches it.
//
// Once is the one-shot path for a process that takes a single screenshot
// and exits: the same frame as a Hub's Capture, read over a bare
// display.ImageConn without damage tracking, shared memory or goroutines.
//
// It does not resize or encode frames (internal/frame), send input
// (internal/input) or decide when to capture (the wait engine does).
package capture
