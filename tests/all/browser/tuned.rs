//! Pages say what the alert rules decided under a team's own settings: `slopewatch serve` on
//! SQLite with `threshold = 1.3` and `strcspn`'s own 2.5, fed two versions of one gcc lineage
//! (`strchr` k 1.0 then 1.42, `strcspn` k 2.0 at both, two runs each with tight intervals). The
//! rules open a regression at 12.3.0 for `strchr` alone; in headless Chromium the overview reads
//! `strchr` there as a regression and `strcspn` as watch under its own threshold, the legend names
//! 1.3, the series chart draws its alert line at 1.3; the version's JSON reports `strchr`'s step,
//! never "unchanged".
//!
//! Chromium is required: the test fails without it unless `SLOPEWATCH_SKIP_BROWSER=1`.

use crate::builders::{measurements, run_of, SPREAD_FIVE};
use crate::helpers::chromium::{browser, output_dir, Chromium};
use crate::helpers::devtools::Tab;
use crate::helpers::process::{create_token, free_addr, get_json, Server};
use crate::helpers::{Backend, TestDb};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A workload timed at 7 sizes doubling from 64 KiB, growing as size^`k`.
fn workload(name: &str, k: f64) -> Value {
    let measurements = measurements(65536, 7, |n| 1e-3 * n.powf(k), &SPREAD_FIVE);
    json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:00", "measurements": measurements})
}

/// The page's text of each element `selector` picks, in document order.
fn texts(tab: &mut Tab, selector: &str) -> Vec<String> {
    let js = format!(
        "[...document.querySelectorAll({})].map(e => e.textContent.replace(/\\s+/g, ' ').trim())",
        json!(selector)
    );
    serde_json::from_value(tab.eval(&js)).unwrap()
}

/// The `title` of the link in `workload`'s row of the overview's grid.
fn cell_title(tab: &mut Tab, workload: &str) -> String {
    let js = format!(
        "[...document.querySelectorAll('table.matrix tbody tr')].filter(r => r.querySelector('th').textContent.trim().startsWith({})).map(r => r.querySelector('td.cell a').getAttribute('title'))[0]",
        json!(workload)
    );
    serde_json::from_value(tab.eval(&js)).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_a_tuned_threshold_the_pages_say_what_the_rules_decided() {
    let Some(_) = Chromium::required() else { return };
    let chromium = browser().expect("found once");
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::new(Backend::Sqlite).await;
    let file = dir.path().join("slopewatch.toml");
    std::fs::write(&file, "[alerts]\nthreshold = 1.3\n[alerts.workloads]\nstrcspn = 2.5\n").unwrap();
    let server = Server::start(&db.url, &free_addr(), Some(&file), &dir.path().join("server.log"));
    let token = create_token(&db.url, "build-hosts", "ingest");
    let client = reqwest::Client::new();
    for (version, strchr) in [("12.2.0", 1.0), ("12.3.0", 1.42)] {
        for host in ["build-01", "build-02"] {
            let run = run_of("gcc-glibc", version, host, vec![workload("strchr", strchr), workload("strcspn", 2.0)]);
            let res = client.post(format!("{}/api/v1/runs", server.url())).bearer_auth(&token).json(&run).send();
            let res = res.await.unwrap();
            assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
        }
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let regressions = loop {
        let (_, list) = get_json(&client, &format!("{}/api/v1/regressions?status=open", server.url())).await;
        let page = client.get(server.url()).send().await.unwrap().text().await.unwrap();
        let found = list["regressions"].as_array().cloned().unwrap_or_default();
        if !found.is_empty() && !page.contains("being summarised") {
            break found;
        }
        assert!(Instant::now() < deadline, "no regression: {list}\n{}", server.log_text());
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(regressions.len(), 1, "{regressions:?}");
    let opened = &regressions[0];
    assert_eq!(opened["regression"]["version"], "12.3.0", "{opened}");
    let members = opened["workloads"].to_string();
    assert!(members.contains("strchr") && !members.contains("strcspn"), "strchr alone: {opened}");

    let mut tab = Tab::open(&chromium, (1400, 1000));
    tab.goto(&format!("{}/", server.url()));
    tab.screenshot(&output_dir().join("overview-tuned.png"));
    let strchr = cell_title(&mut tab, "strchr");
    assert!(strchr.contains("regression"), "strchr at 12.3.0 is what the rules opened: {strchr}");
    let strcspn = cell_title(&mut tab, "strcspn");
    assert!(strcspn.contains("watch") && !strcspn.contains("regression"), "{strcspn}");
    assert!(strcspn.contains("its own threshold: k > 2.5"), "{strcspn}");
    let legend = texts(&mut tab, "ul.legend li").join(" | ");
    assert!(legend.contains("1.3") && !legend.contains("1.5"), "the legend names the configured threshold: {legend}");

    // The series page's chart draws its alert line at strchr's threshold.
    // On a busy host the last version's summary pass may still be running: until it is in, the
    // chart has fewer versions, so the page is loaded again until the chart has its alert line.
    let mut svg = String::new();
    for _ in 0..60 {
        tab.goto(&format!("{}/series/strchr/gcc-glibc", server.url()));
        svg = serde_json::from_value(tab.eval("document.body.innerHTML")).unwrap();
        if svg.contains("alert k") {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(svg.contains("alert k &gt; 1.3") || svg.contains("alert k > 1.3"), "the alert line at 1.3");
    assert!(!svg.contains("alert k &gt; 1.5"), "no line at the default");

    // The version page's JSON reports the step the rules opened on.
    let (_, version) = get_json(&client, &format!("{}/api/v1/toolchains/gcc-glibc/12.3.0", server.url())).await;
    let rows = version["workloads"].as_array().unwrap();
    let row = rows.iter().find(|r| r["workload"] == "strchr").unwrap_or_else(|| panic!("{version}"));
    assert_ne!(row["change"], "unchanged", "the regression's own version reads its step: {row}");
    assert_eq!(row["held_by"]["kind"], "regression", "{row}");
}
