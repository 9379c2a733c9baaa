-- Runs whose version summaries (and alert rules) have not taken them in yet. A run's ingest
-- transaction adds its row; the summary pass that takes it in deletes the row in its own
-- transaction, so a run is counted once even when the server dies between the two. One pass takes
-- in every run stored meanwhile, so concurrent runs of a version share one summary update.
CREATE TABLE pending_summaries (
    run_id  BLOB PRIMARY KEY REFERENCES runs (id),
    lineage TEXT NOT NULL,
    version TEXT NOT NULL
);
CREATE INDEX pending_summaries_by_version ON pending_summaries (lineage, version);
