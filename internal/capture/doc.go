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
// exclusions are blacked out before a frame is published.
//
// The segment is kept as the screen's image between captures. XDamage's
// rectangles mark bands of frame.HashBand rows as dirty (dirty.go); a
// capture then reads only the dirty rows into the segment, rehashes only
// their bands and folds them with the kept hashes of the others into the
// frame's hash (frame.HashBands, FoldBands): a changed clock or progress bar
// costs a few rows, not the screen. Every verifyEvery-th such capture
// reads the whole screen instead and checks that damage missed nothing; a
// server whose damage is caught missing a change is read whole from then
// on. Whole reads are also used for the first capture on a connection,
// with privacy exclusions, without XDamage or MIT-SHM, and with NoCache.
//
// A new frame needs a buffer of its own. A display read in quick
// succession (a live view, a recording) reuses the buffer of an earlier
// frame that nothing reads any more (pixpool.go), and copies into it only
// the bands read since the generation of the segment it holds; otherwise
// the frame gets a new copy. A buffer is free at once when every holder of
// its frame has released it (frame.Frame.Release: the hub while the frame
// is current, each caller Capture returned it to), or else when the
// collector finds it unreferenced. After a read that found the screen
// unchanged, the read is hashed in place and nothing is copied. Buffers
// lends the same recycling to the Wayland hubs (internal/wayland/frames,
// internal/wayland/mutterframes), whose frames come from elsewhere.
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
