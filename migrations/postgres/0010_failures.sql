-- Failures are data: a workload that did not build, crashed, ran past its limit, counted wrong or
-- could not set up under a toolchain is stored with the run, summarised per version, and may be
-- a regression's reason as a slope is.

-- One row per failed workload of a run. The sizes it measured before failing are in
-- `measurements`; it has no row in `fits`, so version summaries never take partial slopes in.
CREATE TABLE failures (
    run_id      UUID NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    workload_id BIGINT NOT NULL REFERENCES workloads (id),
    source_hash TEXT NOT NULL,
    kind        TEXT NOT NULL,
    size        BIGINT,
    detail      TEXT NOT NULL,
    -- What the kind adds (exit_status, signal, limit_ms, got, expected), a JSON object.
    facts       TEXT NOT NULL,
    metadata    TEXT NOT NULL,
    PRIMARY KEY (run_id, workload_id)
);
CREATE INDEX failures_by_workload ON failures (workload_id);

-- Per (workload, lineage, version), the runs that failed it, kept current by summary passes
-- beside `version_summaries` (which counts the runs that passed), with the latest failure.
CREATE TABLE version_failures (
    workload_id BIGINT NOT NULL REFERENCES workloads (id),
    lineage     TEXT NOT NULL,
    version     TEXT NOT NULL,
    runs        INTEGER NOT NULL,
    -- The hosts it failed on, a sorted JSON array of ids.
    host_ids    TEXT NOT NULL,
    run_id      UUID NOT NULL,
    kind        TEXT NOT NULL,
    size        BIGINT,
    detail      TEXT NOT NULL,
    facts       TEXT NOT NULL,
    first_seen  TIMESTAMPTZ NOT NULL,
    last_run_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workload_id, lineage, version)
);
CREATE INDEX version_failures_by_lineage ON version_failures (lineage);

-- A regression's workload is there for its slope or for a failure; one workload may be in one
-- regression for both. A failure has no slope at the bad version.
ALTER TABLE regression_workloads ADD COLUMN reason TEXT NOT NULL DEFAULT 'slope'
    CHECK (reason IN ('slope', 'failure'));
ALTER TABLE regression_workloads ADD COLUMN failure_kind TEXT;
ALTER TABLE regression_workloads ADD COLUMN failure_size BIGINT;
ALTER TABLE regression_workloads ADD COLUMN failure_detail TEXT;
ALTER TABLE regression_workloads ADD COLUMN failure_facts TEXT;
ALTER TABLE regression_workloads ALTER COLUMN slope DROP NOT NULL;
ALTER TABLE regression_workloads ALTER COLUMN ci_low DROP NOT NULL;
ALTER TABLE regression_workloads ALTER COLUMN ci_high DROP NOT NULL;
ALTER TABLE regression_workloads ALTER COLUMN r2 DROP NOT NULL;
ALTER TABLE regression_workloads DROP CONSTRAINT regression_workloads_pkey;
ALTER TABLE regression_workloads ADD PRIMARY KEY (regression_id, workload_id, reason);
