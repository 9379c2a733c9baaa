-- A cost on times, against a control. A run's fit keeps the control measured beside the workload
-- in the same agent invocation on the same host (its lineage, version and median at each size, a
-- JSON object; NULL without one), and a version summary the workload's time over the control's
-- at each size, the median over its window of runs that had one (a JSON array like `sizes`), with
-- the control lineage it was taken against: NULL where no run of the window had a control.
ALTER TABLE fits ADD COLUMN control TEXT;
ALTER TABLE version_summaries ADD COLUMN beside_sizes TEXT;
ALTER TABLE version_summaries ADD COLUMN beside_lineage TEXT;
