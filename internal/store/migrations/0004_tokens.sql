-- Extra API tokens with scopes (acu token create). The daemon's own token
-- file is not here: it always has every scope. Only a SHA-256 of each token
-- is kept; the token itself is shown once, when it is created.

CREATE TABLE tokens (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	hash       TEXT NOT NULL UNIQUE,
	scopes     TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER
);
