//! Numbers written one way, in a real browser: a lineage whose `strchr` turns quadratic and whose
//! `strtol` gives a wrong result at its new version, submitted over HTTP to the app on a socket;
//! the regression page and the new version's run page opened in headless Chromium, their sizes
//! and ratios checked in the rendered DOM, the before/after charts' axes and ✗, the run page's
//! class, previous-version and regression columns and its folded samples; the commands' computed
//! style read in the browser; screenshots saved under `target/test-output/screenshots` (or
//! `$SLOPEWATCH_TEST_OUTPUT`).
//!
//! Chromium is required: the test fails without it unless `SLOPEWATCH_SKIP_BROWSER=1`.

use crate::builders::run_of;
use crate::helpers::chromium::{output_dir, Chromium};
use crate::helpers::{Backend, TestApp, TestDb};
use axum::response::Html;
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};
use slopewatch::config::Config;
use slopewatch::{app, AppState};

const LINEAGE: &str = "zig-cc-musl";
/// The largest size measured: 128 KiB, the size the ratio is taken at.
const LARGEST: u64 = 1024 << 7;
/// Where the new version's `strtol` gives a wrong result: 32 KiB.
const FAILED_AT: u64 = 32768;

/// `name` measured at `sizes` sizes doubling from 1 KiB, each costing `cost(size)` nanoseconds.
fn workload(name: &str, sizes: u32, cost: fn(f64) -> f64) -> Value {
    let measurements = crate::builders::measurements(1024, sizes as usize, cost, &[1.0, 1.01, 0.99]);
    json!({"name": name, "size_unit": "bytes", "source_hash": "sha256:00", "measurements": measurements})
}

fn linear(n: f64) -> f64 {
    3.0 * n
}

fn quadratic(n: f64) -> f64 {
    0.1 * n * n
}

async fn submit(test: &TestApp, run: Value) -> String {
    let (status, body) = test.submit(&run).await;
    assert_eq!(status, axum::http::StatusCode::CREATED, "{body}");
    run["run_id"].as_str().unwrap().to_string()
}

/// A page on the app's own origin that loads `page` into itself and writes, as JSON in
/// `<pre id="probe">`, the computed style of every element that shows an agent command and
/// whether each run page's folded samples are closed and hide their table.
fn harness(page: &str) -> String {
    let page = serde_json::to_string(page).unwrap();
    format!(
        r#"<!doctype html><meta charset="utf-8"><title>probe</title><script>
(async () => {{
  const out = {{}};
  try {{
    const html = await (await fetch({page})).text();
    document.open(); document.write(html); document.close();
    for (let i = 0; i < 100; i++) {{
      const sheets = [...document.styleSheets];
      if (sheets.length && sheets.every(s => {{ try {{ return s.cssRules.length > 0; }} catch (_) {{ return false; }} }})) break;
      await new Promise(r => setTimeout(r, 50));
    }}
    out.commands = [...document.querySelectorAll('pre, code')]
      .filter(e => e.textContent.includes('slopewatch-agent bisect'))
      .map(e => {{
        const s = getComputedStyle(e);
        return {{ tag: e.tagName, wordBreak: s.wordBreak, whiteSpace: s.whiteSpace, overflowX: s.overflowX,
                  lines: e.getClientRects().length }};
      }});
    out.details = [...document.querySelectorAll('details.samples')].map(d => {{
      const table = d.querySelector('table');
      const summary = d.querySelector('summary').getBoundingClientRect().height;
      return {{ open: d.open, shown: table ? table.checkVisibility() : null,
                extra: d.getBoundingClientRect().height - summary }};
    }});
  }} catch (e) {{
    out.error = String(e);
  }}
  const p = document.createElement('pre');
  p.id = 'probe';
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
}})();
</script>"#
    )
}

/// What the harness wrote into the DOM Chromium dumped.
fn probed(dom: &str) -> Value {
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + "<pre id=\"probe\">".len();
    let text = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert!(value.get("error").is_none(), "the probe failed: {value}");
    value
}

/// Whether `dom` writes `n` as a bare number anywhere (not inside a longer word, such as an id).
fn writes_raw(dom: &str, n: u64) -> bool {
    let n = n.to_string();
    dom.match_indices(&n).any(|(i, _)| {
        let before = dom[..i].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric());
        let after = dom[i + n.len()..].chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
        !before && !after
    })
}

