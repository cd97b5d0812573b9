// Package agent is acu's desktop agent loop, the stateless vision loop of
// the seed 002 on X11: one turn is one model reply, one execution, one
// screenshot, one annotation, one model call.
//
// A turn: Parse the model's JSON (observation, bboxes, actions; strict, else
// the first {...} block, else the whole text as the observation), execute the
// actions through internal/input within the working area (CAPTURE_CROP) with
// ACTION_DELAY between them, wait CAPTURE_DELAY, capture the screen through
// internal/capture and crop it to exactly the pixels input maps into, resize
// it (CAPTURE_WIDTH/HEIGHT or CAPTURE_SCALE_PERCENT), burn the overlays in
// with internal/annotate (or, with annotator=panel, wait in
// waiting_annotated for the browser panel to POST /annotated with the
// matching seq), save the turn with internal/runlog, emit it as a "turn"
// event of the session's run (internal/runs), then send the system prompt,
// the observation and the annotated PNG to the model. A model error (a hang
// past VLM_HTTP_TIMEOUT_SECONDS, a 500 after retries) does not end the
// session: the error shows in /state and POST /inject continues it.
//
// Each session (from BOOT or an /inject until a stop or a turn/cost limit)
// is a run of kind "agent". The HTTP surface (Handler) is the seed's: GET /
// (the panel), /config, /state, POST /inject, /annotated, plus POST /control
// (pause, resume, step, stop), behind internal/guard.Guard and the daemon's
// token; the panel page swaps the code of a one-time login link for a
// session it sends as a header (no cookie), and never holds the token.
//
// It does not own the X connection's lifetime when given one, read
// configuration (cmd/acu builds Options), or pick the model backend
// (Options.Model is any internal/llm Chatter).
package agent
