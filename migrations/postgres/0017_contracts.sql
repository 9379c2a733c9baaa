-- What a workload of a run promised to cost (a contract probe's, or a team's `expect`), and the
-- workloads whose function the toolchain's libc does not provide: one row per such workload. A
-- workload not provided has no fit, failure or measurement rows, so its source hash and metadata
-- are kept here; for the others they are in `fits` or `failures` too.
CREATE TABLE run_contracts (
    run_id       UUID NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    workload_id  BIGINT NOT NULL REFERENCES workloads (id),
    -- The contract as the agent sent it, a JSON object; NULL for a workload without one.
    contract     TEXT,
    not_provided BOOLEAN NOT NULL,
    source_hash  TEXT NOT NULL,
    metadata     TEXT NOT NULL,
    PRIMARY KEY (run_id, workload_id)
);
CREATE INDEX run_contracts_by_workload ON run_contracts (workload_id);

-- The contract each workload is held to instead of the slope threshold, as its latest run with a
-- contract said: what the alert rules judge its versions by (`expected`, the class), and what a
-- regression says of a break (`contract`, the whole JSON object).
CREATE TABLE workload_contracts (
    workload_id BIGINT PRIMARY KEY REFERENCES workloads (id),
    expected    TEXT NOT NULL,
    contract    TEXT NOT NULL
);
