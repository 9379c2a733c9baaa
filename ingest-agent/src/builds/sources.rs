//! The C sources compiled into the agent: the harness every workload includes, the built-in
//! workloads and the SQLite amalgamation they link.

pub const HARNESS: (&str, &str) = ("slopewatch.h", include_str!("../../c/slopewatch.h"));
/// What source hashes begin with in place of the harness: the harness of the workload protocol's
/// first version, byte for byte, a constant. The hash covers what defines the measured work (the
/// workload's sources and the protocol they are written to), not how the harness measures it, so
/// a new way of measuring (`--measure`) marks no series "workload source changed"; the harness
/// compiled in is part of the build cache's key instead (`Workload::build_key`). A change to what
/// the protocol asks of a workload would be a new constant.
pub const HASHED_HARNESS: &str = include_str!("../../c/hashed/slopewatch-1.h");
pub const TEXT: (&str, &str) = ("text.h", include_str!("../../c/text.h"));
pub const SQLITE_RECORDS: (&str, &str) = ("sqlite_records.h", include_str!("../../c/sqlite_records.h"));
pub const SQLITE_C_GZ: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sqlite3.c.gz"));
pub const SQLITE_H_GZ: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sqlite3.h.gz"));

/// The libc string-family workloads: name, source. Each is named after the one function it calls.
pub const STRING_WORKLOADS: &[(&str, &str)] = &[
    ("strchr", include_str!("../../c/strchr.c")),
    ("strchrnul", include_str!("../../c/strchrnul.c")),
    ("strspn", include_str!("../../c/strspn.c")),
    ("strcspn", include_str!("../../c/strcspn.c")),
    ("strpbrk", include_str!("../../c/strpbrk.c")),
    ("strstr", include_str!("../../c/strstr.c")),
    ("memchr", include_str!("../../c/memchr.c")),
    ("strtol", include_str!("../../c/strtol.c")),
    ("strtod", include_str!("../../c/strtod.c")),
    ("sscanf", include_str!("../../c/sscanf.c")),
];

/// The JSON serializers' forms (compact, spaced, pretty) that the SQLite workloads beyond the
/// first two generate.
pub const SQLITE_JSON: (&str, &str) = ("sqlite_json.h", include_str!("../../c/sqlite_json.h"));

/// One SQLite workload: its name (`sqlite-PATH.SHAPE`: the SQL it runs, then the input's shape),
/// its source, the headers it includes beside `sqlite_records.h`, and its sizes in records.
pub struct SqliteWorkload {
    pub name: &'static str,
    pub main: &'static str,
    pub headers: &'static [(&'static str, &'static str)],
    pub start: u64,
    pub max: u64,
}

const fn sqlite(
    name: &'static str,
    main: &'static str,
    headers: &'static [(&'static str, &'static str)],
    start: u64,
    max: u64,
) -> SqliteWorkload {
    SqliteWorkload { name, main, headers, start, max }
}

/// The SQLite workloads, one for each path of docs/sqlite.md that a long input reaches. Under a
/// libc whose `strspn` or `strcspn` measures the rest of the string, a parse or a search over one
/// long input is quadratic: under Zig 0.16.0 one repetition costs ~0.16 s at 1,000 spaced records
/// and ~0.09 s at 500 pretty ones (four times that at twice the size). So those workloads start
/// there: the sweep rises from half the start, stops after the start on the steep growth, and
/// halves below it, a verdict in a second or two. Their maximum is where a linear libc's largest
/// repetition takes tens of milliseconds, for a clean slope. The first two keep the sizes and
/// sources their history was measured with.
pub const SQLITE_WORKLOADS: &[SqliteWorkload] = &[
    sqlite("sqlite-insert", include_str!("../../c/sqlite_insert.c"), &[], 5_000, 80_000),
    sqlite("sqlite-json-each", include_str!("../../c/sqlite_json_each.c"), &[], 5_000, 80_000),
    sqlite("sqlite-json-each.spaced", include_str!("../../c/sqlite_json_each_spaced.c"), &[SQLITE_JSON], 1_000, 64_000),
    sqlite("sqlite-json-each.pretty", include_str!("../../c/sqlite_json_each_pretty.c"), &[SQLITE_JSON], 500, 64_000),
    sqlite(
        "sqlite-json-each.literals",
        include_str!("../../c/sqlite_json_each_literals.c"),
        &[SQLITE_JSON],
        1_000,
        64_000,
    ),
    sqlite(
        "sqlite-json-extract.spaced",
        include_str!("../../c/sqlite_json_extract_spaced.c"),
        &[SQLITE_JSON],
        1_000,
        128_000,
    ),
    sqlite(
        "sqlite-json-arrow.pretty",
        include_str!("../../c/sqlite_json_arrow_pretty.c"),
        &[SQLITE_JSON],
        500,
        128_000,
    ),
    sqlite("sqlite-insert.spaced", include_str!("../../c/sqlite_insert_spaced.c"), &[SQLITE_JSON], 5_000, 80_000),
    sqlite("sqlite-like.long-text", include_str!("../../c/sqlite_like_long_text.c"), &[SQLITE_JSON], 1_000, 128_000),
];

/// Defines SQLite is built with: no threads or extension loading, so it links with any libc alone.
pub const SQLITE_DEFINES: &[&str] =
    &["-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION", "-DSQLITE_DEFAULT_MEMSTATUS=0"];
