-- The complexity class of each run's fit and of each version summary, as JSON (the class, the
-- evidence for it and the exponent; docs/complexity.md). NULL until it is worked out: rows stored
-- before this migration are classified from their stored medians right after it, by the server
-- (`Store::migrate`), since the fit cannot be written in SQL.
ALTER TABLE fits ADD COLUMN complexity TEXT;
ALTER TABLE version_summaries ADD COLUMN complexity TEXT;
