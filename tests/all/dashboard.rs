//! The dashboard's pages, charts and exports over HTTP, on Postgres and on SQLite.

use crate::builders::RunShape;
use crate::helpers::{on_both_backends, TestApp};
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::collections::{BTreeSet, VecDeque};
use tower::ServiceExt;

struct Page {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

async fn fetch(app: &TestApp, uri: &str, headers: &[(&str, &str)]) -> Page {
    let mut req = Request::get(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = app.router.clone().oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    Page { status, headers, body: String::from_utf8_lossy(&bytes).into_owned() }
}

async fn html(app: &TestApp, uri: &str) -> String {
    let page = fetch(app, uri, &[]).await;
    assert_eq!(page.status, StatusCode::OK, "{uri}: {}", page.body);
    assert!(page.headers["content-type"].to_str().unwrap().starts_with("text/html"), "{uri}");
    page.body
}

/// Every `href` and `src` on the page that stays on this server.
fn local_links(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for (i, _) in page.match_indices(attr) {
            let rest = &page[i + attr.len()..];
            let value = &rest[..rest.find('"').unwrap()];
            if value.starts_with('/') {
                out.push(value.replace("&#38;", "&"));
            }
        }
    }
    out
}

/// Follows every link from the overview; returns the URIs visited and their bodies.
async fn crawl(app: &TestApp) -> Vec<(String, Page)> {
    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::from(["/".to_string()]);
    let mut pages = Vec::new();
    while let Some(uri) = queue.pop_front() {
        if !seen.insert(uri.clone()) || uri.starts_with("/static/") {
            continue;
        }
        let page = fetch(app, &uri, &[]).await;
        // The outbox is for signed-in readers even where reading is open: its link leads to the login.
        if uri == "/deliveries" {
            assert_eq!(page.status, StatusCode::SEE_OTHER, "{uri} without a session: {}", page.body);
            continue;
        }
        assert_eq!(page.status, StatusCode::OK, "{uri} linked from the dashboard: {}", page.body);
        if page.headers["content-type"].to_str().unwrap().starts_with("text/html") {
            queue.extend(local_links(&page.body));
        }
        pages.push((uri, page));
        assert!(pages.len() < 400, "the crawl should be bounded");
    }
    pages
}

/// Three Zig releases (the last one quadratic), a musl-gcc baseline, two workloads.
async fn seed(app: &TestApp) -> Vec<Value> {
    let mut runs = Vec::new();
    for (lineage, version, host, slope) in [
        ("zig-cc-musl", "0.14.1", "build-01", 1.0),
        ("zig-cc-musl", "0.15.2", "build-01", 1.02),
        ("zig-cc-musl", "0.16.0", "build-01", 2.0),
        ("zig-cc-musl", "0.16.0", "build-02", 2.02),
        ("musl-gcc", "1.2.5", "build-02", 1.0),
    ] {
        let run = RunShape::new(lineage, version).host(host).slope(slope).workloads(2).sizes(5).json();
        let (status, body) = app.submit(&run).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        runs.push(run);
    }
    runs
}

#[tokio::test]
async fn every_page_is_reachable_from_the_overview_and_renders() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        seed(&app).await;
        let pages = crawl(&app).await;
        let visited: Vec<&str> = pages.iter().map(|(uri, _)| uri.as_str()).collect();
        for wanted in [
            "/series/workload-0/zig-cc-musl",
            "/series/workload-0/zig-cc-musl/slope.svg",
            "/series/workload-0/zig-cc-musl/loglog.svg",
            "/series/workload-0/zig-cc-musl/data.csv",
            "/series/workload-0/zig-cc-musl/data.json",
            "/compare?workload=workload-0&a=zig-cc-musl%400.15.2&b=zig-cc-musl%400.16.0",
            "/compare/chart.svg?workload=workload-0&a=zig-cc-musl%400.15.2&b=zig-cc-musl%400.16.0",
            "/compare/data.csv?workload=workload-0&a=zig-cc-musl%400.15.2&b=zig-cc-musl%400.16.0",
            "/compare?workload=workload-0&a=musl-gcc%401.2.5&b=zig-cc-musl%400.16.0",
            "/toolchains",
            "/hosts",
            "/compare",
        ] {
            assert!(visited.contains(&wanted), "{wanted} is not linked; visited {visited:#?}");
        }
        assert!(visited.iter().any(|u| u.starts_with("/runs/")), "runs are linked");
        for (uri, page) in &pages {
            if uri.contains(".svg") {
                assert_eq!(page.headers["content-type"], "image/svg+xml; charset=utf-8");
                assert!(page.body.starts_with("<svg") && page.body.contains("<polyline"), "{uri} draws lines");
            }
        }

