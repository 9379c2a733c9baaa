//! The C sources compiled into the agent: the harness every workload includes, the built-in
//! workloads and the SQLite amalgamation they link.

pub const HARNESS: (&str, &str) = ("slopewatch.h", include_str!("../../c/slopewatch.h"));
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

pub const SQLITE_WORKLOADS: &[(&str, &str)] = &[
    ("sqlite-insert", include_str!("../../c/sqlite_insert.c")),
    ("sqlite-json-each", include_str!("../../c/sqlite_json_each.c")),
];

/// Defines SQLite is built with: no threads or extension loading, so it links with any libc alone.
pub const SQLITE_DEFINES: &[&str] =
    &["-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION", "-DSQLITE_DEFAULT_MEMSTATUS=0"];
