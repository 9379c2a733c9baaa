-- Tokens of scope `bisect`, given to the agents that bisect: they record bisections and submit
-- the runs a bisection measures. Bisections get a content key, which names what the search found,
-- ids and timings aside: a regression holds one bisection per key, so the same search sent again
-- under a new id is the same bisection. Bisections stored before this migration have none (NULL,
-- which the unique index lets repeat): they are still found by id.
ALTER TABLE tokens DROP CONSTRAINT tokens_scope_check;
ALTER TABLE tokens ADD CONSTRAINT tokens_scope_check CHECK (scope IN ('ingest', 'bisect', 'editor', 'admin'));

ALTER TABLE bisections ADD COLUMN content_key TEXT;
CREATE UNIQUE INDEX bisections_by_content ON bisections (regression_id, content_key);
