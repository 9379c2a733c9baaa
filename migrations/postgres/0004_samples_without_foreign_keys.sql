-- Samples and per-size medians are written only by the run's ingest transaction, with the run id
-- it has just inserted and workload ids it has just looked up, and runs are never deleted. The
-- per-row foreign key checks added nothing but cost: they made the samples insert four times
-- slower than the rows themselves (600 rows a run, two checks each).
ALTER TABLE samples DROP CONSTRAINT samples_run_id_fkey, DROP CONSTRAINT samples_workload_id_fkey;
ALTER TABLE measurements DROP CONSTRAINT measurements_run_id_fkey, DROP CONSTRAINT measurements_workload_id_fkey;

-- A version's summary takes its medians over the version's latest runs (by arrival), found through
-- this index, and counts every run and host incrementally: ingest cost stays flat as a version
-- collects runs.
CREATE INDEX runs_by_toolchain_received ON runs (toolchain_id, received_at DESC);
DROP INDEX runs_by_toolchain;
ALTER TABLE version_summaries ADD COLUMN host_ids TEXT NOT NULL DEFAULT '[]';
UPDATE version_summaries vs SET host_ids = COALESCE((
    SELECT json_agg(DISTINCT r.host_id ORDER BY r.host_id)::text
    FROM fits f JOIN runs r ON r.id = f.run_id JOIN toolchains t ON t.id = r.toolchain_id
    WHERE t.name = vs.lineage AND t.version = vs.version AND f.workload_id = vs.workload_id), '[]');
