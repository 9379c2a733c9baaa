//! A toolchain version across every workload, on Postgres and on SQLite: its JSON
//! (`/api/v1/toolchains/{lineage}/{version}`), its page and Markdown release note, the errors for
//! an unknown lineage or version and a bad `against`, `/compare` without a workload, the
//! predicted headline of a comparison that shares no size, and the links to the page.

use crate::builders::releases::{regression_at_0_16, seed, CONTROL, HEADLINE, LINEAGE, QUADRATIC};
use crate::helpers::{on_both_backends, TestApp};
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use slopewatch::config::Config;
use tower::ServiceExt;

/// The app with musl-gcc as the control lineage, `public_url` set where given.
async fn app(db: crate::helpers::TestDb, public_url: Option<&str>) -> TestApp {
    let config = Config { controls: vec![CONTROL.into()], public_url: public_url.map(Into::into), ..Config::default() };
    TestApp::with_config(db, config).await
}

/// The row of `workload` in a version's JSON.
fn row<'a>(answer: &'a Value, workload: &str) -> &'a Value {
    let rows = answer["workloads"].as_array().unwrap();
    rows.iter().find(|r| r["workload"] == workload).unwrap_or_else(|| panic!("no row of {workload}: {answer}"))
}

/// A response's status, headers and body text.
async fn fetch(app: &TestApp, uri: &str) -> (StatusCode, HeaderMap, String) {
    let res = app.router.clone().oneshot(Request::get(uri).body(Body::empty()).unwrap()).await.unwrap();
    let (status, headers) = (res.status(), res.headers().clone());
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, headers, String::from_utf8(bytes.to_vec()).unwrap())
}

/// The text of a page, which must answer `status`.
async fn text(app: &TestApp, uri: &str, status: StatusCode) -> String {
    let (got, body) = app.get(uri).await;
    assert_eq!(got, status, "{uri}: {body}");
    body.as_str().map(String::from).unwrap_or_else(|| body.to_string())
}

