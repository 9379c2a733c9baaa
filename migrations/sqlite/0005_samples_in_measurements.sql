-- A run's raw samples move into their measurement's row, one JSON array per size, and each fit
-- keeps its per-size medians: storing a run writes 132 rows instead of 732, and a version's
-- summary reads its latest runs' fits alone instead of every size of every one of them.
-- Numbers are written with 17 significant digits, which read back to the same doubles.

-- The samples in the order they were taken, and their instruction counts when the agent sent
-- them; both NULL once retention has pruned the run.
ALTER TABLE measurements ADD COLUMN samples_ns TEXT;
ALTER TABLE measurements ADD COLUMN instructions TEXT;
UPDATE measurements SET
    samples_ns = (
        SELECT '[' || group_concat(printf('%!.17g', s.ns), ',' ORDER BY s.rep) || ']' FROM samples s
        WHERE s.run_id = measurements.run_id AND s.workload_id = measurements.workload_id
          AND s.size = measurements.size),
    instructions = (
        SELECT CASE WHEN count(*) > 0 AND count(s.instructions) = count(*)
                    THEN '[' || group_concat(s.instructions, ',' ORDER BY s.rep) || ']' END
        FROM samples s
        WHERE s.run_id = measurements.run_id AND s.workload_id = measurements.workload_id
          AND s.size = measurements.size);
DROP TABLE samples;

-- [[size, median_ns], …] by size: the same numbers as the run's measurements.
ALTER TABLE fits ADD COLUMN medians TEXT NOT NULL DEFAULT '[]';
UPDATE fits SET medians = COALESCE((
    SELECT '[' || group_concat('[' || m.size || ',' || printf('%!.17g', m.median_ns) || ']', ',' ORDER BY m.size) || ']'
    FROM measurements m WHERE m.run_id = fits.run_id AND m.workload_id = fits.workload_id), '[]');
