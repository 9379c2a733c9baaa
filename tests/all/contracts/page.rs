//! `/contracts` over HTTP, on Postgres and on SQLite: each probe of the catalogue against its
//! contract at each lineage's latest version or at the versions picked, every state in a word and
//! a shape, each column's counts, links that reach their pages, and clear errors for bad picks.

use crate::builders::run_of;
use crate::helpers::{on_both_backends, TestApp};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

/// A probe measured at 8 sizes from 1 KiB, costing `cost(size)`.
fn probe(name: &str, expected: &str, cost: impl Fn(f64) -> f64) -> Value {
    let measurements = crate::builders::measurements(1024, 8, cost, &[1.0, 1.01, 0.99]);
    json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:c0", "measurements": measurements,
           "contract": {"expected": expected, "function": function(name), "axis": axis(name)}})
}

fn function(name: &str) -> &str {
    name.split('.').nth(1).unwrap()
}

fn axis(name: &str) -> &str {
    name.split('.').nth(2).unwrap()
}

fn flat(_: f64) -> f64 {
    900.0
}

fn linear(n: f64) -> f64 {
    900.0 + 4.0 * n
}

/// A probe that failed with `failure` after two sizes.
fn failing(name: &str, expected: &str, failure: Value) -> Value {
    let mut w = probe(name, expected, flat);
    w["measurements"].as_array_mut().unwrap().truncate(2);
    w["failure"] = failure;
    w
}

/// A probe whose function the libc lacks.
fn missing(name: &str, expected: &str) -> Value {
    json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:c0", "measurements": [],
           "contract": {"expected": expected, "function": function(name), "axis": axis(name)},
           "not_provided": true})
}

fn crashed() -> Value {
    json!({"kind": "crashed", "size": 4096, "signal": 11, "detail": "read past its bound of 2 bytes"})
}

fn wrong_result() -> Value {
    json!({"kind": "wrong_result", "size": 4096, "got": "0x2", "expected": "0x1",
           "detail": "memccpy returned the index of c, not one past it"})
}

async fn submit(app: &TestApp, lineage: &str, version: &str, workloads: Vec<Value>) {
    let (status, body) = app.submit(&run_of(lineage, version, "build-01", workloads)).await;
    assert_eq!(status, StatusCode::CREATED, "{lineage} {version}: {body}");
}

/// Zig 0.16.0 breaking strchr's contract, crashing memchr and answering memccpy wrongly; 0.15.2
/// (submitted after it) holding them; gcc holding all; rawmemchr missing from musl; and a team's
/// own workload with a contract, which is not of the catalogue.
async fn seed(app: &TestApp) {
    submit(
        app,
        "zig-cc-musl",
        "0.16.0",
        vec![
            probe("contract.strchr.remaining", "1", linear),
            probe("contract.strchr.distance", "n", linear),
            failing("contract.memchr.remaining", "1", crashed()),
            failing("contract.memccpy.bound", "n", wrong_result()),
            missing("contract.rawmemchr.distance", "n"),
        ],
    )
    .await;
    submit(
        app,
        "zig-cc-musl",
        "0.15.2",
        vec![
            probe("contract.strchr.remaining", "1", flat),
            probe("contract.strchr.distance", "n", linear),
            probe("contract.memchr.remaining", "1", flat),
            probe("contract.memccpy.bound", "n", linear),
            missing("contract.rawmemchr.distance", "n"),
        ],
    )
    .await;
    let mut tokenize = probe("contract.x.y", "n", linear);
    tokenize["name"] = "tokenize".into();
    tokenize["contract"] = json!({"expected": "n"});
    submit(
        app,
        "gcc-glibc",
        "12.2.0",
        vec![
            probe("contract.strchr.remaining", "1", flat),
            probe("contract.strchr.distance", "n", linear),
            probe("contract.memchr.remaining", "1", flat),
            probe("contract.memccpy.bound", "n", linear),
            probe("contract.rawmemchr.distance", "n", linear),
            tokenize,
        ],
    )
    .await;
}

struct Page {
    status: StatusCode,
    content_type: String,
    body: String,
}

