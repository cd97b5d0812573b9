-- One row rewritten by DB.Health: a real write, so a database that cannot
-- be written (disk full, read-only, gone) shows in /health before a wait's
-- resolution is lost to it.
CREATE TABLE health_probe (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	at INTEGER NOT NULL
);
