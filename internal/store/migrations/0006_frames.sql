-- The frames wait judgements saw, for the run timeline: one row per
-- distinct screen content (frames, by content hash), and which runs saw
-- which (run_frames). A wait on a static screen stores one frame.
-- Retention deletes a run's rows with its progress events and then the
-- frames no run refers to.

CREATE TABLE frames (
	hash       TEXT PRIMARY KEY,
	jpeg       BLOB NOT NULL,
	width      INTEGER NOT NULL,
	height     INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);

CREATE TABLE run_frames (
	run_id TEXT NOT NULL REFERENCES runs(id),
	hash   TEXT NOT NULL REFERENCES frames(hash),
	at     INTEGER NOT NULL,
	PRIMARY KEY (run_id, hash)
);