#[tokio::test]
async fn a_version_s_json_compares_every_workload_with_the_version_before_and_the_control() {
    on_both_backends(|db| async move {
        let app = app(db, None).await;
        seed(&app).await;
        let regression = regression_at_0_16(&app).await;
        let (status, v) = app.get("/api/v1/toolchains/zig-cc-musl/0.16.0").await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!((v["lineage"].as_str(), v["version"].as_str(), v["against"].as_str()), (Some(LINEAGE), Some("0.16.0"), Some("0.15.2")));
        assert_eq!(v["versions"], serde_json::json!(["0.14.1", "0.15.2", "0.16.0"]));
        assert_eq!(v["headline"], HEADLINE);
        assert_eq!(v["url"], "/toolchains/zig-cc-musl/0.16.0");
        assert_eq!(v["markdown_url"], "/toolchains/zig-cc-musl/0.16.0?format=md");

        // Grouped: the agent's workloads, the team's, then the contract probes; worst first.
        let groups: Vec<&str> = v["workloads"].as_array().unwrap().iter().map(|r| r["group"].as_str().unwrap()).collect();
        assert_eq!(groups.len(), 15, "one row per workload: {groups:?}");
        let mut sorted = groups.clone();
        sorted.sort_by_key(|g| ["builtin", "team", "contract"].iter().position(|x| x == g));
        assert_eq!(groups, sorted);
        assert_eq!(v["workloads"][0]["change"], "worse");

        for name in QUADRATIC {
            let r = row(&v, name);
            assert_eq!((r["group"].as_str(), r["change"].as_str()), (Some("builtin"), Some("worse")), "{r}");
            assert_eq!((r["before"]["class"].as_str(), r["after"]["class"].as_str()), (Some("n"), Some("n^2")), "{r}");
            assert_eq!(r["change_text"], "O(n) → O(n²)");
            assert_eq!(r["held_by"]["id"], regression, "{r}");
            assert_eq!(r["held_by"]["kind"], "regression");
            assert!((r["slope_delta"].as_f64().unwrap() - 1.0).abs() < 0.05, "{r}");
            assert_eq!(r["measure"], "wall");
            assert_eq!(r["series_url"], format!("/series/{name}/zig-cc-musl"));
        }
        // At the largest size both measured: 2 MiB, where n²/2000 over 3n is 2 MiB / 6000.
        let strchr = row(&v, "strchr");
        assert_eq!(strchr["ratio"]["size"], 2 << 20);
        assert_eq!(strchr["ratio"]["predicted"], false);
        let expected = (2u64 << 20) as f64 / 6000.0;
        assert!((strchr["ratio"]["ratio"].as_f64().unwrap() / expected - 1.0).abs() < 0.01, "{strchr}");
        // Its size of interest, 4 MiB, lies past both sweeps: predicted at both versions.
        let cost = &strchr["at_interest"];
        assert_eq!(cost["size"], 4 << 20);
        assert_eq!(cost["after"]["extrapolated"], true);
        assert!(cost["after"]["value"].as_f64().unwrap() > cost["before"]["value"].as_f64().unwrap() * 600.0);
        let sentence = cost["sentence"].as_str().unwrap();
        assert!(sentence.starts_with("at 4 MiB: ≈ ") && sentence.contains(" at 0.16.0") && sentence.contains(" at 0.15.2"), "{sentence}");
        let trend: Vec<f64> = strchr["trend"].as_array().unwrap().iter().map(|p| p["slope"].as_f64().unwrap()).collect();
        assert_eq!(trend.len(), 3);
        assert!((trend[0] - 1.0).abs() < 0.05 && (trend[1] - 1.0).abs() < 0.05 && (trend[2] - 2.0).abs() < 0.05, "{trend:?}");
        // strstr swept other sizes at 0.16.0: the ratio is predicted where both fits reach.
        let strstr = row(&v, "strstr");
        assert_eq!(strstr["ratio"]["predicted"], true, "{strstr}");
        assert_eq!(strstr["ratio"]["size"], 2 << 20);

        let wrong = row(&v, "strchrnul");
        assert_eq!((wrong["change"].as_str(), wrong["change_text"].as_str()), (Some("fails"), Some("wrong result")));
        assert_eq!(wrong["after"]["failure_kind"], "wrong_result");
        assert!(wrong["after"]["slope"].is_null() && wrong["ratio"].is_null(), "{wrong}");
        let probe = row(&v, "contract.strchr.remaining");
        assert_eq!((probe["group"].as_str(), probe["change_text"].as_str()), (Some("contract"), Some("O(1) → O(n)")));
        for name in ["memchr", "sqlite-insert"] {
            assert_eq!(row(&v, name)["change"], "unchanged");
        }
        let team = row(&v, "next-token");
        assert_eq!((team["group"].as_str(), team["change"].as_str()), (Some("team"), Some("unchanged")));
        // Over its limit since the lineage's first version: still marked as that finding.
        let finding = row(&v, "json-scan");
        assert_eq!(finding["finding"], true, "{finding}");
        assert_eq!(finding["held_by"]["kind"], "finding");
        assert_eq!(finding["size_unit"], "records");

        let regressions = v["regressions"].as_array().unwrap();
        assert_eq!(regressions.len(), 1, "only what opened or was fixed at 0.16.0: {regressions:?}");
        assert_eq!((regressions[0]["id"].as_i64(), regressions[0]["open"].as_bool()), (Some(regression), Some(true)));
        assert!(regressions[0]["what"].as_str().unwrap().ends_with("0.15.2 → 0.16.0"), "{regressions:?}");

        let controls = v["controls"].as_array().unwrap();
        assert_eq!(controls.len(), 1);
        assert_eq!((controls[0]["control"]["lineage"].as_str(), controls[0]["control"]["version"].as_str()), (Some(CONTROL), Some("1.2.5")));
        let control = controls[0]["headline"].as_str().unwrap();
        assert!(control.starts_with("zig-cc-musl 0.16.0 against musl-gcc 1.2.5: 6 workloads went O(n) → O(n²)"), "{control}");
        assert!(control.contains("1 new"), "json-scan was never measured by the control: {control}");
        assert_eq!(controls[0]["compare_url"], "/compare?a=musl-gcc%401.2.5&b=zig-cc-musl%400.16.0");

        // Against an older version, chosen; and the first version, against nothing.
        let (status, older) = app.get("/api/v1/toolchains/zig-cc-musl/0.16.0?against=0.14.1").await;
        assert_eq!(status, StatusCode::OK, "{older}");
        assert_eq!(older["against"], "0.14.1");
        assert!(older["headline"].as_str().unwrap().starts_with("zig-cc-musl 0.16.0 against 0.14.1: 6 workloads went"), "{older}");
        assert_eq!(older["url"], "/toolchains/zig-cc-musl/0.16.0?against=0.14.1");
        let (status, first) = app.get("/api/v1/toolchains/zig-cc-musl/0.14.1").await;
        assert_eq!(status, StatusCode::OK, "{first}");
        assert!(first["against"].is_null());
        assert_eq!(
            first["headline"],
            "zig-cc-musl 0.14.1, the first version measured: 15 workloads, 1 over their limit from the start (findings)."
        );
        assert_eq!(row(&first, "json-scan")["finding"], true);
        assert!(row(&first, "strchr")["before"].is_null());
        let (_, middle) = app.get("/api/v1/toolchains/zig-cc-musl/0.15.2").await;
        assert_eq!(middle["headline"], "zig-cc-musl 0.15.2 against 0.14.1: 15 workloads unchanged; 1 finding.");
    })
    .await;
}

