//! A toolchain version's page in a real browser: a server on a socket seeded with three Zig
//! releases (0.16.0 taking six workloads quadratic and giving a wrong result on one) and a control,
//! the version page and `/compare` across every workload opened in headless Chromium, their
//! headline, rows and trends (with their text alternatives) checked in the rendered DOM, the links
//! to the page from `/toolchains`, a series, a run and a regression followed, and screenshots at
//! 1400×1000 saved under `target/test-output/screenshots` (or `$SLOPEWATCH_TEST_OUTPUT`).
//!
//! Chromium is required: the test fails without it unless `SLOPEWATCH_SKIP_BROWSER=1`.

use crate::builders::releases::{regression_at_0_16, seed, CONTROL, HEADLINE, QUADRATIC};
use crate::helpers::chromium::{output_dir, Chromium};
use crate::helpers::{Backend, TestApp, TestDb};
use slopewatch::config::Config;

const SIZE: (u32, u32) = (1400, 1000);
const PAGE: &str = "/toolchains/zig-cc-musl/0.16.0";

/// The rendered `<tr>` whose row header links to `href`.
fn row_linking<'a>(dom: &'a str, href: &str) -> &'a str {
    let at = dom.find(&format!("href=\"{href}\"")).unwrap_or_else(|| panic!("a row links to {href}"));
    let start = dom[..at].rfind("<tr").unwrap();
    &dom[start..at + dom[at..].find("</tr>").unwrap()]
}

/// Checks the page at `from`, rendered, links to the version page.
fn assert_links_to_the_page(chromium: &Chromium, base: &str, from: &str) {
    let dom = chromium.dom(&format!("{base}{from}"));
    assert!(dom.contains(&format!("href=\"{PAGE}\"")), "{from} links to {PAGE}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_page_and_compare_across_workloads_render_in_chromium_with_their_links() {
    let Some(chromium) = Chromium::required() else { return };
    let shots = output_dir();
    let config = Config { controls: vec![CONTROL.into()], ..Config::default() };
    let app = TestApp::with_config(TestDb::new(Backend::Sqlite).await, config).await;
    seed(&app).await;
    let regression = regression_at_0_16(&app).await;
    let base = crate::helpers::serve(app.router.clone()).await;

    // The page: open regressions first, the headline, every workload's row with its trend.
    let url = format!("{base}{PAGE}");
    let dom = chromium.dom(&url);
    assert!(dom.contains(HEADLINE), "the headline: {dom}");
    let open = dom.find("Open at this version").expect("open regressions are listed");
    assert!(open < dom.find(HEADLINE).unwrap(), "at the top");
    assert!(dom.contains(&format!("href=\"/regressions/{regression}\"")));
    assert!(dom.contains("Control: zig-cc-musl 0.16.0 against musl-gcc 1.2.5: 6 workloads went O(n) → O(n²)"));
    for heading in ["Built-in workloads", "Your team's workloads", "Contract probes"] {
        assert!(dom.contains(heading), "{heading}");
    }
    for name in QUADRATIC {
        let row = row_linking(&dom, &format!("/series/{name}/zig-cc-musl"));
        assert!(row.contains("O(n) · k 1.00") && row.contains("O(n²) · k 2.00"), "{name}: {row}");
        assert!(row.contains("class=\"band regression\">O(n) → O(n²)</span>"), "{name}: {row}");
        assert!(row.contains(&format!("Regression #{regression}")), "{name} is held by the regression: {row}");
    }
    let wrong = row_linking(&dom, "/series/strchrnul/zig-cc-musl");
    assert!(wrong.contains("✗ wrong result") && wrong.contains("class=\"band failed\""), "{wrong}");
    let finding = row_linking(&dom, "/series/json-scan/zig-cc-musl");
    assert!(finding.contains("class=\"finding-marker\">finding</span>"), "{finding}");
    let strstr = row_linking(&dom, "/series/strstr/zig-cc-musl");
    assert!(strstr.contains("predicted from both fits"), "{strstr}");
    // The trend: drawn on the server, inline, with a title and its slopes in words.
    let strchr = row_linking(&dom, "/series/strchr/zig-cc-musl");
    let svg = &strchr[strchr.find("<svg").expect("a trend")..];
    assert!(svg.contains("role=\"img\"") && svg.contains("<polyline"), "{svg}");
    assert!(svg.contains("<title>Slope of strchr across zig-cc-musl versions</title>"), "{svg}");
    assert!(svg.contains("<desc>k 1.00 at 0.14.1, 1.00 at 0.15.2, 2.00 at 0.16.0</desc>"), "{svg}");
    chromium.screenshot(&url, &shots.join("version.png"), SIZE);

    // Against another version, and the lineage's first version.
    let older = chromium.dom(&format!("{url}?against=0.14.1"));
    assert!(older.contains("zig-cc-musl 0.16.0 against 0.14.1: 6 workloads went O(n) → O(n²)"));
    let first = chromium.dom(&format!("{base}/toolchains/zig-cc-musl/0.14.1"));
    assert!(first.contains("zig-cc-musl 0.14.1, the first version measured: 15 workloads, 1 over their limit"));
    chromium.screenshot(&format!("{base}/toolchains/zig-cc-musl/0.14.1"), &shots.join("version-first.png"), SIZE);

    // /compare with no workload: the same rows for the two versions chosen, linked from the page.
    let compare = "/compare?a=zig-cc-musl%400.15.2&b=zig-cc-musl%400.16.0";
    assert!(dom.contains(&format!("href=\"{}\"", compare.replace('&', "&amp;"))), "the page links to it");
    let all = chromium.dom(&format!("{base}{compare}"));
    assert!(all.contains(HEADLINE), "{all}");
    for name in QUADRATIC {
        assert!(row_linking(&all, &format!("/series/{name}/zig-cc-musl")).contains("O(n) → O(n²)"), "{name}");
    }
    assert!(all.contains("<desc>k 1.00 at 0.14.1, 1.00 at 0.15.2, 2.00 at 0.16.0</desc>"));
    chromium.screenshot(&format!("{base}{compare}"), &shots.join("compare-all-workloads.png"), SIZE);
    let across = "/compare?a=musl-gcc%401.2.5&b=zig-cc-musl%400.16.0";
    assert!(chromium.dom(&format!("{base}{across}")).contains("zig-cc-musl 0.16.0 against musl-gcc 1.2.5"));

    // The page is linked from /toolchains, a series, a run of the version and its regression.
    let runs = app.db.store.recent_runs(50).await.unwrap();
    let run = runs.iter().find(|r| r.version == "0.16.0").expect("a run of 0.16.0");
    for from in [
        "/toolchains".to_string(),
        "/series/strchr/zig-cc-musl".to_string(),
        format!("/runs/{}", run.id),
        format!("/regressions/{regression}"),
    ] {
        assert_links_to_the_page(&chromium, &base, &from);
    }
    eprintln!("screenshots in {}", shots.display());
}
