-- What ran, and what it cost. A run's fit keeps the content hash of the code the workload ran (its
-- binary's loaded sections and the shared libraries it loaded; NULL where the agent could not tell
-- or predates it), and a version summary the one build its window of runs ran, NULL when they ran
-- several or one is unknown: a version whose build equals the previous version's did not change,
-- and the alert rules open nothing for it. A regression's workload may now be there for its cost:
-- a count that rose by the cost factor at the largest size two versions share.
ALTER TABLE fits ADD COLUMN build_hash TEXT;
ALTER TABLE version_summaries ADD COLUMN build_hash TEXT;
ALTER TABLE regression_workloads DROP CONSTRAINT regression_workloads_reason_check;
ALTER TABLE regression_workloads ADD CONSTRAINT regression_workloads_reason_check
    CHECK (reason IN ('slope', 'failure', 'cost'));
