-- What ran, and what it cost. A run's fit keeps the content hash of the code the workload ran (its
-- binary's loaded sections and the shared libraries it loaded; NULL where the agent could not tell
-- or predates it), and a version summary the one build its window of runs ran, NULL when they ran
-- several or one is unknown: a version whose build equals the previous version's did not change,
-- and the alert rules open nothing for it. A regression's workload may now be there for its cost:
-- a count that rose by the cost factor at the largest size two versions share. SQLite changes a
-- CHECK constraint by rebuilding the table.
ALTER TABLE fits ADD COLUMN build_hash TEXT;
ALTER TABLE version_summaries ADD COLUMN build_hash TEXT;
CREATE TABLE regression_workloads_new (
    regression_id  BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    workload_id    BIGINT NOT NULL REFERENCES workloads (id),
    reason         TEXT NOT NULL DEFAULT 'slope' CHECK (reason IN ('slope', 'failure', 'cost')),
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
    fixed_ratio    REAL,
    failure_kind   TEXT,
    failure_size   BIGINT,
    failure_detail TEXT,
    failure_facts  TEXT,
    PRIMARY KEY (regression_id, workload_id, reason)
);
INSERT INTO regression_workloads_new SELECT regression_id, workload_id, reason, slope, ci_low, ci_high, r2,
    previous_slope, time_ratio, ratio_size, joined_at, joined_late, fixed_version, fixed_slope, fixed_ci_low,
    fixed_ci_high, fixed_ratio, failure_kind, failure_size, failure_detail, failure_facts
FROM regression_workloads;
DROP TABLE regression_workloads;
ALTER TABLE regression_workloads_new RENAME TO regression_workloads;
CREATE INDEX regression_workloads_by_workload ON regression_workloads (workload_id);
