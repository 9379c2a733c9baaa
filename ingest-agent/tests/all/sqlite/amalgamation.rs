//! SQLite's amalgamation, carried inside the agent, built with the toolchain under test.

use crate::helpers::*;

#[test]
fn sqlite_workloads_are_built_with_the_toolchain_and_record_the_sqlite_version() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("run.json");
    let out = run(agent()
        .args(["measure", "--toolchain", "gcc-glibc=gcc", "--workloads", "sqlite-insert,sqlite-json-each"])
        // Sizes large enough that the work, not timer noise on a busy machine, sets the slope.
        .args(["--start-size", "4000", "--max-size", "128000", "--reps", "3"])
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&out_file));
    assert!(out.status.success(), "{}", text(&out));
    let run: serde_json::Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    for w in run["workloads"].as_array().unwrap() {
        assert_eq!(w["size_unit"], "records");
        // Six, and up to three more where they could not tell two classes apart.
        let sizes = w["measurements"].as_array().unwrap().len();
        assert!((6..=9).contains(&sizes), "{sizes} sizes");
        let version = w["metadata"]["sqlite_version"].as_str().unwrap();
        assert!(version.starts_with("3."), "{version}");
    }
    for (_, w, k) in slopes(&out_file) {
        // Fixed costs (opening the database, preparing statements) flatten the low end on a busy
        // machine; what matters is growth that is clearly there and not quadratic.
        assert!(k > 0.4 && k < 1.5, "{w}: {k}");
    }
}
