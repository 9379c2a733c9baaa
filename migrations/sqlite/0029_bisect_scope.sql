-- Tokens of scope `bisect`, given to the agents that bisect: they record bisections and submit
-- the runs a bisection measures. Bisections get a content key, which names what the search found,
-- ids and timings aside: a regression holds one bisection per key, so the same search sent again
-- under a new id is the same bisection. Bisections stored before this migration have none (NULL,
-- which the unique index lets repeat): they are still found by id.
--
-- SQLite changes a CHECK constraint by rebuilding the table. Foreign keys are on while migrations
-- run, so dropping the old table deletes every session (`sessions.token_id ... ON DELETE
-- CASCADE`): they are kept aside and put back under the same token ids, and so is the highest id
-- ever given, so that a revoked token's id is not given again.
CREATE TEMP TABLE sessions_kept AS SELECT id_hash, token_id, created_at, expires_at FROM sessions;
CREATE TEMP TABLE tokens_sequence AS SELECT seq FROM sqlite_sequence WHERE name = 'tokens';

CREATE TABLE tokens_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL UNIQUE,
    scope        TEXT NOT NULL CHECK (scope IN ('ingest', 'bisect', 'editor', 'admin')),
    -- The first characters of the token, to find its row; the rest is only ever compared hashed.
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    created_at   TEXT NOT NULL,
    last_used_at TEXT
);
INSERT INTO tokens_new (id, name, scope, prefix, hash, created_at, last_used_at)
    SELECT id, name, scope, prefix, hash, created_at, last_used_at FROM tokens;
DROP TABLE tokens;
ALTER TABLE tokens_new RENAME TO tokens;
CREATE INDEX tokens_by_prefix ON tokens (prefix);
DELETE FROM sqlite_sequence WHERE name = 'tokens';
INSERT INTO sqlite_sequence (name, seq) SELECT 'tokens', seq FROM tokens_sequence;

INSERT INTO sessions (id_hash, token_id, created_at, expires_at)
    SELECT id_hash, token_id, created_at, expires_at FROM sessions_kept;
DROP TABLE sessions_kept;
DROP TABLE tokens_sequence;

ALTER TABLE bisections ADD COLUMN content_key TEXT;
CREATE UNIQUE INDEX bisections_by_content ON bisections (regression_id, content_key);
