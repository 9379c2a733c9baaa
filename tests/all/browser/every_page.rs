//! The dashboard in a real browser: the server on a socket with real agent runs in it, every page
//! opened in headless Chromium, its content and charts checked in the rendered DOM, and a
//! screenshot of each saved under `target/test-output/screenshots` (or `$SLOPEWATCH_TEST_OUTPUT`).
//!
//! Chromium is required: the test fails without it unless `SLOPEWATCH_SKIP_BROWSER=1`.

use crate::builders::RunShape;
use crate::helpers::chromium::{output_dir, Chromium};
use crate::helpers::{create_token, Backend, TestDb};
use slopewatch::config::Config;
use slopewatch::store::Scope;
use slopewatch::{app, AppState};
use slopewatch_core::wire::Metric;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The agent binary of this workspace, built if it is not there yet.
fn agent_binary() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let bin = target.join("debug/slopewatch-agent");
    if !bin.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "slopewatch-agent", "--bin", "slopewatch-agent"])
            .current_dir(root)
            .status()
            .unwrap();
        assert!(status.success(), "building the agent failed");
    }
    bin
}

/// Checks every chart became an inline SVG with drawn lines and no image stayed broken.
fn assert_charts_rendered(page: &str, dom: &str, expected: usize) {
    let svgs: Vec<&str> = dom.split("<svg").skip(1).map(|s| &s[..s.find("</svg>").unwrap_or(s.len())]).collect();
    let drawn = svgs.iter().filter(|s| s.contains("<polyline") && s.contains("role=\"img\"")).count();
    assert_eq!(drawn, expected, "{page}: {drawn} of {expected} charts drawn");
    assert!(!dom.contains("<img"), "{page}: an image was left unrendered");
    for svg in svgs {
        assert!(
            svg.contains("<title>") && svg.contains("<desc>"),
            "{page}: charts carry a title and a text alternative"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_renders_in_chromium_with_real_agent_data() {
    let Some(chromium) = Chromium::required() else { return };
    let shots = output_dir();

    let db = TestDb::new(Backend::Sqlite).await;
    let token = create_token(&db.store, "browser-test", Scope::Ingest).await;
    let base = crate::helpers::serve(app(AppState::new(db.store.clone(), Config::default()))).await;

    // Real measurements: the agent builds and times the workloads with gcc and, where the Zig
    // releases are installed, with each of them; then submits over HTTP.
    let agent = agent_binary();
    let scratch = tempfile::tempdir().unwrap();
    let cache = output_dir().parent().unwrap().join("agent-cache");
    let mut toolchains = vec!["gcc-glibc=gcc".to_string()];
    for version in ["0.14.1", "0.15.2", "0.16.0"] {
        let zig = PathBuf::from(format!("/opt/slopewatch-zig/{version}/ziglang/zig"));
        if zig.is_file() {
            toolchains.push(format!("zig-cc-musl={} cc -target x86_64-linux-musl", zig.display()));
        }
    }
    // One lineage per agent run: the Zig releases are versions of one lineage.
    for toolchain in toolchains {
        let mut measure = Command::new(&agent);
        measure
            .args(["run", "--server", &base, "--token", &token, "--toolchain", &toolchain])
            .args(["--workloads", "strchr,strspn,memchr", "--max-size", "2M", "--size-budget", "60ms", "--reps", "3"])
            .arg("--cache-dir")
            .arg(&cache)
            .arg("--spool-dir")
            .arg(scratch.path().join("spool"));
        let out = tokio::task::spawn_blocking(move || measure.output().unwrap()).await.unwrap();
        let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "agent run with {toolchain}: {text}");
    }

    // History for the trend: earlier versions of two lineages, submitted by the agent too. They
    // span every size a real sweep above can stop at (a quadratic libc on a loaded host stops
    // rising early and halves down to small sizes), so the comparison always has a common size.
    let mut files = Vec::new();
    for (i, (lineage, version, slope)) in [
        ("musl-gcc", "1.2.3", 1.0),
        ("musl-gcc", "1.2.4", 1.01),
        ("musl-gcc", "1.2.5", 1.0),
        ("clang-glibc", "15.0.7", 1.0),
        ("clang-glibc", "16.0.6", 1.22),
        ("clang-glibc", "17.0.6", 1.31),
        ("clang-glibc", "18.1.8", 1.0),
    ]
    .into_iter()
    .enumerate()
    {
        let mut run = RunShape::new(lineage, version)
            .host(&format!("build-0{}", i % 2 + 1))
            .slope(slope)
            .workloads(2)
            .first_size(64)
            .sizes(16)
            .json();
        run["workloads"][0]["name"] = "strchr".into();
        run["workloads"][1]["name"] = "memchr".into();
        let (libc, compiler) = if lineage == "musl-gcc" { ("musl 1.2.3", "musl-gcc") } else { ("glibc 2.36", "clang") };
        run["toolchain"]["libc"] = libc.into();
        run["toolchain"]["compiler"] = compiler.into();
        run["toolchain"]["target"] = "x86_64-linux-gnu".into();
        let file = scratch.path().join(format!("history-{i}.json"));
        std::fs::write(&file, serde_json::to_vec(&run).unwrap()).unwrap();
        files.push(file);
    }
    let mut submit = Command::new(&agent);
    submit.arg("submit").args(&files).args(["--server", &base, "--token", &token]);
    submit.arg("--spool-dir").arg(scratch.path().join("spool"));
    let out = tokio::task::spawn_blocking(move || submit.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "agent submit: {}", String::from_utf8_lossy(&out.stderr));

    // The run page shows a run the agent measured, not a made-up one.
    let runs = db.store.recent_runs(50).await.unwrap();
    let measured = runs.iter().find(|r| r.lineage == "zig-cc-musl").unwrap_or(&runs[runs.len() - 1]);
    let zig = db.store.series("strchr", Metric::Wall, "zig-cc-musl").await.unwrap();
    let (a, b) = match zig.as_slice() {
        [.., last] => (("musl-gcc", "1.2.5"), ("zig-cc-musl", last.version.clone())),
        [] => (
            ("musl-gcc", "1.2.5"),
            ("gcc-glibc", db.store.series("strchr", Metric::Wall, "gcc-glibc").await.unwrap()[0].version.clone()),
        ),
    };
    let compare = format!("/compare?workload=strchr&a={}%40{}&b={}%40{}", a.0, a.1, b.0, b.1);
    let pages: Vec<(&str, String, usize, &[&str])> = vec![
        (
            "overview",
            "/".into(),
            0,
            &["Growth of cost by toolchain", "id=\"regressions\"", "last run ", "Latest runs", "gcc-glibc", "strchr"],
        ),
        (
            "series-zig-strchr",
            if zig.is_empty() { "/series/strchr/musl-gcc".into() } else { "/series/strchr/zig-cc-musl".into() },
            2,
            &["Slope across versions", "95% CI", "Median at"],
        ),
        ("series-clang-strchr", "/series/strchr/clang-glibc".into(), 2, &["18.1.8", "watch"]),
        ("series-gcc-memchr", "/series/memchr/gcc-glibc".into(), 2, &["gcc-glibc", "Export"]),
        ("compare", compare, 1, &["Time at each size", "than musl-gcc 1.2.5"]),
        ("run", format!("/runs/{}", measured.id), 0, &["Workloads", "Local slope to next", "Compiler"]),
        ("toolchains", "/toolchains".into(), 0, &["gcc-glibc", "musl-gcc", "clang-glibc"]),
        ("hosts", "/hosts".into(), 0, &["build-01", "Toolchain versions"]),
    ];
    for (name, path, charts, texts) in &pages {
        let url = format!("{base}{path}");
        let dom = chromium.dom(&url);
        for text in *texts {
            assert!(dom.contains(text), "{name} ({url}) shows {text:?}");
        }
        assert_charts_rendered(name, &dom, *charts);
        chromium.screenshot(&url, &shots.join(format!("{name}.png")), (1280, 1700));
    }
    // Readable on a phone too.
    chromium.screenshot(&format!("{base}/"), &shots.join("overview-phone.png"), (390, 1200));
    chromium.screenshot(&format!("{base}{}", pages[1].1), &shots.join("series-phone.png"), (390, 1600));
    if !zig.is_empty() {
        let latest = zig.last().unwrap();
        eprintln!("zig-cc-musl {} strchr slope {:.2} across {} versions", latest.version, latest.slope, zig.len());
    }
    eprintln!("screenshots in {}", shots.display());
}
