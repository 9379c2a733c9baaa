-- A run's raw samples move into their measurement's row, one JSON array per size, and each fit
-- keeps its per-size medians: storing a run writes 132 rows instead of 732, and a version's
-- summary reads its latest runs' fits alone instead of every size of every one of them.

-- The samples in the order they were taken, and their instruction counts when the agent sent
-- them; both NULL once retention has pruned the run.
ALTER TABLE measurements ADD COLUMN samples_ns TEXT, ADD COLUMN instructions TEXT;
UPDATE measurements m SET samples_ns = s.samples_ns, instructions = s.instructions
FROM (SELECT run_id, workload_id, size,
             json_agg(ns ORDER BY rep)::text AS samples_ns,
             CASE WHEN count(instructions) = count(*) THEN json_agg(instructions ORDER BY rep)::text END AS instructions
      FROM samples GROUP BY run_id, workload_id, size) s
WHERE m.run_id = s.run_id AND m.workload_id = s.workload_id AND m.size = s.size;
DROP TABLE samples;

-- [[size, median_ns], …] by size: the same numbers as the run's measurements.
ALTER TABLE fits ADD COLUMN medians TEXT NOT NULL DEFAULT '[]';
UPDATE fits f SET medians = m.medians
FROM (SELECT run_id, workload_id, json_agg(json_build_array(size, median_ns) ORDER BY size)::text AS medians
      FROM measurements GROUP BY run_id, workload_id) m
WHERE f.run_id = m.run_id AND f.workload_id = m.workload_id;
