//! One gcc measured twice by the agent under two version names, as recorded in
//! `tests/fixtures/same-toolchain` (wall time on a quiet machine and beside two busy processes,
//! and instructions under Valgrind), on Postgres and on SQLite: the second version's JSON, page,
//! headline and release note report no change, and say where the two runs' classes differ within
//! the noise. Each workload carries the build hash the agent sends for one gcc's binary at both
//! versions, and the server judges with the unchanged-build rule off, so these pass on the
//! evidence of the numbers and not on the hashes; with it on, every row reads "build unchanged".

use crate::helpers::{on_both_backends, TestApp};
use axum::http::StatusCode;
use flate2::read::GzDecoder;
use serde_json::Value;
use slopewatch::config::{AlertSettings, Config, Rules};
use std::io::Read;
use std::path::Path;

/// A recorded run, `NAME-VERSION.json.gz`, as the agent wrote it.
fn recorded(name: &str, version: &str) -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/same-toolchain/{name}-{version}.json.gz"));
    let mut text = String::new();
    GzDecoder::new(std::fs::File::open(&path).unwrap()).read_to_string(&mut text).unwrap();
    let mut run: Value = serde_json::from_str(&text).unwrap();
    // The recordings predate build hashes: the hash of one binary per workload, alike at both
    // versions, as the agent sends for one gcc.
    for (i, w) in run["workloads"].as_array_mut().unwrap().iter_mut().enumerate() {
        w["build_hash"] = Value::String(format!("sha256:{i:064x}"));
    }
    run
}

