// Package runlog writes and reads the agent loop's run directories:
// runs/run_0001/ with either the flat layout (turn_0001_raw.png,
// turn_0001_annotated.png, ...) or the legacy turn_dirs layout
// (turn_0001/vlm_output.json, screenshot_raw.png, screenshot_annotated.png),
// the append-only turns.jsonl with the seed's two records per turn (stage
// "raw", then "annotated"; written in both layouts), and main.log.
//
// Where it sits: internal/agent writes a turn's files as the turn runs;
// `acu agent replay` reads them back (Load, Print, Handler) for review.
// The database (internal/runs) holds the same turns as events; the directory
// is for offline inspection and does not depend on it.
//
// It does not encode images (the caller passes PNG bytes) or decide what a
// turn holds.
package runlog