async fn fetch(app: &TestApp, uri: &str) -> Page {
    let res = app.router.clone().oneshot(Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
    let status = res.status();
    let content_type = res.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    Page { status, content_type, body: String::from_utf8_lossy(&bytes).into_owned() }
}

async fn html(app: &TestApp, uri: &str) -> String {
    let page = fetch(app, uri).await;
    assert_eq!(page.status, StatusCode::OK, "{uri}: {}", page.body);
    assert!(page.content_type.starts_with("text/html"), "{uri}");
    page.body
}

/// The row of `probe`: from its name to the end of its row.
fn row<'a>(page: &'a str, probe: &str) -> &'a str {
    let start = page.find(&format!("{probe}</span></th>")).unwrap_or_else(|| panic!("{probe} has a row: {page}"));
    let rest = &page[start..];
    &rest[..rest.find("</tr>").unwrap()]
}

/// The words of the states of a row's cells, in column order.
fn states(row: &str) -> Vec<String> {
    row.match_indices("class=\"cell contract ")
        .map(|(i, m)| {
            let rest = &row[i + m.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

/// The column heads, `lineage version`.
fn heads(page: &str) -> Vec<String> {
    page.match_indices("<th scope=\"col\" class=\"column-head\">")
        .map(|(i, m)| {
            let rest = &page[i + m.len()..];
            let head = &rest[..rest.find("</th>").unwrap()];
            head.replace("<span class=\"v mono\">", "").replace("</span>", "")
        })
        .collect()
}

/// Every `href` on the page that stays on this server, `&` decoded.
fn local_links(page: &str) -> Vec<String> {
    page.match_indices("href=\"")
        .map(|(i, m)| {
            let rest = &page[i + m.len()..];
            rest[..rest.find('"').unwrap()].replace("&#38;", "&")
        })
        .filter(|href| href.starts_with('/') && !href.starts_with("/static/"))
        .collect()
}

#[tokio::test]
async fn each_probe_stands_against_its_contract_at_each_lineage_s_latest_version() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        seed(&app).await;
        assert!(html(&app, "/").await.contains("href=\"/contracts\""), "the overview links to the page");

        let page = html(&app, "/contracts").await;
        assert_eq!(heads(&page), ["gcc-glibc 12.2.0", "zig-cc-musl 0.16.0"], "latest by version order");
        assert!(!page.contains("tokenize"), "a team's own workload is not of the catalogue");
        let functions: Vec<usize> = ["memccpy", "memchr", "rawmemchr", "strchr"]
            .iter()
            .map(|f| page.find(&format!("<code>{f}</code>")).unwrap_or_else(|| panic!("{f} is a group")))
            .collect();
        assert!(functions.windows(2).all(|w| w[0] < w[1]), "functions in alphabetical order");

        for (probe, want) in [
            ("contract.strchr.remaining", ["held", "over"]),
            ("contract.strchr.distance", ["held", "held"]),
            ("contract.memchr.remaining", ["held", "crashed"]),
            ("contract.memccpy.bound", ["held", "wrong"]),
            ("contract.rawmemchr.distance", ["held", "not-provided"]),
        ] {
            assert_eq!(states(row(&page, probe)), want, "{probe}");
        }
        let over = row(&page, "contract.strchr.remaining");
        assert!(over.contains("<span aria-hidden=\"true\">▲</span> over contract"), "a shape and a word: {over}");
        assert!(over.contains("O(n) · held to O(1)"), "{over}");
        assert!(over.contains("href=\"/series/contract.strchr.remaining/zig-cc-musl\""), "{over}");
        let crash = row(&page, "contract.memchr.remaining");
        assert!(crash.contains("✗</span> crashed") && crash.contains("in 1 of 1 run"), "{crash}");
        assert!(crash.contains("read past its bound of 2 bytes"), "the failure in the cell's title: {crash}");
        assert!(row(&page, "contract.memccpy.bound").contains("≠</span> wrong result"));
        let not_provided = row(&page, "contract.rawmemchr.distance");
        assert!(not_provided.contains("○</span> not provided"), "{not_provided}");

        // Each column's counts, above the matrix.
        let totals = &page[page.find("class=\"totals\"").unwrap()..page.find("</thead>").unwrap()];
        let zig = &totals[totals.find("aria-label=\"zig-cc-musl 0.16.0\"").unwrap()..];
        for count in [
            "1</span> held",
            "1</span> over contract",
            "1</span> crashed",
            "1</span> wrong result",
            "1</span> not provided",
        ] {
            assert!(zig.contains(count), "{count}: {zig}");
        }
        let gcc = &totals[totals.find("aria-label=\"gcc-glibc 12.2.0\"").unwrap()..];
        assert!(gcc.contains("5</span> held") && gcc.contains("0</span> over contract"), "{gcc}");
        assert!(totals.contains("class=\"breaks\"") && totals.contains("class=\"clean\""), "{totals}");

        // Every link reaches its page: the series of each measured cell, the run that found a
        // function missing, the picks.
        let links = local_links(&page);
        assert!(links.iter().any(|l| l.starts_with("/runs/")), "{links:?}");
        assert!(links.contains(&"/contracts?v=zig-cc-musl%400.15.2&v=zig-cc-musl%400.16.0".to_string()), "{links:?}");
        for link in links {
            assert_eq!(fetch(&app, &link).await.status, StatusCode::OK, "{link}");
        }
    })
    .await;
}

#[tokio::test]
async fn picked_versions_stand_side_by_side_in_the_order_picked() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        seed(&app).await;
        let page = html(&app, "/contracts?v=zig-cc-musl%400.15.2&v=zig-cc-musl%400.16.0").await;
        assert_eq!(heads(&page), ["zig-cc-musl 0.15.2", "zig-cc-musl 0.16.0"]);
        assert_eq!(states(row(&page, "contract.strchr.remaining")), ["held", "over"]);
        assert_eq!(states(row(&page, "contract.memchr.remaining")), ["held", "crashed"]);
        assert_eq!(states(row(&page, "contract.rawmemchr.distance")), ["not-provided", "not-provided"]);
        assert!(page.contains("value=\"zig-cc-musl@0.15.2\" checked"), "the picks are ticked");
        assert!(page.contains("value=\"gcc-glibc@12.2.0\">"), "the others are offered");

        let reversed = html(&app, "/contracts?v=zig-cc-musl@0.16.0&v=gcc-glibc@12.2.0&v=zig-cc-musl@0.16.0").await;
        assert_eq!(heads(&reversed), ["zig-cc-musl 0.16.0", "gcc-glibc 12.2.0"], "as picked, each once");
        assert_eq!(states(row(&reversed, "contract.strchr.remaining")), ["over", "held"]);
    })
    .await;
}

