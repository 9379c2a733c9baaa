-- The fits that carry a profile, by workload: a regression's and a series' profiles are read
-- through it, so reading them costs the profiles kept, not every run the workload ever had.
CREATE INDEX fits_with_profiles ON fits (workload_id) WHERE profile IS NOT NULL;
