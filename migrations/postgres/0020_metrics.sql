-- What a series measures is part of its workload's identity: wall time, CPU time, or
-- instructions counted by perf or by Valgrind (`Metric` in the wire format). A workload measured
-- two ways is two rows, so its fits, medians, version summaries, failures, contracts and
-- regression memberships, all keyed by the workload's id, never mix times with counts or one
-- counter with the other. Everything stored before measured wall time.
ALTER TABLE workloads ADD COLUMN metric TEXT NOT NULL DEFAULT 'wall'
    CHECK (metric IN ('wall', 'cpu', 'instructions-perf', 'instructions-valgrind'));
ALTER TABLE workloads DROP CONSTRAINT workloads_name_key;
ALTER TABLE workloads ADD CONSTRAINT workloads_name_metric_key UNIQUE (name, metric);

-- The metric each run declared, the same as its workloads'. A run of a count metric keeps its
-- medians (`measurements.median_ns`, `fits.medians`, `version_summaries.sizes`) in instructions.
ALTER TABLE runs ADD COLUMN metric TEXT NOT NULL DEFAULT 'wall'
    CHECK (metric IN ('wall', 'cpu', 'instructions-perf', 'instructions-valgrind'));