/// The inline SVGs of a page, each whole.
fn svgs(dom: &str) -> Vec<&str> {
    dom.match_indices("<svg").map(|(i, _)| &dom[i..i + dom[i..].find("</svg>").unwrap() + 6]).collect()
}

/// The rendered table row that holds `text` (the first: a list above may name it too).
fn row_with<'a>(dom: &'a str, text: &str) -> &'a str {
    let in_row = |at: &usize| dom[..*at].rfind("<tr") > dom[..*at].rfind("</tr>").or(dom[..*at].rfind("<table"));
    let at = dom.match_indices(text).map(|(i, _)| i).find(in_row).unwrap_or_else(|| panic!("a row shows {text}"));
    let start = dom[..at].rfind("<tr").unwrap();
    &dom[start..at + dom[at..].find("</tr>").unwrap()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_and_run_pages_write_sizes_and_ratios_one_way_in_chromium() {
    let Some(chromium) = Chromium::required() else { return };
    let shots = output_dir();
    let test = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    let good = vec![workload("strchr", 8, linear), workload("strtol", 8, linear)];
    submit(&test, run_of(LINEAGE, "0.15.2", "build-01", good)).await;
    let mut wrong = workload("strtol", 5, linear);
    wrong["failure"] = json!({"kind": "wrong_result", "size": FAILED_AT, "got": "-1", "expected": "4681",
                              "detail": "strtol left the end pointer past the blanks"});
    let run_id =
        submit(&test, run_of(LINEAGE, "0.16.0", "build-01", vec![workload("strchr", 8, quadratic), wrong])).await;
    test.intake.summarize_pending().await.unwrap();
    let regressions = test.db.store.regressions(None).await.unwrap();
    let (regression, members) = regressions.iter().find(|(r, _)| r.version == "0.16.0").expect("0.16.0 regressed");
    let reasons: Vec<(&str, &str)> = members.iter().map(|m| (m.workload.as_str(), m.reason.as_str())).collect();
    assert!(reasons.contains(&("strchr", "slope")) && reasons.contains(&("strtol", "failure")), "{reasons:?}");

    let regression_path = format!("/regressions/{}", regression.id);
    let run_path = format!("/runs/{run_id}");
    let probe = |page: String| get(move || std::future::ready(Html(harness(&page))));
    let probes = Router::new()
        .route("/probe/regression", probe(regression_path.clone()))
        .route("/probe/run", probe(run_path.clone()));
    let base = crate::helpers::serve(app(AppState::new(test.db.store.clone(), Config::default())).merge(probes)).await;

    // The regression page: sizes in KiB, the ratio to three significant figures, never raw.
    let ratio = quadratic(LARGEST as f64) / linear(LARGEST as f64);
    let dom = chromium.dom(&format!("{base}{regression_path}"));
    for raw in [LARGEST, FAILED_AT] {
        assert!(!writes_raw(&dom, raw), "the regression page writes {raw} raw");
    }
    assert!(!dom.contains(&format!("{ratio:.1}×")), "the ratio to a tenth");
    assert_eq!(slopewatch::format::factor(ratio), "4,370×");
    let strchr = row_with(&dom, ">strchr<");
    assert!(strchr.contains(">4,370×<") && strchr.contains(">128 KiB<"), "ratio and size: {strchr}");
    assert!(strchr.contains("O(n) → O(n²)"), "{strchr}");
    assert!(dom.contains("Magnitude: 4,370× the time"), "the magnitude by the same rule");
    let list = chromium.dom(&format!("{base}/regressions"));
    assert!(list.contains(">4,370×<") && !list.contains(&format!("{ratio:.1}×")), "and in the list");
    let strtol = row_with(&dom, ">strtol<");
    assert!(strtol.contains("wrong result at 32 KiB: got -1, expected 4681"), "{strtol}");
    assert!(dom.contains("strtol failed at 0.16.0: wrong result at 32 KiB"), "the timeline too");

    // Its before/after charts: values on both axes, and the failed version a ✗ with what broke.
    let charts = svgs(&dom);
    assert_eq!(charts.len(), 2, "one chart per workload");
    for svg in &charts {
        assert!(svg.contains(">size, bytes (log)<") && svg.contains(">time (log)<"), "axis titles: {svg}");
        assert!(svg.contains(">128 KiB<") && svg.matches(" KiB</text>").count() >= 3, "sizes on x: {svg}");
        assert!(svg.matches("class=\"y-tick\"").count() >= 2, "values on y: {svg}");
        assert!(!svg.contains("131072") && !svg.contains(">1024<"), "no raw size on an axis: {svg}");
        assert!(svg.contains("<desc>"), "a text alternative: {svg}");
    }
    let strchr_chart = charts.iter().find(|s| s.contains("aria-label=\"strchr\"")).unwrap();
    assert_eq!(strchr_chart.matches("<polyline").count(), 2, "both versions ran: {strchr_chart}");
    assert!(strchr_chart.contains(" ms<") || strchr_chart.contains(" s<"), "times on the y axis: {strchr_chart}");
    let strtol_chart = charts.iter().find(|s| s.contains("aria-label=\"strtol\"")).unwrap();
    assert!(strtol_chart.contains(">✗</text>"), "the failed version is a cross: {strtol_chart}");
    assert!(
        strtol_chart.contains("<title>0.16.0: ✗ wrong result at 32 KiB: got -1, expected 4681</title>"),
        "the cross says what broke: {strtol_chart}"
    );
    assert!(strtol_chart.contains(">✗ 0.16.0<"), "and the legend says which version: {strtol_chart}");

    // The bisect commands: one line each that scrolls, never broken inside an argument.
    let probe = probed(&chromium.dom(&format!("{base}/probe/regression")));
    let commands = probe["commands"].as_array().unwrap();
    assert!(commands.len() >= 2, "both commands: {probe}");
    for c in commands {
        assert_ne!(c["wordBreak"], "break-all", "{c}");
        if c["tag"] == "PRE" {
            assert_eq!((&c["whiteSpace"], &c["overflowX"]), (&json!("pre"), &json!("auto")), "{c}");
        } else {
            assert_eq!(c["lines"], 1, "a command is laid out on one line: {c}");
        }
    }
    chromium.screenshot(&format!("{base}{regression_path}"), &shots.join("numbers-regression.png"), (1280, 2200));
    chromium.screenshot(&format!("{base}{regression_path}"), &shots.join("numbers-regression-phone.png"), (390, 2400));

    // The run page: the class, the previous version, the regression, and the samples folded.
    let dom = chromium.dom(&format!("{base}{run_path}"));
    for header in
        ["<th scope=\"col\">Class</th>", "<th scope=\"col\">Previous version</th>", "<th scope=\"col\">Regression</th>"]
    {
        assert!(dom.contains(header), "the run page has {header}");
    }
    let link = format!("<a href=\"{regression_path}\">regression #{}</a>", regression.id);
    let strchr = row_with(&dom, ">strchr</a></th>");
    assert!(strchr.contains(">O(n²)<"), "its class: {strchr}");
    assert!(strchr.contains("O(n) · k 1.00") && strchr.contains("0.15.2"), "the previous version: {strchr}");
    assert!(strchr.contains(&link) && strchr.contains("opened at this version"), "{strchr}");
    let strtol = row_with(&dom, ">strtol</a></th>");
    assert!(strtol.contains("wrong result") && strtol.contains(&link), "{strtol}");
    assert!(strtol.contains("O(n) · k 1.00"), "a failed workload shows its previous version too: {strtol}");
    assert!(dom.contains("<details class=\"samples\">") && !dom.contains("<details class=\"samples\" open"), "folded");
    assert!(dom.contains("at 32 KiB") && !writes_raw(&dom, FAILED_AT), "the failure's size");
    let probe = probed(&chromium.dom(&format!("{base}/probe/run")));
    let details = probe["details"].as_array().unwrap();
    assert_eq!(details.len(), 2, "each workload's samples: {probe}");
    for d in details {
        assert_eq!((&d["open"], &d["shown"]), (&json!(false), &json!(false)), "closed, its table hidden: {d}");
        assert!(d["extra"].as_f64().unwrap() < 1.0, "a closed fold is as tall as its summary: {d}");
    }
    chromium.screenshot(&format!("{base}{run_path}"), &shots.join("numbers-run.png"), (1280, 1400));
    eprintln!("screenshots in {}", shots.display());
}
