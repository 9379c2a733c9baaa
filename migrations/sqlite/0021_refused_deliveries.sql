-- Webhook targets that say no. A delivery whose target answers a refusal (a 3xx, or a 4xx other
-- than 408 and 429) three times in a row is `refused` instead of being retried for a day; a person
-- may resend it, which starts a new round of retries under the same id.
--
-- SQLite changes a CHECK only by rebuilding the table. Dropping `deliveries` with foreign keys on
-- would delete its attempts by cascade, so both tables are copied aside, dropped (attempts
-- first, so nothing refers to the outbox any more) and rebuilt under the same ids.
CREATE TEMP TABLE deliveries_before AS SELECT * FROM deliveries;
CREATE TEMP TABLE delivery_attempts_before AS SELECT * FROM delivery_attempts;
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
CREATE TABLE deliveries (
    id              BLOB PRIMARY KEY,
    regression_id   BIGINT NOT NULL REFERENCES regressions (id) ON DELETE CASCADE,
    event           TEXT NOT NULL,
    target          TEXT NOT NULL,
    body            TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'refused')),
    created_at      TEXT NOT NULL,
    -- When the row is next due; while a worker holds the row it is pushed past the worker's lease.
    next_attempt_at TEXT NOT NULL,
    attempts        INTEGER NOT NULL,
    delivered_at    TEXT,
    last_error      TEXT,
    -- Refusals in a row, up to the latest attempt; any other outcome sets it back to 0.
    refusals        INTEGER NOT NULL DEFAULT 0,
    -- The last resend and who asked for it; retries after a resend run for `retry_for_secs` from it.
    resent_at       TEXT,
    resent_by       TEXT
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_by_regression ON deliveries (regression_id);
-- Refused deliveries are listed and counted apart, and are few.
CREATE INDEX deliveries_refused ON deliveries (created_at) WHERE status = 'refused';

CREATE TABLE delivery_attempts (
    delivery_id BLOB NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    at          TEXT NOT NULL,
    http_status INTEGER,
    latency_ms  REAL NOT NULL,
    error       TEXT,
    -- The first line of the body of an answer other than 2xx, bounded, as the target sent it.
    answer      TEXT,
    PRIMARY KEY (delivery_id, attempt)
);
INSERT INTO deliveries (id, regression_id, event, target, body, status, created_at, next_attempt_at, attempts,
                        delivered_at, last_error)
SELECT id, regression_id, event, target, body, status, created_at, next_attempt_at, attempts,
       delivered_at, last_error FROM deliveries_before;
INSERT INTO delivery_attempts (delivery_id, attempt, at, http_status, latency_ms, error)
SELECT delivery_id, attempt, at, http_status, latency_ms, error FROM delivery_attempts_before;
DROP TABLE delivery_attempts_before;
DROP TABLE deliveries_before;
