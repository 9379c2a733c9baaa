-- A regression that versions measured out of order showed to be part of another one (in version
-- order its workloads regressed with that one) is merged into it: it keeps its page, timeline and
-- deliveries, drops out of the lists, and says where it went.
ALTER TABLE regressions ADD COLUMN merged_into BIGINT REFERENCES regressions (id);
