-- A run's fit is classified where it is read, not where it is stored: storing a run no longer
-- pays for fitting six classes per workload, and a fit's class always comes from the model the
-- server runs. The version summaries keep theirs (the alert rules judge them); the model now holds
-- a named class to its exponent's interval, so they are worked out again from their stored
-- medians right after this migration (`Store::migrate`).
ALTER TABLE fits DROP COLUMN complexity;
UPDATE version_summaries SET complexity = NULL;
