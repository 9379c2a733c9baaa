-- Bisections recorded on a regression: the search, over the toolchain builds between its last good
-- and first bad version, for the first bad build, as an agent sent it. Stored whole with its steps
-- or not at all; `content_hash` tells an agent's retry of the same record from a different record
-- under the same id.
CREATE TABLE bisections (
    id            BLOB PRIMARY KEY,
    regression_id INTEGER NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    content_hash  TEXT NOT NULL,
    agent_version TEXT NOT NULL,
    started_at    TEXT NOT NULL,
    received_at   TEXT NOT NULL,
    seconds       REAL NOT NULL,
    host_name     TEXT NOT NULL,
    host_cpu      TEXT NOT NULL,
    host_kernel   TEXT NOT NULL,
    host_arch     TEXT NOT NULL,
    lineage       TEXT NOT NULL,
    -- The workloads judged, a JSON array of names.
    workloads     TEXT NOT NULL,
    max_slope     REAL NOT NULL,
    -- The most complex class allowed (`n`, `n^2`, …), when the class was judged too.
    max_class     TEXT,
    good          TEXT NOT NULL,
    bad           TEXT NOT NULL,
    candidates    INTEGER NOT NULL,
    outcome       TEXT NOT NULL CHECK (outcome IN ('found', 'good_is_bad', 'bad_is_good', 'inconclusive')),
    first_bad     TEXT,
    last_good     TEXT
);
CREATE INDEX bisections_regression ON bisections (regression_id, received_at);

-- Each candidate a bisection measured or skipped; `position` is the measuring order, from 1.
CREATE TABLE bisection_steps (
    bisection_id BLOB NOT NULL REFERENCES bisections (id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    version      TEXT NOT NULL,
    verdict      TEXT NOT NULL CHECK (verdict IN ('good', 'bad', 'skipped')),
    slope        REAL,
    workload     TEXT,
    seconds      REAL NOT NULL,
    run_id       BLOB,
    note         TEXT,
    PRIMARY KEY (bisection_id, position)
);
