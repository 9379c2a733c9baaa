-- Regressions found at ingest, their retrospectives, and the webhook outbox.

-- One row per (lineage, version) at which workloads first crossed their threshold.
CREATE TABLE regressions (
    id               BIGSERIAL PRIMARY KEY,
    lineage          TEXT NOT NULL,
    version          TEXT NOT NULL,
    -- The highest version below `version` that had been measured: the last known good one.
    previous_version TEXT,
    status           TEXT NOT NULL CHECK (status IN ('open', 'acknowledged', 'fixed', 'false_alarm')),
    -- The largest time ratio (bad / previous) at the largest common size among its workloads.
    magnitude        DOUBLE PRECISION,
    first_run_at     TIMESTAMPTZ NOT NULL,
    opened_at        TIMESTAMPTZ NOT NULL,
    acknowledged_at  TIMESTAMPTZ,
    acknowledged_by  TEXT,
    fixed_version    TEXT,
    fix_first_run_at TIMESTAMPTZ,
    resolved_at      TIMESTAMPTZ,
    UNIQUE (lineage, version)
);
CREATE INDEX regressions_by_status ON regressions (status, lineage);

-- The workloads of a regression, with their numbers at the bad version and, once fixed, at the fix.
CREATE TABLE regression_workloads (
    regression_id  BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    workload_id    BIGINT NOT NULL REFERENCES workloads (id),
    slope          DOUBLE PRECISION NOT NULL,
    ci_low         DOUBLE PRECISION NOT NULL,
    ci_high        DOUBLE PRECISION NOT NULL,
    r2             DOUBLE PRECISION NOT NULL,
    previous_slope DOUBLE PRECISION,
    time_ratio     DOUBLE PRECISION,
    ratio_size     BIGINT,
    joined_at      TIMESTAMPTZ NOT NULL,
    joined_late    BOOLEAN NOT NULL,
    fixed_version  TEXT,
    fixed_slope    DOUBLE PRECISION,
    fixed_ci_low   DOUBLE PRECISION,
    fixed_ci_high  DOUBLE PRECISION,
    -- Time at the fix over time at the bad version, at their largest common size.
    fixed_ratio    DOUBLE PRECISION,
    PRIMARY KEY (regression_id, workload_id)
);
CREATE INDEX regression_workloads_by_workload ON regression_workloads (workload_id);

-- The timeline: what happened to a regression, when, and who did it (a token name, or none for the server).
CREATE TABLE regression_events (
    id            BIGSERIAL PRIMARY KEY,
    regression_id BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    at            TIMESTAMPTZ NOT NULL,
    kind          TEXT NOT NULL,
    detail        TEXT NOT NULL,
    actor         TEXT
);
CREATE INDEX regression_events_by_regression ON regression_events (regression_id, at);

CREATE TABLE regression_notes (
    id            BIGSERIAL PRIMARY KEY,
    regression_id BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    at            TIMESTAMPTZ NOT NULL,
    author        TEXT NOT NULL,
    body          TEXT NOT NULL
);
CREATE INDEX regression_notes_by_regression ON regression_notes (regression_id, at);

CREATE TABLE regression_links (
    id            BIGSERIAL PRIMARY KEY,
    regression_id BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    at            TIMESTAMPTZ NOT NULL,
    author        TEXT NOT NULL,
    title         TEXT NOT NULL,
    url           TEXT NOT NULL
);

-- The outbox: one row per event and webhook target, written in the transaction that caused it.
-- `id` is sent as X-Slopewatch-Delivery and never changes across retries.
CREATE TABLE deliveries (
    id              UUID PRIMARY KEY,
    regression_id   BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    event           TEXT NOT NULL,
    target          TEXT NOT NULL,
    body            TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    created_at      TIMESTAMPTZ NOT NULL,
    -- When the row is next due; while a worker holds the row it is pushed past the worker's lease.
    next_attempt_at TIMESTAMPTZ NOT NULL,
    attempts        INTEGER NOT NULL,
    delivered_at    TIMESTAMPTZ,
    last_error      TEXT
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_by_regression ON deliveries (regression_id);

CREATE TABLE delivery_attempts (
    delivery_id UUID NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    at          TIMESTAMPTZ NOT NULL,
    http_status INTEGER,
    latency_ms  DOUBLE PRECISION NOT NULL,
    error       TEXT,
    PRIMARY KEY (delivery_id, attempt)
);

-- Server-wide secrets generated on first start, e.g. the session signing key, so that every
-- replica and every restart agree on them.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
