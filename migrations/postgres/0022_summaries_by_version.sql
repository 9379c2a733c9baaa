-- Version summaries and failures by (lineage, version), so the overview reads the summaries of
-- each lineage's latest versions only, however many versions the lineage has had. The index by
-- lineage alone is covered by these.
CREATE INDEX version_summaries_by_version ON version_summaries (lineage, version);
DROP INDEX version_summaries_by_lineage;
CREATE INDEX version_failures_by_version ON version_failures (lineage, version);
DROP INDEX version_failures_by_lineage;