        let overview = html(&app, "/").await;
        // The verdict comes before the grid: one banner for the regression both workloads are in.
        let (verdict, grid) = overview.split_once("<table class=\"matrix\">").unwrap();
        let verdict = verdict.split_once("id=\"regressions\"").unwrap().1;
        assert_eq!(verdict.matches("<article class=\"banner regression").count(), 1, "{verdict}");
        assert!(verdict.contains("href=\"/toolchains/zig-cc-musl/0.16.0\">zig-cc-musl 0.16.0</a>"), "{verdict}");
        assert!(verdict.contains("2 workloads ") && verdict.contains("href=\"/regressions/1\""), "{verdict}");
        assert!(verdict.contains("last good version 0.15.2"), "{verdict}");
        assert!(grid.contains("class=\"cell regression\""), "the quadratic series is banded");
        assert!(grid.contains("k 2.01"), "the latest zig slope is the median of its runs");
        assert!(grid.contains("was 1.02 at 0.15.2"), "and the cell says what it was: {grid}");
        assert!(grid.contains("href=\"/toolchains/musl-gcc/1.2.5\""), "headers link to their version's page");
    })
    .await;
}

/// The overview reads each lineage's latest eight versions only, so it costs the same however
/// long the history grows: the latest version is there, and a workload measured in none of them
/// has left the overview while its series page keeps it.
#[tokio::test]
async fn the_overview_reads_only_each_lineage_s_latest_versions() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        for v in 0..10 {
            let version = format!("12.{v}.0");
            let workloads = if v == 0 { 2 } else { 1 };
            let run = RunShape::new("gcc-glibc", &version).workloads(workloads).json();
            let (status, body) = app.submit(&run).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        let overview = html(&app, "/").await;
        assert!(overview.contains("12.9.0"), "the latest version is shown: {overview}");
        assert!(overview.contains("/series/workload-0/gcc-glibc"), "{overview}");
        assert!(!overview.contains("/series/workload-1/gcc-glibc"), "workload-1 was last measured 9 versions ago");
        html(&app, "/series/workload-1/gcc-glibc").await;
    })
    .await;
}

#[tokio::test]
async fn the_series_page_tables_every_version_and_marks_the_crossing() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        seed(&app).await;
        let page = html(&app, "/series/workload-1/zig-cc-musl").await;
        let order: Vec<usize> = ["0.14.1", "0.15.2", "0.16.0"]
            .iter()
            .map(|v| {
                page.find(&format!("<th scope=\"row\" class=\"mono\"><a href=\"/toolchains/zig-cc-musl/{v}\">{v}"))
                    .unwrap()
            })
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "versions in version order");
        assert!(page.contains("First over the alert threshold (1.5): <strong class=\"mono\">0.16.0</strong>"));
        assert!(page.contains("Median at 1 MiB"), "the largest size all versions share heads the column");
        assert!(page.contains("× slower"), "0.16.0 is compared with 0.15.2");
        assert!(page.contains("alt=\"Log-log slope of workload-1 built with zig-cc-musl across 3 versions"));
        assert!(page.contains("<img class=\"chart\""));

        // Choosing versions changes the log-log chart and the picker.
        let chosen = html(&app, "/series/workload-1/zig-cc-musl?v=0.14.1&v=0.16.0").await;
        assert!(chosen.contains("loglog.svg?v=0.14.1&#38;v=0.16.0"));
        assert!(chosen.contains("value=\"0.14.1\" checked"));
        assert!(!chosen.contains("value=\"0.15.2\" checked"));
        let svg = fetch(&app, "/series/workload-1/zig-cc-musl/loglog.svg?v=0.14.1&v=0.16.0", &[]).await.body;
        assert!(svg.contains("0.14.1  (k = 1.00)") && !svg.contains("0.15.2  (k"));
    })
    .await;
}

