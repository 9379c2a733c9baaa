//! `/contracts` in a real browser: two Zig releases side by side in headless Chromium, each cell's
//! state in a word in the rendered DOM, a cell linking to its probe's series (which renders too),
//! and a screenshot under `target/test-output/screenshots` (or `$SLOPEWATCH_TEST_OUTPUT`).
//!
//! Chromium is required: the test fails without it unless `SLOPEWATCH_SKIP_BROWSER=1`.

use crate::builders::run_of;
use crate::helpers::chromium::{output_dir, Chromium};
use crate::helpers::{Backend, TestApp, TestDb};
use axum::http::StatusCode;
use serde_json::{json, Value};

/// A probe held to `expected`, measured at 8 sizes from 1 KiB costing `cost(size)`, failing with
/// `failure` after two of them when given.
fn probe(name: &str, expected: &str, cost: fn(f64) -> f64, failure: Option<Value>) -> Value {
    let sizes = if failure.is_some() { 2 } else { 8 };
    let measurements = crate::builders::measurements(1024, sizes, cost, &[1.0, 1.01, 0.99]);
    let mut parts = name.split('.').skip(1);
    let (function, axis) = (parts.next().unwrap(), parts.next().unwrap());
    let mut w = json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:c0", "measurements": measurements,
                       "contract": {"expected": expected, "function": function, "axis": axis}});
    if let Some(f) = failure {
        w["failure"] = f;
    }
    w
}

fn flat(_: f64) -> f64 {
    900.0
}

fn linear(n: f64) -> f64 {
    900.0 + 4.0 * n
}

fn not_provided(name: &str) -> Value {
    json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:c0", "measurements": [],
           "contract": {"expected": "n", "function": "rawmemchr", "axis": "distance"}, "not_provided": true})
}

/// The rendered `<td>` that holds `href`.
fn cell_with<'a>(dom: &'a str, href: &str) -> &'a str {
    let at = dom.find(&format!("href=\"{href}\"")).unwrap_or_else(|| panic!("a cell links to {href}"));
    let start = dom[..at].rfind("<td").unwrap();
    let end = at + dom[at..].find("</td>").unwrap();
    &dom[start..end]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_versions_stand_side_by_side_in_chromium_and_a_cell_links_to_its_series() {
    let Some(chromium) = Chromium::required() else { return };
    let app = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    let crashed = json!({"kind": "crashed", "size": 2048, "signal": 11, "detail": "read past its bound of 2 bytes"});
    for (version, workloads) in [
        (
            "0.15.2",
            vec![
                probe("contract.strchr.remaining", "1", flat, None),
                probe("contract.memchr.remaining", "1", flat, None),
                not_provided("contract.rawmemchr.distance"),
            ],
        ),
        (
            "0.16.0",
            vec![
                probe("contract.strchr.remaining", "1", linear, None),
                probe("contract.memchr.remaining", "1", flat, Some(crashed)),
                not_provided("contract.rawmemchr.distance"),
            ],
        ),
    ] {
        let (status, body) = app.submit(&run_of("zig-cc-musl", version, "build-01", workloads)).await;
        assert_eq!(status, StatusCode::CREATED, "{version}: {body}");
    }
    let base = crate::helpers::serve(app.router.clone()).await;

    let url = format!("{base}/contracts?v=zig-cc-musl%400.15.2&v=zig-cc-musl%400.16.0");
    let dom = chromium.dom(&url);
    for text in ["The C library's contracts", "At a glance", "zig-cc-musl", "0.15.2", "0.16.0", "strchr", "memchr"] {
        assert!(dom.contains(text), "{url} shows {text:?}");
    }
    let heads: Vec<usize> = ["0.15.2</span></th>", "0.16.0</span></th>"].iter().map(|h| dom.find(h).unwrap()).collect();
    assert!(heads[0] < heads[1], "the versions stand in the order picked");

    let series = "/series/contract.strchr.remaining/zig-cc-musl";
    let strchr = &dom[dom.find("contract.strchr.remaining</span></th>").unwrap()..];
    let strchr = &strchr[..strchr.find("</tr>").unwrap()];
    let held = strchr.find("✓</span> held").expect("held at 0.15.2");
    let over = strchr.find("▲</span> over contract").expect("over contract at 0.16.0");
    assert!(held < over, "0.15.2 holds, 0.16.0 breaks: {strchr}");
    assert!(strchr.contains("O(1) · held to O(1)") && strchr.contains("O(n) · held to O(1)"), "{strchr}");
    assert!(cell_with(&dom, series).contains("class=\"cell contract"), "a cell links to its series");
    let memchr = &dom[dom.find("contract.memchr.remaining</span></th>").unwrap()..];
    assert!(memchr[..memchr.find("</tr>").unwrap()].contains("✗</span> crashed"), "{memchr}");
    let rawmemchr = &dom[dom.find("contract.rawmemchr.distance</span></th>").unwrap()..];
    assert_eq!(rawmemchr[..rawmemchr.find("</tr>").unwrap()].matches("○</span> not provided").count(), 2);

    // The link leads to the probe's series, which renders in the browser too.
    let series_dom = chromium.dom(&format!("{base}{series}"));
    assert!(series_dom.contains("contract.strchr.remaining") && series_dom.contains("0.16.0"), "{series_dom}");

    let shots = output_dir();
    chromium.screenshot(&url, &shots.join("contracts.png"), (1280, 1200));
    chromium.screenshot(&url, &shots.join("contracts-phone.png"), (390, 1400));
    eprintln!("screenshots in {}", shots.display());
}
