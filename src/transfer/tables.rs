//! What an export does with each table the migrations create: carries it, leaves the import to
//! rebuild it, or leaves it out, each with why. `tests/all/structure.rs` reads the migrations of
//! both backends against these lists, so a new table or column cannot slip past the export.

/// Tables an export carries, each with every column it has: each column is written out, or
/// worked out again by the import from what is (a run's fits from its samples, ids assigned anew).
pub const EXPORTED: &[(&str, &[&str])] = &[
    ("tokens", &["id", "name", "scope", "prefix", "hash", "created_at", "last_used_at"]),
    (
        "runs",
        &[
            "id",
            "content_hash",
            "agent_version",
            "started_at",
            "received_at",
            "host_id",
            "toolchain_id",
            "sample_count",
            "samples_pruned_at",
            "metric",
        ],
    ),
    (
        "fits",
        &[
            "run_id",
            "workload_id",
            "source_hash",
            "slope",
            "intercept",
            "r2",
            "stderr",
            "ci_low",
            "ci_high",
            "n_sizes",
            "min_size",
            "max_size",
            "local_slopes",
            "metadata",
            "medians",
            "facts",
            "profile",
        ],
    ),
    ("measurements", &["run_id", "workload_id", "size", "median_ns", "samples", "samples_ns", "instructions"]),
    ("failures", &["run_id", "workload_id", "source_hash", "kind", "size", "detail", "facts", "metadata"]),
    (
        "run_contracts",
        &["run_id", "workload_id", "contract", "not_provided", "source_hash", "metadata", "size_of_interest"],
    ),
    // Editors' status entries are carried; the alert rules' entries are written again as the runs
    // are replayed.
    ("regression_events", &["id", "regression_id", "at", "kind", "detail", "actor", "status"]),
    ("regression_notes", &["id", "regression_id", "at", "author", "body"]),
    ("regression_links", &["id", "regression_id", "at", "author", "title", "url"]),
    (
        "bisections",
        &[
            "id",
            "regression_id",
            "content_hash",
            "agent_version",
            "started_at",
            "received_at",
            "seconds",
            "host_name",
            "host_cpu",
            "host_kernel",
            "host_arch",
            "lineage",
            "workloads",
            "max_slope",
            "max_class",
            "good",
            "bad",
            "candidates",
            "outcome",
            "first_bad",
            "last_good",
            "content_key",
        ],
    ),
    (
        "bisection_steps",
        &["bisection_id", "position", "version", "verdict", "slope", "workload", "seconds", "run_id", "note"],
    ),
    (
        "exposure_scans",
        &[
            "scan_id",
            "content_hash",
            "artifact",
            "digest",
            "lineage",
            "version",
            "libc",
            "linkage",
            "agent_version",
            "scanned_at",
            "received_at",
        ],
    ),
    (
        "exposure_functions",
        &["scan_id", "function", "breach", "verdict", "call_sites", "referenced", "callers", "accepted"],
    ),
    (
        "found_probes",
        &[
            "function",
            "axis",
            "shape",
            "described",
            "expected",
            "broken",
            "consequence",
            "kind",
            "class",
            "toolchain",
            "version",
            "found_at",
            "submitted_by",
            "received_at",
        ],
    ),
];

/// Tables an import fills again from what it stores, rather than reading them from the file.
pub const REBUILT: &[(&str, &str)] = &[
    ("hosts", "from the runs' hosts, as ingest does; ids assigned anew"),
    ("toolchains", "from the runs' toolchains, as ingest does; ids assigned anew"),
    ("workloads", "from the runs' workloads, as ingest does; ids assigned anew"),
    ("lineages", "from each lineage's first run, as ingest does"),
    ("version_summaries", "by each imported run's summary pass"),
    ("version_failures", "by each imported run's summary pass"),
    ("regressions", "by the alert rules as the runs are replayed; numbers assigned anew"),
    ("regression_workloads", "by the alert rules as the runs are replayed"),
    ("workload_contracts", "from the latest run with a contract of each workload, as ingest does"),
    ("exposure_latest", "from the scans' times as each imported scan is stored"),
];

/// Tables an export leaves out, and why.
pub const LEFT_OUT: &[(&str, &str)] = &[
    ("sessions", "logins: editors log in again on the new store"),
    ("deliveries", "the webhook outbox: let it drain first; an import announces nothing again"),
    ("delivery_attempts", "the outbox's attempts, which go with it"),
    ("pending_summaries", "runs waiting for a summary pass: an import runs each run's pass as it stores it"),
    ("task_claims", "which server runs the periodic work now: each store's own"),
    ("settings", "held the session key, which now comes from configuration; nothing reads it"),
];
