-- What a series measures is part of its workload's identity: wall time, CPU time, or
-- instructions counted by perf or by Valgrind (`Metric` in the wire format). A workload measured
-- two ways is two rows, so its fits, medians, version summaries, failures, contracts and
-- regression memberships, all keyed by the workload's id, never mix times with counts or one
-- counter with the other. Everything stored before measured wall time.
--
-- SQLite drops the old UNIQUE (name) by rebuilding the table under its ids. Other tables refer
-- to it, and with foreign keys on, dropping it counts their rows as orphaned; the checks are
-- deferred to the commit, and the rows put back under the same ids settle them, so the
-- migration keeps every reference without turning foreign keys off.
PRAGMA defer_foreign_keys = ON;
CREATE TEMP TABLE workloads_before AS SELECT id, name, size_unit, first_seen, size_of_interest FROM workloads;
DROP TABLE workloads;
CREATE TABLE workloads (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    name             TEXT NOT NULL,
    size_unit        TEXT NOT NULL,
    first_seen       TEXT NOT NULL,
    size_of_interest BIGINT,
    metric           TEXT NOT NULL DEFAULT 'wall'
        CHECK (metric IN ('wall', 'cpu', 'instructions-perf', 'instructions-valgrind')),
    UNIQUE (name, metric)
);
INSERT INTO workloads (id, name, size_unit, first_seen, size_of_interest)
SELECT id, name, size_unit, first_seen, size_of_interest FROM workloads_before;
DROP TABLE workloads_before;

-- The metric each run declared, the same as its workloads'. A run of a count metric keeps its
-- medians (`measurements.median_ns`, `fits.medians`, `version_summaries.sizes`) in instructions.
ALTER TABLE runs ADD COLUMN metric TEXT NOT NULL DEFAULT 'wall'
    CHECK (metric IN ('wall', 'cpu', 'instructions-perf', 'instructions-valgrind'));