#[tokio::test]
async fn charts_answer_a_reload_with_304_and_compress() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        seed(&app).await;
        let uri = "/series/workload-0/zig-cc-musl/slope.svg";
        let first = fetch(&app, uri, &[]).await;
        assert_eq!(first.status, StatusCode::OK);
        assert_eq!(first.headers["cache-control"], "no-cache");
        let etag = first.headers["etag"].to_str().unwrap().to_string();
        let again = fetch(&app, uri, &[("if-none-match", &etag)]).await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED);
        assert!(again.body.is_empty());

        // A new run changes the data, so the chart.
        app.submit(&RunShape::new("zig-cc-musl", "0.17.0").workloads(2).sizes(5).json()).await;
        let changed = fetch(&app, uri, &[("if-none-match", &etag)]).await;
        assert_eq!(changed.status, StatusCode::OK);
        assert!(changed.body.contains("0.17.0"));

        let gz = fetch(&app, uri, &[("accept-encoding", "gzip")]).await;
        assert_eq!(gz.headers["content-encoding"], "gzip");
    })
    .await;
}

#[tokio::test]
async fn comparisons_give_the_ratio_at_each_size_and_the_slope_delta() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        seed(&app).await;
        let page = html(&app, "/compare?workload=workload-0&a=musl-gcc@1.2.5&b=zig-cc-musl@0.16.0").await;
        // Time is 0.5·size^k: at 1 MiB, k = 2.01 against k = 1 is about a million times slower.
        assert!(page.contains("At 1 MiB, zig-cc-musl 0.16.0 is "), "{page}");
        assert!(page.contains("× slower than musl-gcc 1.2.5"));
        assert!(page.contains("+1.01"), "the slope delta");
        assert!(page.contains("/compare/chart.svg?workload=workload-0&#38;a=musl-gcc%401.2.5"));

        let csv = fetch(&app, "/compare/data.csv?workload=workload-0&a=musl-gcc@1.2.5&b=zig-cc-musl@0.16.0", &[]).await;
        assert_eq!(csv.headers["content-type"], "text/csv; charset=utf-8");
        let lines: Vec<&str> = csv.body.lines().collect();
        assert_eq!(lines[0], "workload,a,b,size,a_median_ns,b_median_ns,ratio,measure");
        assert!(lines[1].ends_with(",wall"), "the export says its metric: {}", lines[1]);
        assert_eq!(lines.len(), 6, "a line per shared size");
        let (status, data) =
            app.get("/compare/data.json?workload=workload-0&a=musl-gcc@1.2.5&b=zig-cc-musl@0.16.0").await;
        assert_eq!(status, StatusCode::OK);
        assert!((data["slope_delta"].as_f64().unwrap() - 1.01).abs() < 0.02, "{data}");
        assert_eq!(data["sizes"].as_array().unwrap().len(), 5);

        let choose = html(&app, "/compare?workload=workload-0").await;
        assert!(choose.contains("<option value=\"musl-gcc@1.2.5\">musl-gcc 1.2.5</option>"));
        let missing = fetch(&app, "/compare?workload=workload-0&a=musl-gcc@9&b=zig-cc-musl@0.16.0", &[]).await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
        assert!(missing.body.contains("has no runs with musl-gcc 9"));
        // Lineages and versions may hold `@`: the reading the store has wins.
        for (lineage, version) in [("gcc@12", "14.1"), ("gcc", "14.1@rc2")] {
            let (status, body) = app.submit(&RunShape::new(lineage, version).json()).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        for (side, label) in [("gcc%4012%4014.1", "gcc@12 14.1"), ("gcc%4014.1%40rc2", "gcc 14.1@rc2")] {
            let uri = format!("/compare/data.json?workload=workload-0&a={side}&b=zig-cc-musl@0.16.0");
            let (status, data) = app.get(&uri).await;
            assert_eq!(status, StatusCode::OK, "{uri}: {data}");
            assert_eq!(
                format!("{} {}", data["a"]["lineage"].as_str().unwrap(), data["a"]["version"].as_str().unwrap()),
                label,
                "{data}"
            );
        }
        for export in ["data.json", "data.csv", "chart.svg"] {
            let (status, body) = app.get(&format!("/compare/{export}?a=musl-gcc@1.2.5&b=zig-cc-musl@0.16.0")).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{export} needs a workload: {body}");
            assert!(body.to_string().contains("/api/v1/toolchains/"), "names where every workload is: {body}");
        }
        let malformed = fetch(&app, "/compare?workload=workload-0&a=musl-gcc&b=zig-cc-musl@0.16.0", &[]).await;
        assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
        assert!(malformed.headers["content-type"].to_str().unwrap().starts_with("text/html"));
    })
    .await;
}

