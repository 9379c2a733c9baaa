-- Probes a search found (issue 51): a function, an axis and an input shape, a few parameters that
-- describe a family of inputs at any size, whose cost broke the function's contract, as an
-- agent's `search --submit` sent them (docs/api.md#found-probes). Keyed by the three: a probe
-- found again keeps its first finding (`toolchain`, `version`, `found_at`, `submitted_by`) and
-- everything else it was first stored with. `submitted_by` is the submitting token's name;
-- `found_at` and `received_at` are kept in UTC.
CREATE TABLE found_probes (
    function     TEXT NOT NULL,
    axis         TEXT NOT NULL,
    shape        TEXT NOT NULL,
    described    TEXT NOT NULL,
    -- The contract: the class the function may cost along the axis, and what a break means.
    expected     TEXT NOT NULL,
    broken       TEXT NOT NULL,
    consequence  TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('growth', 'bound', 'wrong')),
    -- The class measured when it was found: a growth break's only.
    class        TEXT,
    toolchain    TEXT NOT NULL,
    version      TEXT,
    found_at     TIMESTAMPTZ NOT NULL,
    submitted_by TEXT NOT NULL,
    received_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (function, axis, shape)
);