#[tokio::test]
async fn a_pick_that_is_no_toolchain_version_is_a_400_page_and_an_unknown_one_a_404() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        seed(&app).await;
        let too_many = (0..17).map(|_| "v=gcc-glibc%4012.2.0").collect::<Vec<_>>().join("&");
        for (uri, status, text) in [
            ("/contracts?v=zig-cc-musl".to_string(), StatusCode::BAD_REQUEST, "LINEAGE@VERSION"),
            ("/contracts?v=".to_string(), StatusCode::BAD_REQUEST, "LINEAGE@VERSION"),
            ("/contracts?v=%3Cb%3E".to_string(), StatusCode::BAD_REQUEST, "&#34;&#60;b&#62;&#34;"),
            ("/contracts?v=zig-cc-musl%409.9.9".to_string(), StatusCode::NOT_FOUND, "zig-cc-musl at version 9.9.9"),
            ("/contracts?v=nope%401".to_string(), StatusCode::NOT_FOUND, "no runs of toolchain nope"),
            (format!("/contracts?{too_many}"), StatusCode::BAD_REQUEST, "at most 16"),
        ] {
            let page = fetch(&app, &uri).await;
            assert_eq!(page.status, status, "{uri}: {}", page.body);
            assert!(page.content_type.starts_with("text/html"), "{uri}");
            assert!(page.body.contains(text), "{uri}: {}", page.body);
            assert!(!page.body.contains("<b>"), "{uri} escapes what it was given");
        }
    })
    .await;
}

#[tokio::test]
async fn an_empty_store_says_how_to_measure_the_catalogue_and_markup_in_names_is_escaped() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let page = html(&app, "/contracts").await;
        assert!(page.contains("No contract probe has reported yet"), "{page}");
        assert!(page.contains("--workloads contract"));

        let evil = "zig\"<img src=x onerror=alert(1)>&";
        submit(&app, evil, "1.0<i>", vec![probe("contract.strchr.remaining", "1", linear)]).await;
        let page = html(&app, "/contracts").await;
        assert_eq!(states(row(&page, "contract.strchr.remaining")), ["over"]);
        for raw in ["<img src=x", "<i>"] {
            assert!(!page.contains(raw), "raw {raw:?} on the page");
        }
        assert!(page.contains("zig&#34;&#60;img src=x onerror=alert(1)&#62;&#38;"), "{page}");
        for link in local_links(&page) {
            assert_eq!(fetch(&app, &link).await.status, StatusCode::OK, "{link}");
        }
    })
    .await;
}