#[tokio::test]
async fn series_exports_carry_the_numbers_of_the_page() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        seed(&app).await;
        let csv = fetch(&app, "/series/workload-0/zig-cc-musl/data.csv", &[]).await.body;
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("workload,lineage,version,slope,ci_low,ci_high,r2,band,shared_size"));
        assert!(lines[3].starts_with("workload-0,zig-cc-musl,0.16.0,2.01"), "{}", lines[3]);
        assert!(lines[3].contains(",regression,1048576,"));
        let (_, data) = app.get("/series/workload-0/zig-cc-musl/data.json").await;
        assert_eq!(data["first_over_threshold"], "0.16.0");
        assert_eq!(data["versions"].as_array().unwrap().len(), 3);
        assert_eq!(data["versions"][2]["runs"], 2);
        assert_eq!(data["versions"][2]["hosts"], 2);
        assert_eq!(data["versions"][2]["sizes"].as_array().unwrap().len(), 5);
        let page = html(&app, "/series/workload-0/zig-cc-musl").await;
        let slope = format!("{:.2}", data["versions"][2]["slope"].as_f64().unwrap());
        assert!(page.contains(&format!("</span> {slope}</span>")), "the table shows the exported slope {slope}");
    })
    .await;
}

#[tokio::test]
async fn names_full_of_markup_are_escaped_on_every_page() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let evil = "<script>alert(\"x&y\")</script>";
        for (version, slope) in [("1.0'\"<b>", 1.0), ("2.0&amp;<i>", 2.0)] {
            let mut run = RunShape::new("zig\"<img src=x onerror=alert(1)>&", version)
                .host("<script>host</script>")
                .slope(slope)
                .json();
            run["workloads"][0]["name"] = json!(evil);
            run["workloads"][0]["metadata"] = json!({"<script>k</script>": "\"><script>v</script>"});
            run["host"]["cpu"] = json!("CPU <marquee>&");
            run["toolchain"]["flags"] = json!("-O2 '\"><svg onload=alert(1)>");
            let (status, body) = app.submit(&run).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        let pages = crawl(&app).await;
        let kinds: BTreeSet<&str> = pages.iter().map(|(u, _)| u.split(['/', '?']).nth(1).unwrap_or("")).collect();
        for kind in ["", "series", "compare", "runs", "toolchains", "hosts"] {
            assert!(kinds.contains(kind), "{kind} pages were reached: {kinds:?}");
        }
        for page in ["/toolchains/zig%22", "format=md"] {
            assert!(pages.iter().any(|(u, _)| u.contains(page)), "a version page and its Markdown were reached");
        }
        for (uri, page) in &pages {
            let body = &page.body;
            // Exports and the JSON API carry names as data; pages and Markdown must escape them.
            let content_type = page.headers["content-type"].to_str().unwrap();
            if content_type.starts_with("text/csv") || content_type.starts_with("application/json") {
                continue;
            }
            for raw in [
                "<script>alert",
                "<script>host",
                "<script>k",
                "<script>v",
                "<img src=x",
                "<marquee",
                "<svg onload",
                "<b>",
                "<i>",
            ] {
                assert!(!body.contains(raw), "{uri} contains raw {raw:?}");
            }
        }
        let overview = &pages.iter().find(|(u, _)| u == "/").unwrap().1.body;
        assert!(overview.contains("&#60;script&#62;alert(&#34;x&#38;y&#34;)&#60;/script&#62;"), "{overview}");
        let run = pages.iter().find(|(u, _)| u.starts_with("/runs/")).unwrap();
        assert!(run.1.body.contains("CPU &#60;marquee&#62;&#38;"));
        assert!(run.1.body.contains("&#60;script&#62;k&#60;/script&#62;"));
        let svg = pages.iter().find(|(u, _)| u.contains("slope.svg")).unwrap();
        assert!(svg.1.body.contains("&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;"));
    })
    .await;
}

