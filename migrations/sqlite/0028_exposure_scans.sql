-- Exposure scans: which catalogue functions a built artifact calls or references, and those of them
-- its toolchain version breaks, as an agent's `exposure --submit` sent the scan (docs/exposure.md).
-- A scan is stored whole with its functions or not at all; `content_hash` tells an agent's retry of
-- the same scan from a different scan under the same id. `scanned_at` is kept in UTC.
CREATE TABLE exposure_scans (
    scan_id       BLOB PRIMARY KEY,
    content_hash  TEXT NOT NULL,
    artifact      TEXT NOT NULL,
    digest        TEXT NOT NULL,
    lineage       TEXT NOT NULL,
    version       TEXT NOT NULL,
    libc          TEXT NOT NULL,
    linkage       TEXT NOT NULL CHECK (linkage IN ('static', 'dynamic')),
    agent_version TEXT NOT NULL,
    scanned_at    TEXT NOT NULL,
    received_at   TEXT NOT NULL
);

-- Each catalogue function a scan's artifact reaches (its `reaches`), one row each. Where the
-- toolchain breaks it, the exposure: `breach` and `verdict` set, with its call sites, whether its
-- address is taken, its callers (a JSON array of names, most call sites first) and the reason a
-- team accepts it; where the artifact merely reaches it, `breach` and the rest are NULL.
CREATE TABLE exposure_functions (
    scan_id    BLOB NOT NULL REFERENCES exposure_scans (scan_id) ON DELETE CASCADE,
    function   TEXT NOT NULL,
    breach     TEXT CHECK (breach IN ('reads_past_bound', 'wrong_result', 'over_contract', 'failed')),
    verdict    TEXT,
    call_sites INTEGER,
    referenced BOOLEAN,
    callers    TEXT,
    accepted   TEXT,
    PRIMARY KEY (scan_id, function)
);

-- The latest scan (by `scanned_at`, then scan id) of each artifact at each toolchain version,
-- kept as scans arrive in any order: the version page reads one row per artifact, and a
-- regression the latest scan of each artifact of its lineage, however often each was scanned.
CREATE TABLE exposure_latest (
    lineage    TEXT NOT NULL,
    version    TEXT NOT NULL,
    artifact   TEXT NOT NULL,
    scan_id    BLOB NOT NULL REFERENCES exposure_scans (scan_id) ON DELETE CASCADE,
    scanned_at TEXT NOT NULL,
    PRIMARY KEY (lineage, version, artifact)
);
CREATE INDEX exposure_latest_by_artifact ON exposure_latest (lineage, artifact, scanned_at);
