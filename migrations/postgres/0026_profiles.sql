-- Where a workload's instructions went at one size, as the agent sent it with the run (a JSON
-- object of at most 64 KiB; NULL without one): kept with the run's fit, exported and imported with
-- it, and pruned with it.
ALTER TABLE fits ADD COLUMN profile TEXT;
