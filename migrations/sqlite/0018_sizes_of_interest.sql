-- The size a team runs a workload at, in its unit: kept per run beside the workload's contract
-- (a row of `run_contracts` is written for a workload with a contract, a function not provided,
-- or a size of interest), and the latest one on the workload, which pages predict the time at.
ALTER TABLE run_contracts ADD COLUMN size_of_interest BIGINT;
ALTER TABLE workloads ADD COLUMN size_of_interest BIGINT;
