//! The overview's verdict in a real browser: `slopewatch serve` on SQLite with a control lineage
//! configured, fed over HTTP with a lineage going quadratic at a new version (and a workload
//! failing there), a second lineage's regression and the control, then laid out in headless
//! Chromium at 1400×1000: the banners stand above the grid (by their boxes), one per regression
//! with its counts and links, rows worst first, the control's column first, each cell with what
//! it was at the version before; and, apart, an empty store's help. Screenshots of the window
//! are saved under `target/test-output/screenshots` (or `$SLOPEWATCH_TEST_OUTPUT`).
//!
//! Chromium is required: the test fails without it unless `SLOPEWATCH_SKIP_BROWSER=1`.

use crate::builders::run_of;
use crate::helpers::chromium::{browser, output_dir, Chromium};
use crate::helpers::devtools::Tab;
use crate::helpers::process::{create_token, free_addr, get_json, Server};
use crate::helpers::{Backend, TestDb};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const WINDOW: (u32, u32) = (1400, 1000);

fn linear(n: f64) -> f64 {
    3.0 * n
}

fn watch(n: f64) -> f64 {
    0.05 * n.powf(1.35)
}

fn quadratic(n: f64) -> f64 {
    1e-3 * n * n
}

/// A workload timed at 7 sizes doubling from 64 KiB, `time(n)` ns at each (the median exactly),
/// or failing with a wrong result before any size when `time` is `None`.
fn workload(name: &str, time: Option<fn(f64) -> f64>) -> Value {
    let Some(time) = time else {
        let failure = json!({"kind": "wrong_result", "size": 65536, "got": "-1", "expected": "9362",
                             "detail": "strtol left the end pointer past the blanks"});
        return json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:00", "measurements": [],
                      "failure": failure});
    };
    let measurements = crate::builders::measurements(65536, 7, time, &crate::builders::SPREAD_FIVE);
    json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:00", "measurements": measurements})
}

/// The six string workloads 0.16.0 turns quadratic.
const STRINGS: [&str; 6] = ["memchr", "strchr", "strcspn", "strrchr", "strspn", "strstr"];

/// Every run of the story, in the order they are sent.
fn runs() -> Vec<Value> {
    let every = |time: fn(f64) -> f64| -> Vec<Value> {
        let mut w: Vec<Value> = STRINGS.iter().map(|s| workload(s, Some(time))).collect();
        w.extend(["aaa-steady", "qsort", "strtol"].map(|s| workload(s, Some(linear))));
        w
    };
    let mut zig_new: Vec<Value> = STRINGS.iter().map(|s| workload(s, Some(quadratic))).collect();
    zig_new.extend([workload("aaa-steady", Some(linear)), workload("qsort", Some(watch)), workload("strtol", None)]);
    let clang = |strstr: fn(f64) -> f64| vec![workload("aaa-steady", Some(linear)), workload("strstr", Some(strstr))];
    vec![
        run_of("musl-gcc", "1.2.4", "build-01", every(linear)),
        run_of("musl-gcc", "1.2.5", "build-01", every(linear)),
        run_of("zig-cc-musl", "0.15.2", "build-01", every(linear)),
        run_of("zig-cc-musl", "0.16.0", "build-01", zig_new),
        run_of("clang-glibc", "17.0.6", "build-02", clang(linear)),
        run_of("clang-glibc", "18.1.8", "build-02", clang(quadratic)),
    ]
}

/// The page's text of each element `selector` picks, in document order.
fn texts(tab: &mut Tab, selector: &str) -> Vec<String> {
    let js = format!(
        "[...document.querySelectorAll({})].map(e => e.textContent.replace(/\\s+/g, ' ').trim())",
        json!(selector)
    );
    serde_json::from_value(tab.eval(&js)).unwrap()
}

/// The `href` (as written) of each element `selector` picks.
fn hrefs(tab: &mut Tab, selector: &str) -> Vec<String> {
    let js = format!("[...document.querySelectorAll({})].map(e => e.getAttribute('href'))", json!(selector));
    serde_json::from_value(tab.eval(&js)).unwrap()
}