#[tokio::test]
async fn an_empty_dashboard_says_how_to_start() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let overview = html(&app, "/").await;
        assert!(overview.contains("No runs yet") && !overview.contains("<table"), "{overview}");
        assert!(overview.contains("slopewatch-agent run --server URL-OF-THIS-SERVER --token TOKEN"), "{overview}");
        assert!(overview.contains("slopewatch token create --name build-01 --scope ingest"), "{overview}");
        assert!(html(&app, "/toolchains").await.contains("No toolchain has reported yet"));
        assert!(html(&app, "/hosts").await.contains("slopewatch token create"));
        assert!(html(&app, "/compare").await.contains("No runs yet"));
    })
    .await;
}

#[tokio::test]
async fn unknown_series_and_runs_get_html_error_pages() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        seed(&app).await;
        for (uri, status, text) in [
            ("/series/nope/zig-cc-musl", StatusCode::NOT_FOUND, "no workload named &#34;nope&#34;"),
            ("/series/workload-0/<nope>", StatusCode::NOT_FOUND, "no runs with toolchain &#34;&#60;nope&#62;&#34;"),
            ("/runs/not-a-uuid", StatusCode::BAD_REQUEST, "is not a run id"),
            ("/runs/00000000-0000-0000-0000-000000000000", StatusCode::NOT_FOUND, "no run"),
        ] {
            let uri = uri.replace('<', "%3C").replace('>', "%3E");
            let page = fetch(&app, &uri, &[]).await;
            assert_eq!(page.status, status, "{uri}");
            assert!(page.headers["content-type"].to_str().unwrap().starts_with("text/html"));
            assert!(page.body.contains(text), "{uri}: {}", page.body);
        }
        let svg = fetch(&app, "/series/nope/x/slope.svg", &[]).await;
        assert_eq!(svg.status, StatusCode::NOT_FOUND);
    })
    .await;
}

/// A workload whose own source changed between two versions: the series page, its chart and its
/// text alternative, and the series API say where, so a step there is not blamed on the toolchain
/// unseen.
#[tokio::test]
async fn a_change_of_the_workload_s_source_is_marked_on_the_series_page_its_chart_and_the_api() {
    on_both_backends(|db| async move {
        let app = TestApp::new(db).await;
        let with_source = |version: &str, slope: f64, source: &str| {
            let mut run = RunShape::new("gcc-glibc", version).slope(slope).sizes(6).json();
            run["workloads"][0]["source_hash"] = source.into();
            run
        };
        for run in [
            with_source("13.2.0", 1.0, "sha256:aaaa"),
            with_source("14.1.0", 1.0, "sha256:aaaa"),
            with_source("14.2.0", 2.0, "sha256:bbbb"),
            with_source("14.2.0", 2.0, "sha256:cccc"),
        ] {
            let (status, body) = app.submit(&run).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        let (_, series) = app.get("/api/v1/series?workload=workload-0&toolchain=gcc-glibc").await;
        let versions = series["versions"].as_array().unwrap();
        let changed: Vec<bool> = versions.iter().map(|v| v["source_changed"].as_bool().unwrap()).collect();
        assert_eq!(changed, [false, false, true], "{series}");
        assert_eq!(versions[2]["source_hash"], "sha256:cccc", "the latest run's: {series}");
        assert_eq!(versions[2]["source_count"], 2, "{series}");

        let page = html(&app, "/series/workload-0/gcc-glibc").await;
        assert!(page.contains("workload source changed at 14.2.0"), "{page}");
        assert!(page.contains("14.2.0 measured on 2 workload sources"), "{page}");
        let svg = fetch(&app, "/series/workload-0/gcc-glibc/slope.svg", &[]).await.body;
        assert!(svg.contains("source changed"), "{svg}");
        assert!(svg.contains("Note: workload source changed at 14.2.0."), "the text alternative says so too");

        // The regression 14.2.0 opened was measured on another source than 14.1.0, and says so.
        let regressions = app.db.store.regressions(None).await.unwrap();
        assert_eq!(regressions.len(), 1);
        let id = regressions[0].0.id;
        let (_, detail) = app.get(&format!("/api/v1/regressions/{id}")).await;
        assert_eq!(detail["workloads"][0]["source_changed"], true, "{detail}");
        let page = html(&app, &format!("/regressions/{id}")).await;
        assert!(page.contains("⚠ source changed"), "{page}");
        assert!(page.contains("were measured on different sources"), "{page}");
    })
    .await;
}
