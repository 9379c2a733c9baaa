-- A series that changes regime at one size (a count that jumps ×25 where glibc turns to
-- `rep movsb`) is now classified by the growth on the two sides of the step rather than read as a
-- higher degree (docs/complexity.md). The version summaries are worked out again from their stored
-- medians right after this migration (`Store::migrate`).
UPDATE version_summaries SET complexity = NULL;