/// A server that judges a build unchanged since the version before as it judges any other.
async fn judging_unchanged_builds(db: crate::helpers::TestDb) -> TestApp {
    let rules = Rules { skip_unchanged_builds: false, ..Rules::default() };
    TestApp::with_config(
        db,
        Config { alerts: AlertSettings { rules, ..AlertSettings::default() }, ..Config::default() },
    )
    .await
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Whether a row's classes at the two versions are both named and differ: a change by the rule
/// that counted every such step.
fn classes_differ(row: &Value) -> bool {
    let class = |side: &str| row[side]["class"].as_str().filter(|c| *c != "unsure").map(String::from);
    matches!((class("before"), class("after")), (Some(b), Some(a)) if b != a)
}

/// Submits the pair `name` (1.0.0, then 1.0.1), checks that 1.0.1 reads unchanged everywhere it
/// is shown, and answers how many workloads' classes differ between the two runs.
async fn reads_unchanged(app: &TestApp, name: &str) -> usize {
    for version in ["1.0.0", "1.0.1"] {
        let (status, body) = app.submit(&recorded(name, version)).await;
        assert_eq!(status, StatusCode::CREATED, "{name} {version}: {body}");
    }
    let (status, v) = app.get("/api/v1/toolchains/same-gcc/1.0.1").await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let rows = v["workloads"].as_array().unwrap();
    assert!(rows.len() >= 140, "{name}: {} rows", rows.len());
    // Nothing changed: what failed at both still fails, and what was over its limit at the
    // first version measured stays a finding.
    let still_fails = rows.iter().filter(|r| r["change"] == "still_fails").count();
    let findings = rows.iter().filter(|r| r["finding"] == true).count();
    let mut headline = String::from("same-gcc 1.0.1 against 1.0.0: ");
    if still_fails > 0 {
        headline.push_str(&format!(
            "{still_fails} workload{} still fail{}, ",
            plural(still_fails),
            if still_fails == 1 { "s" } else { "" }
        ));
    }
    headline.push_str(&format!(
        "{} {}unchanged",
        rows.len() - still_fails,
        if still_fails == 0 { "workloads " } else { "" }
    ));
    if findings > 0 {
        headline.push_str(&format!("; {findings} finding{}", plural(findings)));
    }
    headline.push('.');
    assert_eq!(v["headline"], headline.as_str(), "{name}");
    let mut differ = 0;
    for row in rows.iter().filter(|r| r["change"] != "still_fails") {
        assert_eq!(row["change"], "unchanged", "{name}: {row}");
        let text = row["change_text"].as_str().unwrap();
        if classes_differ(row) {
            differ += 1;
            assert!(text.ends_with(", within the noise") && text.contains(" → "), "{name}: {row}");
        } else {
            assert_eq!(text, "unchanged", "{name}: {row}");
        }
        let ratio = &row["ratio"];
        let (low, high, r) =
            (ratio["low"].as_f64().unwrap(), ratio["high"].as_f64().unwrap(), ratio["ratio"].as_f64().unwrap());
        assert!(low <= r && r <= high, "{name}: {row}");
        assert_eq!(ratio["within_noise"], low <= 1.0 && 1.0 <= high, "{name}: {row}");
    }
    let within: Vec<&Value> = rows.iter().filter(|r| r["ratio"]["within_noise"] == true).collect();

    // The page: the same headline, nothing drawn as a regression, no failure but those at both
    // versions, and each ratio whose interval holds 1 muted.
    let (status, page) = app.get("/toolchains/same-gcc/1.0.1").await;
    assert_eq!(status, StatusCode::OK);
    let page = page.as_str().unwrap();
    assert!(page.contains(&headline), "{name}: the page's headline is the JSON's");
    assert!(!page.contains("band regression") && !page.contains("change regression"), "{name}");
    assert_eq!(page.matches("<tr class=\"change failed").count(), still_fails, "{name}: only what fails at both");
    assert_eq!(page.matches("<td class=\"num muted\">").count(), within.len(), "{name}");

    // The release note: the headline, and no row's change but unchanged or within the noise.
    let (status, md) = app.get("/toolchains/same-gcc/1.0.1?format=md").await;
    assert_eq!(status, StatusCode::OK);
    let md = md.as_str().unwrap();
    assert!(md.starts_with(&format!("# same-gcc 1.0.1\n\n{headline}\n")), "{name}: {md}");
    let table_rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| [")).collect();
    assert_eq!(table_rows.len(), rows.len());
    for line in table_rows {
        let change = line.split(" | ").nth(4).unwrap();
        let quiet =
            change == "unchanged" || change.starts_with("still fails: ") || change.ends_with(", within the noise");
        assert!(quiet, "{name}: {line}");
    }
    differ
}

#[tokio::test]
async fn one_gcc_measured_twice_reads_unchanged_where_the_old_rule_counted_every_class_that_differs() {
    on_both_backends(|db| async move {
        let app = judging_unchanged_builds(db).await;
        // The recorded pair's classes differ in 15 workloads, each a change by the old rule.
        assert_eq!(reads_unchanged(&app, "wall-quiet").await, 15);
        let (_, page) = app.get("/toolchains/same-gcc/1.0.1").await;
        assert!(page.as_str().unwrap().contains(", within the noise (95%: "), "a ratio's interval holding 1 is given");
        // Where they differ, the single-workload comparison says so quietly.
        let compare = "/compare?workload=contract.memrchr.bound&a=same-gcc%401.0.0&b=same-gcc%401.0.1";
        let (status, page) = app.get(compare).await;
        assert_eq!(status, StatusCode::OK);
        let page = page.as_str().unwrap();
        assert!(page.contains("Complexity class: O(n) → O(n log n), within the noise</p>"), "{page}");
        assert!(!page.contains("class=\"class-step\""), "{page}");
    })
    .await;
}

#[tokio::test]
async fn one_gcc_measured_twice_beside_busy_processes_reads_unchanged() {
    on_both_backends(|db| async move {
        let app = judging_unchanged_builds(db).await;
        assert_eq!(reads_unchanged(&app, "wall-busy").await, 11);
    })
    .await;
}

#[tokio::test]
async fn one_gcc_counted_twice_under_valgrind_reads_unchanged() {
    on_both_backends(|db| async move {
        let app = judging_unchanged_builds(db).await;
        assert_eq!(reads_unchanged(&app, "instructions").await, 0, "counts repeat exactly");
        let (_, v) = app.get("/api/v1/toolchains/same-gcc/1.0.1").await;
        let rows = v["workloads"].as_array().unwrap();
        assert!(rows.iter().all(|r| r["measure"] == "instructions-valgrind"), "{v}");
    })
    .await;
}

#[tokio::test]
async fn with_the_unchanged_build_rule_on_every_row_reads_build_unchanged_even_where_the_numbers_moved() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        for version in ["1.0.0", "1.0.1"] {
            let (status, body) = app.submit(&recorded("wall-busy", version)).await;
            assert_eq!(status, StatusCode::CREATED, "{version}: {body}");
        }
        let (_, v) = app.get("/api/v1/toolchains/same-gcc/1.0.1").await;
        let rows = v["workloads"].as_array().unwrap();
        let measured = rows.iter().filter(|r| r["before"]["slope"].is_number() && r["after"]["slope"].is_number());
        for row in measured {
            assert_eq!(
                (&row["change"], &row["change_text"]),
                (&"unchanged".into(), &"build unchanged since 1.0.0".into()),
                "{row}"
            );
        }
        let (_, page) = app.get("/series/strchr/same-gcc").await;
        assert!(page.as_str().unwrap().contains("Build unchanged since 1.0.0 at 1.0.1"), "the series page says so");
        let (_, list) = app.get("/api/v1/regressions").await;
        let versions: Vec<&Value> =
            list["regressions"].as_array().unwrap().iter().map(|r| &r["regression"]["version"]).collect();
        assert!(versions.iter().all(|v| *v != "1.0.1"), "nothing opens at 1.0.1: {list}");
    })
    .await;
}
