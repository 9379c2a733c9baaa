-- Samples and per-size medians are written only by the run's ingest transaction, with the run id
-- it has just inserted and workload ids it has just looked up, and runs are never deleted, so the
-- per-row foreign key checks are dropped (SQLite drops a constraint by rebuilding the table).
CREATE TABLE measurements_new (
    run_id      BLOB NOT NULL,
    workload_id BIGINT NOT NULL,
    size        BIGINT NOT NULL,
    median_ns   REAL NOT NULL,
    samples     INTEGER NOT NULL,
    PRIMARY KEY (run_id, workload_id, size)
);
INSERT INTO measurements_new SELECT run_id, workload_id, size, median_ns, samples FROM measurements;
DROP TABLE measurements;
ALTER TABLE measurements_new RENAME TO measurements;

CREATE TABLE samples_new (
    run_id       BLOB NOT NULL,
    workload_id  BIGINT NOT NULL,
    size         BIGINT NOT NULL,
    rep          INTEGER NOT NULL,
    ns           REAL NOT NULL,
    instructions BIGINT
);
INSERT INTO samples_new SELECT run_id, workload_id, size, rep, ns, instructions FROM samples;
DROP TABLE samples;
ALTER TABLE samples_new RENAME TO samples;
CREATE INDEX samples_by_run ON samples (run_id, workload_id);

-- A version's summary takes its medians over the version's latest runs (by arrival), found through
-- this index, and counts every run and host incrementally: ingest cost stays flat as a version
-- collects runs.
CREATE INDEX runs_by_toolchain_received ON runs (toolchain_id, received_at DESC);
DROP INDEX runs_by_toolchain;
ALTER TABLE version_summaries ADD COLUMN host_ids TEXT NOT NULL DEFAULT '[]';
UPDATE version_summaries SET host_ids = COALESCE((
    SELECT json_group_array(host_id) FROM (
        SELECT DISTINCT r.host_id AS host_id
        FROM fits f JOIN runs r ON r.id = f.run_id JOIN toolchains t ON t.id = r.toolchain_id
        WHERE t.name = version_summaries.lineage AND t.version = version_summaries.version
          AND f.workload_id = version_summaries.workload_id
        ORDER BY r.host_id)), '[]');
