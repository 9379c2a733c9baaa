-- What each lineage's versions count: the compiler's releases ('compiler': zig cc, gcc) or the
-- libc's ('libc': a musl-gcc wrapper, whose gcc version stays put while musl moves). A lineage's
-- axis is fixed by its first run, and a run of the other axis is refused whole, so one series
-- never orders compiler versions and libc versions on one line.
--
-- Every lineage stored before this migration was measured on the compiler axis (agents knew no
-- other), so each is marked 'compiler'. That includes the history of a musl-gcc lineage, versioned
-- by the wrapped gcc: an agent that now reports musl's version for it is refused with the advice
-- to send under a new lineage name (e.g. musl-gcc-libc), which starts the libc axis, or to keep
-- version_from = "compiler". The old history stays as it was, under its own name.
CREATE TABLE lineages (
    name         TEXT PRIMARY KEY,
    version_from TEXT NOT NULL CHECK (version_from IN ('compiler', 'libc')),
    first_seen   TIMESTAMPTZ NOT NULL
);
INSERT INTO lineages (name, version_from, first_seen)
SELECT name, 'compiler', MIN(first_seen) FROM toolchains GROUP BY name;