#[tokio::test]
async fn an_unknown_lineage_or_version_is_404_and_a_bad_against_400_as_json_and_as_a_page() {
    on_both_backends(|db| async move {
        let app = app(db, None).await;
        seed(&app).await;
        for (uri, status, says) in [
            ("/toolchains/nope/1.0", StatusCode::NOT_FOUND, "no toolchain lineage named \"nope\" has reported"),
            (
                "/toolchains/zig-cc-musl/9.9",
                StatusCode::NOT_FOUND,
                "zig-cc-musl has no version \"9.9\" that reported; its versions are 0.14.1, 0.15.2, 0.16.0",
            ),
            (
                "/toolchains/zig-cc-musl/0.16.0?against=9.9",
                StatusCode::BAD_REQUEST,
                "against names no version of zig-cc-musl that reported: \"9.9\"",
            ),
            (
                "/toolchains/zig-cc-musl/0.16.0?against=0.16.0",
                StatusCode::BAD_REQUEST,
                "against names the page's own version 0.16.0; name another version of zig-cc-musl: 0.14.1, 0.15.2",
            ),
            ("/toolchains/musl-gcc/0.16.0", StatusCode::NOT_FOUND, "musl-gcc has no version \"0.16.0\""),
        ] {
            let (got, body) = app.get(&format!("/api/v1{uri}")).await;
            assert_eq!(got, status, "{uri}: {body}");
            assert!(body["error"]["message"].as_str().unwrap().contains(says), "{uri}: {body}");
            let page = text(&app, uri, status).await;
            assert!(page.contains("<!doctype html>") || page.contains("<html"), "{uri} answers a page");
            assert!(page.contains(&says.replace('"', "&#34;").replace('\'', "&#39;")), "{uri}: {page}");
        }
        let bad = text(&app, "/toolchains/zig-cc-musl/0.16.0?format=pdf", StatusCode::BAD_REQUEST).await;
        assert!(bad.contains("format is html or md"), "{bad}");
        // An empty against is the default; a long one is refused without echoing it whole.
        let (status, v) = app.get("/api/v1/toolchains/zig-cc-musl/0.16.0?against=").await;
        assert_eq!((status, v["against"].as_str()), (StatusCode::OK, Some("0.15.2")));
        let long = "9".repeat(5000);
        let (status, body) = app.get(&format!("/api/v1/toolchains/zig-cc-musl/0.16.0?against={long}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(body.to_string().len() < 1000, "{body}");
    })
    .await;
}

#[tokio::test]
async fn the_markdown_release_note_and_the_page_carry_the_same_headline_rows_and_links() {
    on_both_backends(|db| async move {
        let app = app(db, Some("https://sw.example/")).await;
        seed(&app).await;
        let regression = regression_at_0_16(&app).await;
        let (status, headers, md) = fetch(&app, "/toolchains/zig-cc-musl/0.16.0?format=md").await;
        assert_eq!(status, StatusCode::OK, "{md}");
        assert_eq!(headers["content-type"], "text/markdown; charset=utf-8");
        assert_eq!(headers["content-disposition"], "attachment; filename=\"zig-cc-musl-0.16.0.md\"");
        assert!(md.starts_with(&format!("# zig-cc-musl 0.16.0\n\n{HEADLINE}\n")), "{md}");
        assert!(md.contains("Control: zig-cc-musl 0.16.0 against musl-gcc 1.2.5: 6 workloads went"), "{md}");
        assert!(md.contains(&format!("- [Regression #{regression}](<https://sw.example/regressions/{regression}>) (open): ")), "{md}");
        for heading in ["## Built-in workloads", "## Your team's workloads", "## Contract probes"] {
            assert!(md.contains(heading), "{heading}: {md}");
        }
        assert!(md.contains("| Workload | Measure | 0.15.2 | 0.16.0 | Change | Ratio | At the size of interest |"), "{md}");
        let strchr = md.lines().find(|l| l.starts_with("| [strchr]")).unwrap();
        assert!(strchr.starts_with(&format!("| [strchr](<https://sw.example/series/strchr/zig-cc-musl>) (regression #{regression}) | wall time | O(n) · k 1.00 | O(n²) · k 2.00 | O(n) → O(n²) | ")), "{strchr}");
        assert!(strchr.contains("× slower at 2 MiB") && strchr.contains("at 4 MiB: ≈ "), "{strchr}");
        assert!(md.lines().any(|l| l.starts_with("| [strchrnul]") && l.contains("| ✗ wrong result | wrong result |")), "{md}");
        assert!(md.lines().any(|l| l.contains("[strstr]") && l.contains("predicted from both fits")), "{md}");
        // A name from the agent cannot format, link or inject HTML.
        let odd = md.lines().find(|l| l.contains("tok")).unwrap();
        assert!(odd.starts_with("| [&lt;b&gt;tok&lt;/b&gt;\\|\\_x\\_](<https://sw.example/series/%3Cb%3Etok%3C%2Fb%3E%7C_x_/zig-cc-musl>) |"), "{odd}");
        assert!(md.trim_end().ends_with("From slopewatch: <https://sw.example/toolchains/zig-cc-musl/0.16.0>"), "{md}");

        let page = text(&app, "/toolchains/zig-cc-musl/0.16.0", StatusCode::OK).await;
        assert!(page.contains(HEADLINE), "the page's headline is the JSON's");
        assert!(page.find("Open at this version").unwrap() < page.find(HEADLINE).unwrap(), "open regressions come first");
        assert!(page.contains(&format!("href=\"/regressions/{regression}\"")));
        assert!(page.contains("&#60;b&#62;tok&#60;/b&#62;|_x_") && !page.contains("<b>tok</b>"), "names are escaped");
        assert!(page.contains("<svg") && page.contains("<desc>k 1.00 at 0.14.1, 1.00 at 0.15.2, 2.00 at 0.16.0</desc>"), "{page}");
        assert!(page.contains("href=\"/toolchains/zig-cc-musl/0.16.0?format=md\""));
        assert!(page.contains("href=\"/compare?a=zig-cc-musl%400.15.2&#38;b=zig-cc-musl%400.16.0\""), "{page}");
    })
    .await;
}

#[tokio::test]
async fn compare_without_a_workload_shows_every_workload_and_a_comparison_sharing_no_size_is_predicted() {
    on_both_backends(|db| async move {
        let app = app(db, None).await;
        seed(&app).await;
        let all = text(&app, "/compare?a=zig-cc-musl%400.15.2&b=zig-cc-musl%400.16.0", StatusCode::OK).await;
        assert!(all.contains(HEADLINE), "the version page's headline: {all}");
        for name in QUADRATIC.iter().chain(&["strchrnul", "next-token", "contract.strchr.remaining"]) {
            assert!(all.contains(&format!("href=\"/series/{name}/zig-cc-musl\"")), "{name}");
        }
        assert!(all.contains("<option value=\"\" selected>All workloads</option>"));
        assert!(all.contains("href=\"/toolchains/zig-cc-musl/0.16.0?against=0.15.2\""));
        let across = text(&app, "/compare?a=musl-gcc%401.2.5&b=zig-cc-musl%400.16.0", StatusCode::OK).await;
        assert!(
            across.contains("zig-cc-musl 0.16.0 against musl-gcc 1.2.5: 6 workloads went O(n) → O(n²)"),
            "{across}"
        );
        let chooser = text(&app, "/compare", StatusCode::OK).await;
        assert!(chooser.contains("<option value=\"zig-cc-musl@0.16.0\">zig-cc-musl 0.16.0</option>"), "{chooser}");
        text(&app, "/compare?a=nope%401&b=zig-cc-musl%400.16.0", StatusCode::NOT_FOUND).await;
        text(&app, "/compare?a=nope&b=zig-cc-musl%400.16.0", StatusCode::BAD_REQUEST).await;

        // strstr's two sweeps share no size: the headline is predicted at a size both fits cover.
        let one =
            text(&app, "/compare?workload=strstr&a=zig-cc-musl%400.15.2&b=zig-cc-musl%400.16.0", StatusCode::OK).await;
        assert!(one.contains("The two versions share no input size."));
        let headline = one.split("<p class=\"headline\">").nth(1).unwrap().split("</p>").next().unwrap();
        assert!(headline.starts_with("At 2 MiB, zig-cc-musl 0.16.0 is "), "{headline}");
        assert!(headline.contains("× slower than zig-cc-musl 0.15.2 (predicted from both fits"), "{headline}");
        assert!(one.contains("href=\"/toolchains/zig-cc-musl/0.16.0\""), "the compare page links to both versions");
        let (status, data) =
            app.get("/compare/data.json?workload=strstr&a=zig-cc-musl%400.15.2&b=zig-cc-musl%400.16.0").await;
        assert_eq!(status, StatusCode::OK, "{data}");
        assert_eq!((data["ratio"]["size"].as_u64(), data["ratio"]["predicted"].as_bool()), (Some(2 << 20), Some(true)));
        assert!(data["sizes"].as_array().unwrap().is_empty(), "no size measured by both");
    })
    .await;
}

#[tokio::test]
async fn toolchains_series_run_and_regression_pages_link_to_the_version_page() {
    on_both_backends(|db| async move {
        let app = app(db, None).await;
        seed(&app).await;
        let regression = regression_at_0_16(&app).await;
        let toolchains = text(&app, "/toolchains", StatusCode::OK).await;
        for version in ["0.14.1", "0.15.2", "0.16.0"] {
            assert!(toolchains.contains(&format!("href=\"/toolchains/zig-cc-musl/{version}\"")), "{version}");
        }
        assert!(toolchains.contains("href=\"/toolchains/musl-gcc/1.2.5\""));
        let series = text(&app, "/series/strchr/zig-cc-musl", StatusCode::OK).await;
        assert!(
            series.contains("href=\"/toolchains/zig-cc-musl/0.16.0\"")
                && series.contains("href=\"/toolchains/zig-cc-musl/0.14.1\"")
        );
        let (_, runs) = app.get("/api/v1/runs").await;
        let run = runs["runs"].as_array().unwrap().iter().find(|r| r["version"] == "0.16.0").unwrap();
        let page = text(&app, &format!("/runs/{}", run["id"].as_str().unwrap()), StatusCode::OK).await;
        assert!(page.contains("href=\"/toolchains/zig-cc-musl/0.16.0\""), "{page}");
        let page = text(&app, &format!("/regressions/{regression}"), StatusCode::OK).await;
        assert!(page.contains("href=\"/toolchains/zig-cc-musl/0.16.0\""));
    })
    .await;
}
