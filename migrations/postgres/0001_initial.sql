-- Runs as submitted by agents, their fits, and per-version summaries kept current at ingest.

CREATE TABLE tokens (
    id           BIGSERIAL PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    scope        TEXT NOT NULL CHECK (scope IN ('ingest', 'editor', 'admin')),
    -- The first characters of the token, to find its row; the rest is only ever compared hashed.
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ
);
CREATE INDEX tokens_by_prefix ON tokens (prefix);

CREATE TABLE hosts (
    id         BIGSERIAL PRIMARY KEY,
    name       TEXT NOT NULL,
    cpu        TEXT NOT NULL,
    kernel     TEXT NOT NULL,
    arch       TEXT NOT NULL,
    first_seen TIMESTAMPTZ NOT NULL,
    UNIQUE (name, cpu, kernel, arch)
);

CREATE TABLE toolchains (
    id         BIGSERIAL PRIMARY KEY,
    name       TEXT NOT NULL,
    version    TEXT NOT NULL,
    libc       TEXT NOT NULL,
    target     TEXT NOT NULL,
    compiler   TEXT NOT NULL,
    flags      TEXT NOT NULL,
    first_seen TIMESTAMPTZ NOT NULL,
    UNIQUE (name, version, libc, target, compiler, flags)
);

CREATE TABLE workloads (
    id         BIGSERIAL PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    size_unit  TEXT NOT NULL,
    first_seen TIMESTAMPTZ NOT NULL
);

CREATE TABLE runs (
    id            UUID PRIMARY KEY,
    content_hash  TEXT NOT NULL,
    agent_version TEXT NOT NULL,
    started_at    TIMESTAMPTZ NOT NULL,
    received_at   TIMESTAMPTZ NOT NULL,
    host_id       BIGINT NOT NULL REFERENCES hosts (id),
    toolchain_id  BIGINT NOT NULL REFERENCES toolchains (id),
    sample_count  INTEGER NOT NULL
);
CREATE INDEX runs_by_toolchain ON runs (toolchain_id);
CREATE INDEX runs_by_host ON runs (host_id);
CREATE INDEX runs_by_received ON runs (received_at DESC);

CREATE TABLE fits (
    run_id       UUID NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    workload_id  BIGINT NOT NULL REFERENCES workloads (id),
    source_hash  TEXT NOT NULL,
    slope        DOUBLE PRECISION NOT NULL,
    intercept    DOUBLE PRECISION NOT NULL,
    r2           DOUBLE PRECISION NOT NULL,
    stderr       DOUBLE PRECISION NOT NULL,
    ci_low       DOUBLE PRECISION NOT NULL,
    ci_high      DOUBLE PRECISION NOT NULL,
    n_sizes      INTEGER NOT NULL,
    min_size     BIGINT NOT NULL,
    max_size     BIGINT NOT NULL,
    local_slopes TEXT NOT NULL,
    -- The workload's facts as the agent reported them (e.g. sqlite_version), a JSON object.
    metadata     TEXT NOT NULL,
    PRIMARY KEY (run_id, workload_id)
);
CREATE INDEX fits_by_workload ON fits (workload_id);

-- Median time per size per run: what the charts and summaries read, so they never scan samples.
CREATE TABLE measurements (
    run_id      UUID NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    workload_id BIGINT NOT NULL REFERENCES workloads (id),
    size        BIGINT NOT NULL,
    median_ns   DOUBLE PRECISION NOT NULL,
    samples     INTEGER NOT NULL,
    PRIMARY KEY (run_id, workload_id, size)
);

CREATE TABLE samples (
    run_id       UUID NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    workload_id  BIGINT NOT NULL REFERENCES workloads (id),
    size         BIGINT NOT NULL,
    rep          INTEGER NOT NULL,
    ns           DOUBLE PRECISION NOT NULL,
    instructions BIGINT
);
CREATE INDEX samples_by_run ON samples (run_id, workload_id);

-- One row per (workload, lineage, version), recomputed from its fits whenever a run of it
-- arrives, so series and overview reads cost the number of versions, not the number of runs.
CREATE TABLE version_summaries (
    workload_id  BIGINT NOT NULL REFERENCES workloads (id),
    lineage      TEXT NOT NULL,
    version      TEXT NOT NULL,
    slope        DOUBLE PRECISION NOT NULL,
    slope_min    DOUBLE PRECISION NOT NULL,
    slope_max    DOUBLE PRECISION NOT NULL,
    ci_low       DOUBLE PRECISION NOT NULL,
    ci_high      DOUBLE PRECISION NOT NULL,
    r2           DOUBLE PRECISION NOT NULL,
    runs         INTEGER NOT NULL,
    hosts        INTEGER NOT NULL,
    sizes        TEXT NOT NULL,
    first_seen   TIMESTAMPTZ NOT NULL,
    last_run_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workload_id, lineage, version)
);
CREATE INDEX version_summaries_by_lineage ON version_summaries (lineage);