/// The top and bottom, in page pixels, of each element `selector` picks.
fn boxes(tab: &mut Tab, selector: &str) -> Vec<(f64, f64)> {
    let js = format!(
        "[...document.querySelectorAll({})].map(e => {{ const r = e.getBoundingClientRect(); \
         return [r.top + scrollY, r.bottom + scrollY]; }})",
        json!(selector)
    );
    serde_json::from_value(tab.eval(&js)).unwrap()
}

/// The browser binary, as `Chromium::required` finds it (or `None` where it may be skipped).
fn chromium() -> Option<PathBuf> {
    Chromium::required().map(|_| browser().expect("found once"))
}

fn start_server(dir: &Path, db: &TestDb, config: &str) -> Server {
    let file = dir.join("slopewatch.toml");
    std::fs::write(&file, config).unwrap();
    Server::start(&db.url, &free_addr(), Some(&file), &dir.join("server.log"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_verdict_leads_the_overview_above_a_grid_sorted_worst_first() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::new(Backend::Sqlite).await;
    let server = start_server(dir.path(), &db, "[control]\nlineages = [\"musl-gcc\"]\n");
    let token = create_token(&db.url, "build-hosts", "ingest");
    let client = reqwest::Client::new();
    for run in runs() {
        let res = client.post(format!("{}/api/v1/runs", server.url())).bearer_auth(&token).json(&run).send().await;
        let res = res.unwrap();
        assert_eq!(res.status().as_u16(), 201, "{}", res.text().await.unwrap());
    }
    // The server summarises in the background: wait for both regressions and no run pending.
    let deadline = Instant::now() + Duration::from_secs(60);
    let stored = loop {
        let (_, list) = get_json(&client, &format!("{}/api/v1/regressions?status=open", server.url())).await;
        let page = client.get(server.url()).send().await.unwrap().text().await.unwrap();
        let regressions = list["regressions"].as_array().cloned().unwrap_or_default();
        if regressions.len() == 2 && !page.contains("being summarised") {
            break regressions;
        }
        assert!(Instant::now() < deadline, "the server did not summarise: {list}\n{}", server.log_text());
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let id_of = |lineage: &str| {
        let r = stored.iter().find(|r| r["regression"]["lineage"] == lineage).unwrap();
        r["regression"]["id"].as_i64().unwrap()
    };
    let (zig, clang) = (id_of("zig-cc-musl"), id_of("clang-glibc"));

    let mut tab = Tab::open(&chromium, WINDOW);
    tab.goto(&format!("{}/", server.url()));
    tab.screenshot(&output_dir().join("overview-verdict.png"));

    // One banner per regression, above the grid and above the fold.
    let banners = boxes(&mut tab, "#regressions article.banner");
    assert_eq!(banners.len(), 2, "one banner per open regression, not per workload");
    let grid = boxes(&mut tab, "table.matrix");
    assert_eq!(grid.len(), 1);
    for (top, bottom) in &banners {
        assert!(bottom <= &grid[0].0, "a banner ({top}–{bottom}) ends above the grid's top ({})", grid[0].0);
        assert!(*bottom < f64::from(WINDOW.1), "a banner ({top}–{bottom}) is above the fold");
    }
    let headlines = texts(&mut tab, "#regressions article.banner .headline");
    let zig_line =
        headlines.iter().find(|h| h.contains("zig-cc-musl 0.16.0")).unwrap_or_else(|| panic!("{headlines:?}"));
    assert!(
        zig_line.contains(&format!(
            "zig-cc-musl 0.16.0: broke 6 functions (6 workloads O(n) → O(n²), strtol wrong result) — #{zig} (opened "
        )),
        "{zig_line}"
    );
    assert!(zig_line.ends_with(" ago)") || zig_line.ends_with("just now)"), "{zig_line}");
    let clang_line = headlines.iter().find(|h| h.contains("clang-glibc")).unwrap();
    assert!(
        clang_line.contains(&format!("clang-glibc 18.1.8: broke 1 function (strstr O(n) → O(n²)) — #{clang}")),
        "{clang_line}"
    );
    let links = hrefs(&mut tab, "#regressions article.banner .headline a");
    for (lineage, version, id) in [("zig-cc-musl", "0.16.0", zig), ("clang-glibc", "18.1.8", clang)] {
        assert!(links.contains(&format!("/toolchains/{lineage}/{version}")), "{links:?}");
        assert!(links.contains(&format!("/regressions/{id}")), "{links:?}");
    }
    let behind = texts(&mut tab, &format!("#regression-{zig} details li"));
    assert_eq!(behind.len(), 7, "each workload behind the banner: {behind:?}");
    assert!(behind.contains(&"strtol: ✗ wrong result at 64 KiB: got -1, expected 9362".to_string()), "{behind:?}");

    // The control's column first, each header linking to its lineage's latest version's page and
    // saying when it last sent a run.
    let headers = texts(&mut tab, "table.matrix thead th.lineage");
    assert!(headers[0].starts_with("musl-gcc 1.2.5 control last run "), "{headers:?}");
    assert!(headers[1].starts_with("clang-glibc 18.1.8 last run ") && headers[2].starts_with("zig-cc-musl 0.16.0"));
    let header_links = hrefs(&mut tab, "table.matrix thead th.lineage > a");
    assert_eq!(
        header_links,
        ["/toolchains/musl-gcc/1.2.5", "/toolchains/clang-glibc/18.1.8", "/toolchains/zig-cc-musl/0.16.0"]
    );

    // Rows worst first: failing or over the limit (by name), then watch, then linear.
    let rows = texts(&mut tab, "table.matrix tbody th[scope=row]");
    let names: Vec<&str> = rows.iter().map(|r| r.split(' ').next().unwrap()).collect();
    assert_eq!(
        names,
        ["memchr", "strchr", "strcspn", "strrchr", "strspn", "strstr", "strtol", "qsort", "aaa-steady"],
        "{rows:?}"
    );

    // Each cell says what it was at the version before and since when its class holds.
    let strchr = texts(&mut tab, "table.matrix tbody tr:nth-child(2) td.cell");
    assert_eq!(strchr.len(), 3, "{strchr:?}");
    assert!(strchr[0].contains("O(n) · k 1.00") && strchr[0].contains("was 1.00 at 1.2.4"), "{}", strchr[0]);
    assert!(strchr[0].contains("O(n) since 1.2.4"), "the control held all along: {}", strchr[0]);
    let zig_cell = &strchr[2];
    assert!(zig_cell.contains("O(n²) · k 2.00") && zig_cell.contains("was 1.00 at 0.15.2"), "{zig_cell}");
    assert!(zig_cell.contains("O(n²) since 0.16.0"), "{zig_cell}");
    let strtol = texts(&mut tab, "table.matrix tbody tr:nth-child(7) td.cell");
    assert!(strtol[2].contains("✗ wrong result") && strtol[2].contains("was k 1.00 at 0.15.2"), "{strtol:?}");
    assert!(strtol[2].contains("failing since 0.16.0"), "{strtol:?}");
    assert!(strtol[1].contains('—'), "strtol was never built with clang: {strtol:?}");
    eprintln!("banners at {banners:?}, grid from {}; rows {names:?}", grid[0].0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_store_says_what_to_run_instead_of_an_empty_grid() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = TestDb::new(Backend::Sqlite).await;
    let server = start_server(dir.path(), &db, "");
    let mut tab = Tab::open(&chromium, WINDOW);
    tab.goto(&format!("{}/", server.url()));
    tab.screenshot(&output_dir().join("overview-empty.png"));
    assert_eq!(texts(&mut tab, "table.matrix").len(), 0, "no grid");
    assert_eq!(texts(&mut tab, "article.banner").len(), 0, "no banners");
    let help = texts(&mut tab, "#get-started");
    assert_eq!(help.len(), 1);
    for command in [
        "slopewatch token create --name build-01 --scope ingest".to_string(),
        format!("slopewatch-agent run --server {} --token TOKEN", server.url()),
        "slopewatch-agent toolchains fetch zig 0.15.2 0.16.0".to_string(),
    ] {
        assert!(help[0].contains(&command), "the help names {command:?}: {}", help[0]);
    }
    let (top, bottom) = boxes(&mut tab, "#get-started")[0];
    assert!(bottom < f64::from(WINDOW.1), "the help ({top}–{bottom}) fits above the fold");
}
