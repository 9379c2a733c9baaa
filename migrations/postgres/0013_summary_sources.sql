-- The workload's source hash at each version summary: that of the version's latest run, and how
-- many distinct sources its window of runs was measured on, so the series page can say where a
-- workload's source changed and a regression whether its versions were measured on one source.
-- Summaries stored before take their latest run's hash here; the next pass over the version
-- counts its window.
ALTER TABLE version_summaries ADD COLUMN source_hash TEXT;
ALTER TABLE version_summaries ADD COLUMN source_count INTEGER NOT NULL DEFAULT 1;
UPDATE version_summaries SET source_hash = (
    SELECT f.source_hash FROM fits f
    JOIN runs r ON r.id = f.run_id
    JOIN toolchains t ON t.id = r.toolchain_id
    WHERE f.workload_id = version_summaries.workload_id
      AND t.name = version_summaries.lineage AND t.version = version_summaries.version
    ORDER BY r.received_at DESC, r.id DESC
    LIMIT 1
);
