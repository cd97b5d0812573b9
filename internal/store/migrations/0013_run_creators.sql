-- Who started each run: the id of the token (or "token-file", "session")
-- whose request created it. Cancelling or changing a run needs that token
-- or the act scope. '' for runs written before creators were recorded and
-- for runs no request started.
ALTER TABLE runs ADD COLUMN creator TEXT NOT NULL DEFAULT '';
