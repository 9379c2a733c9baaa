//! A regression of an aarch64 series measured under emulation on x86-64 hosts, in a real browser:
//! its page, rendered in headless Chromium, names the architecture and says what emulation means
//! for the numbers; a screenshot is saved under `target/test-output/screenshots` (or
//! `$SLOPEWATCH_TEST_OUTPUT`).
//!
//! Chromium is required: the test fails without it unless `SLOPEWATCH_SKIP_BROWSER=1`.

use crate::architectures::seed;
use crate::helpers::chromium::{output_dir, Chromium};
use crate::helpers::{Backend, TestApp, TestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regression_page_names_its_architecture_and_the_emulation_in_chromium() {
    let Some(chromium) = Chromium::required() else { return };
    let app = TestApp::new(TestDb::new(Backend::Sqlite).await).await;
    let id = seed(&app, "x86_64").await;
    let base = crate::helpers::serve(app.router.clone()).await;
    let url = format!("{base}/regressions/{id}");
    let dom = chromium.dom(&url);
    let line = dom.find("<p class=\"sw-arch\">").map(|at| &dom[at..at + dom[at..].find("</p>").unwrap()]);
    let line = line.unwrap_or_else(|| panic!("the page has its architecture line: {dom}"));
    assert!(line.contains("Architecture: aarch64"), "{line}");
    assert!(
        line.contains("measured under emulation on x86_64 hosts: growth (slopes, classes) holds, absolute times are the emulator's"),
        "{line}"
    );
    assert!(dom.contains("zig-cc-musl (aarch64)"), "the heading names the qualified lineage");
    chromium.screenshot(&url, &output_dir().join("regression-emulated.png"), (1400, 1000));
}
