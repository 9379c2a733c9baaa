-- Retention: a run's raw samples may be pruned after a while; its fits, per-size medians and the
-- version summaries stay, so charts, series and alerts read the same before and after.

-- When the run's raw samples were removed; NULL while they are kept.
ALTER TABLE runs ADD COLUMN samples_pruned_at TIMESTAMPTZ;
-- The runs pruning still has to look at, oldest first.
CREATE INDEX runs_with_samples ON runs (received_at) WHERE samples_pruned_at IS NULL;
