-- Regressions found at ingest, their retrospectives, and the webhook outbox.

-- One row per (lineage, version) at which workloads first crossed their threshold.
CREATE TABLE regressions (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    lineage          TEXT NOT NULL,
    version          TEXT NOT NULL,
    -- The highest version below `version` that had been measured: the last known good one.
    previous_version TEXT,
    status           TEXT NOT NULL CHECK (status IN ('open', 'acknowledged', 'fixed', 'false_alarm')),
    -- The largest time ratio (bad / previous) at the largest common size among its workloads.
    magnitude        REAL,
    first_run_at     TEXT NOT NULL,
    opened_at        TEXT NOT NULL,
    acknowledged_at  TEXT,
    acknowledged_by  TEXT,
    fixed_version    TEXT,
    fix_first_run_at TEXT,
    resolved_at      TEXT,
    UNIQUE (lineage, version)
);
CREATE INDEX regressions_by_status ON regressions (status, lineage);

-- The workloads of a regression, with their numbers at the bad version and, once fixed, at the fix.
CREATE TABLE regression_workloads (
    regression_id  BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    workload_id    BIGINT NOT NULL REFERENCES workloads (id),
    slope          REAL NOT NULL,
    ci_low         REAL NOT NULL,
    ci_high        REAL NOT NULL,
    r2             REAL NOT NULL,
    previous_slope REAL,
    time_ratio     REAL,
    ratio_size     BIGINT,
    joined_at      TEXT NOT NULL,
    joined_late    INTEGER NOT NULL,
    fixed_version  TEXT,
    fixed_slope    REAL,
    fixed_ci_low   REAL,
    fixed_ci_high  REAL,
    -- Time at the fix over time at the bad version, at their largest common size.
    fixed_ratio    REAL,
    PRIMARY KEY (regression_id, workload_id)
);
CREATE INDEX regression_workloads_by_workload ON regression_workloads (workload_id);

-- The timeline: what happened to a regression, when, and who did it (a token name, or none for the server).
CREATE TABLE regression_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    regression_id BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    at            TEXT NOT NULL,
    kind          TEXT NOT NULL,
    detail        TEXT NOT NULL,
    actor         TEXT
);
CREATE INDEX regression_events_by_regression ON regression_events (regression_id, at);

CREATE TABLE regression_notes (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    regression_id BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    at            TEXT NOT NULL,
    author        TEXT NOT NULL,
    body          TEXT NOT NULL
);
CREATE INDEX regression_notes_by_regression ON regression_notes (regression_id, at);

CREATE TABLE regression_links (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    regression_id BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    at            TEXT NOT NULL,
    author        TEXT NOT NULL,
    title         TEXT NOT NULL,
    url           TEXT NOT NULL
);

-- The outbox: one row per event and webhook target, written in the transaction that caused it.
-- `id` is sent as X-Slopewatch-Delivery and never changes across retries.
CREATE TABLE deliveries (
    id              BLOB PRIMARY KEY,
    regression_id   BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    event           TEXT NOT NULL,
    target          TEXT NOT NULL,
    body            TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    created_at      TEXT NOT NULL,
    -- When the row is next due; while a worker holds the row it is pushed past the worker's lease.
    next_attempt_at TEXT NOT NULL,
    attempts        INTEGER NOT NULL,
    delivered_at    TEXT,
    last_error      TEXT
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_by_regression ON deliveries (regression_id);

CREATE TABLE delivery_attempts (
    delivery_id BLOB NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    at          TEXT NOT NULL,
    http_status INTEGER,
    latency_ms  REAL NOT NULL,
    error       TEXT,
    PRIMARY KEY (delivery_id, attempt)
);

-- Server-wide secrets generated on first start, e.g. the session signing key, so that every
-- replica and every restart agree on them.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
