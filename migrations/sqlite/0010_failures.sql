-- Failures are data: a workload that did not build, crashed, ran past its limit, counted wrong or
-- could not set up under a toolchain is stored with the run, summarised per version, and may be
-- a regression's reason as a slope is.

-- One row per failed workload of a run. The sizes it measured before failing are in
-- `measurements`; it has no row in `fits`, so version summaries never take partial slopes in.
CREATE TABLE failures (
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
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
    run_id      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    size        BIGINT,
    detail      TEXT NOT NULL,
    facts       TEXT NOT NULL,
    first_seen  TEXT NOT NULL,
    last_run_at TEXT NOT NULL,
    PRIMARY KEY (workload_id, lineage, version)
);
CREATE INDEX version_failures_by_lineage ON version_failures (lineage);

-- A regression's workload is there for its slope or for a failure; one workload may be in one
-- regression for both. A failure has no slope at the bad version. SQLite changes a primary key
-- and NOT NULL columns by rebuilding the table.
CREATE TABLE regression_workloads_new (
    regression_id  BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    workload_id    BIGINT NOT NULL REFERENCES workloads (id),
    reason         TEXT NOT NULL DEFAULT 'slope' CHECK (reason IN ('slope', 'failure')),
    slope          REAL,
    ci_low         REAL,
    ci_high        REAL,
    r2             REAL,
    previous_slope REAL,
    time_ratio     REAL,
    ratio_size     BIGINT,
    joined_at      TEXT NOT NULL,
    joined_late    INTEGER NOT NULL,
    fixed_version  TEXT,
    fixed_slope    REAL,
    fixed_ci_low   REAL,
    fixed_ci_high  REAL,
    -- Time at the fix over time at the bad version, at their largest common size.
    fixed_ratio    REAL,
    failure_kind   TEXT,
    failure_size   BIGINT,
    failure_detail TEXT,
    failure_facts  TEXT,
    PRIMARY KEY (regression_id, workload_id, reason)
);
INSERT INTO regression_workloads_new (regression_id, workload_id, reason, slope, ci_low, ci_high, r2,
    previous_slope, time_ratio, ratio_size, joined_at, joined_late, fixed_version, fixed_slope,
    fixed_ci_low, fixed_ci_high, fixed_ratio)
SELECT regression_id, workload_id, 'slope', slope, ci_low, ci_high, r2, previous_slope, time_ratio,
    ratio_size, joined_at, joined_late, fixed_version, fixed_slope, fixed_ci_low, fixed_ci_high, fixed_ratio
FROM regression_workloads;
DROP TABLE regression_workloads;
ALTER TABLE regression_workloads_new RENAME TO regression_workloads;
CREATE INDEX regression_workloads_by_workload ON regression_workloads (workload_id);
