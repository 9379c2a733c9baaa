-- A control lineage's runs by when they were measured, so a regression's attribution reads only
-- the control runs of its period (docs/alerts.md, "Attribution").
CREATE INDEX runs_by_toolchain_started ON runs (toolchain_id, started_at);
