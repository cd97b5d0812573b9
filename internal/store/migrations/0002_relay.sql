-- The relay's analysis results (internal/relay), kept so /agent/last,
-- /agent/history and /agent/digest survive a restart. id is the relay's
-- result id; entry and digest are the JSON bodies the relay serves.

CREATE TABLE relay_results (
	id     INTEGER PRIMARY KEY,
	at     INTEGER NOT NULL,
	entry  TEXT NOT NULL,
	digest TEXT
);
