//! `import` with what the harnesses really write: Google Benchmark's JSON (a committed output,
//! and one made here by compiling and running the benchmark when g++ and libbenchmark-dev are
//! installed), criterion's output directory, and CSV; stored through the real server, and bad
//! files refused before anything is sent.

use crate::helpers::*;
use serde_json::Value;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A real server on a fresh SQLite store, with an ingest token.
struct Stack {
    _server: Server,
    url: String,
    token: String,
    dir: tempfile::TempDir,
}

impl Stack {
    fn start() -> Option<Stack> {
        let Some(bin) = server_binary() else {
            eprintln!("note: the slopewatch server binary is not built (or set SLOPEWATCH_SERVER_BIN); skipped");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let db = format!("sqlite://{}", dir.path().join("import.db").display());
        let token = ingest_token(&bin, &db);
        let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
        let server = start_server(&bin, &addr, &db);
        Some(Stack { _server: server, url: format!("http://{addr}"), token, dir })
    }

    fn spool(&self) -> PathBuf {
        self.dir.path().join("spool")
    }

    /// `import` sending to this server, with quick retries.
    fn import(&self, args: &[&str]) -> Output {
        run(agent()
            .arg("import")
            .args(args)
            .args(["--server", &self.url, "--token", &self.token, "--retry-base", "10ms", "--attempts", "2"])
            .arg("--spool-dir")
            .arg(self.spool()))
    }

    fn get(&self, path: &str) -> Value {
        let mut response = ureq::get(&format!("{}{path}", self.url)).call().unwrap();
        serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap()
    }

    /// The stored run whose id the agent printed.
    fn stored_run(&self, out: &Output) -> Value {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let id = stdout
            .lines()
            .find_map(|l| l.strip_prefix("run ").and_then(|r| r.split_whitespace().next()))
            .unwrap_or_else(|| panic!("no run stored: {}", text(out)));
        self.get(&format!("/api/v1/runs/{id}"))
    }
}

fn gb_fixture() -> PathBuf {
    fixture("google-benchmark/scan.json")
}

fn workload<'a>(run: &'a Value, name: &str) -> &'a Value {
    let all = run["workloads"].as_array().unwrap();
    all.iter().find(|w| w["name"] == name).unwrap_or_else(|| panic!("no workload {name} in {run}"))
}

fn slope(w: &Value) -> f64 {
    w["slope"].as_f64().unwrap_or_else(|| panic!("no slope: {w}"))
}

#[test]
fn a_real_google_benchmark_file_is_stored_with_its_slopes_and_googles_own_verdict() {
    let Some(stack) = Stack::start() else { return };
    let file = gb_fixture();
    let out = stack.import(&["--format", "google-benchmark", "--toolchain", "gcc-glibc=gcc", "--unit", "bytes"]);
    assert_ne!(out.status.code(), Some(0), "no file given: {}", text(&out));
    let out = stack.import(&[
        "--format",
        "google-benchmark",
        file.to_str().unwrap(),
        "--toolchain",
        "gcc-glibc=gcc",
        "--unit",
        "bytes",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("warning: ") && text(&out).contains("BM_Setup"), "the skip is said: {}", text(&out));
    let run = stack.stored_run(&out);
    assert_eq!(run["toolchain"]["name"], "gcc-glibc");
    assert!(run["toolchain"]["libc"].as_str().unwrap().starts_with("glibc "), "probed: {}", run["toolchain"]);
    assert_eq!(run["toolchain"]["flags"], "");
    assert_eq!(run["workloads"].as_array().unwrap().len(), 4);

    let quadratic = workload(&run, "BM_StrlenStrchr");
    assert!((slope(quadratic) - 2.0).abs() < 0.25, "the quadratic family: {}", slope(quadratic));
    assert_eq!(quadratic["metadata"]["google_benchmark.big_o"], "N^2");
    assert_eq!(quadratic["metadata"]["import.format"], "google-benchmark");
    assert_eq!(quadratic["size_unit"], "bytes");
    assert_eq!(quadratic["measurements"][0]["samples_ns"].as_array().unwrap().len(), 3);
    let linear = workload(&run, "BM_Strchr");
    assert!((slope(linear) - 1.0).abs() < 0.25, "the linear family: {}", slope(linear));
    assert_eq!(linear["metadata"]["google_benchmark.big_o"], "N");
    assert!(linear["source_hash"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(workload(&run, "BM_Stride/N/16")["n_sizes"], 3);

    let workloads = stack.get("/api/v1/workloads");
    assert!(workloads.to_string().contains("BM_StrlenStrchr"), "{workloads}");
    assert!(spooled(&stack.spool()).is_empty());
}

#[test]
fn a_bad_or_partial_file_is_refused_naming_the_file_and_place_and_nothing_reaches_the_server() {
    let Some(stack) = Stack::start() else { return };
    let dir = stack.dir.path();
    let real = std::fs::read_to_string(gb_fixture()).unwrap();
    let negative = real.replacen("\"real_time\": ", "\"real_time\": -", 1);
    let nan = {
        let at = real.find("\"real_time\": ").unwrap() + "\"real_time\": ".len();
        let end = at + real[at..].find(',').unwrap();
        format!("{}NaN{}", &real[..at], &real[end..])
    };
    let missing = real.replacen("\"time_unit\": \"ns\"", "\"unit\": \"ns\"", 1);
    let csv_rows = "lex,1024,10\nlex,2048,20\nlex,4096,40\n";
    let cases: Vec<(&str, &str, String, &str)> = vec![
        ("google-benchmark", "truncated.json", real[..real.len() / 3].to_string(), "truncated.json: line "),
        ("google-benchmark", "missing.json", missing, "missing.json: benchmarks[0].time_unit: missing"),
        (
            "google-benchmark",
            "negative.json",
            negative,
            "negative.json: benchmarks[0].real_time: the time must be positive",
        ),
        (
            "google-benchmark",
            "nan.json",
            nan,
            "nan.json: benchmarks[0].real_time: not a number (NaN, infinite or null)",
        ),
        (
            "csv",
            "header.csv",
            format!("name,size,ns\n{csv_rows}"),
            "header.csv: line 1: the header must be workload,size,ns",
        ),
        (
            "csv",
            "word.csv",
            format!("workload,size,ns\n{csv_rows}lex,8192,fast\n"),
            "word.csv: line 5: ns \"fast\" is not a number",
        ),
        (
            "csv",
            "short.csv",
            format!("workload,size,ns\n{csv_rows}scan,1024,5\nscan,2048,9\n"),
            "short.csv: line 5: scan has 2 size(s) (1024, 2048); a slope needs at least 3",
        ),
    ];
    for (format, name, content, expected) in cases {
        let file = dir.join(name);
        std::fs::write(&file, content).unwrap();
        // A good file beside the bad one: nothing of either is sent.
        let good = dir.join("good.csv");
        std::fs::write(&good, "workload,size,ns\nother,1,1\nother,2,2\nother,4,4\n").unwrap();
        let files: Vec<&str> = if format == "csv" {
            vec![good.to_str().unwrap(), file.to_str().unwrap()]
        } else {
            vec![file.to_str().unwrap()]
        };
        let mut args = vec!["--format", format];
        args.extend(files);
        args.extend(["--toolchain", "gcc-glibc=gcc", "--toolchain-version", "12.2.0", "--libc", "glibc 2.36"]);
        let out = stack.import(&args);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{name}: {stderr}");
        assert!(stderr.contains(&format!("{}", file.display())), "{name}: the file is named: {stderr}");
    }
    assert_eq!(stack.get("/api/v1/runs")["runs"].as_array().unwrap().len(), 0, "nothing reached the server");
    assert!(spooled(&stack.spool()).is_empty(), "nothing was spooled");
}

#[test]
fn criterion_output_is_imported_group_by_group() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("run.json");
    let out = run(agent()
        .args(["import", "--format", "criterion"])
        .arg(fixture("criterion"))
        .args([
            "--toolchain",
            "rustc=rustc",
            "--toolchain-version",
            "1.95.0",
            "--libc",
            "glibc 2.36",
            "--unit",
            "bytes",
        ])
        .arg("--out")
        .arg(&out_file));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("skipped (not parameterized): setup"), "{}", text(&out));
    let found = slopes(&out_file);
    let by_name = |n: &str| found.iter().find(|(_, w, _)| w == n).unwrap_or_else(|| panic!("{n}: {found:?}")).2;
    let (linear, quadratic) = (by_name("commas"), by_name("commas-measuring/count-first"));
    assert!((quadratic - 2.0).abs() < 0.25 && (linear - 1.0).abs() < 0.25, "linear {linear}, quadratic {quadratic}");
    let written: Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    assert_eq!(written["toolchain"]["version"], "1.95.0");
}

#[test]
fn a_toolchain_given_in_full_is_not_probed_and_one_given_in_part_is() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    std::fs::write(&csv, "workload,size,ns\nlex,1024,10\nlex,2048,20\nlex,4096,40\n").unwrap();
    let out_file = dir.path().join("run.json");
    let import = |extra: &[&str]| {
        run(agent()
            .args(["import", "--format", "csv"])
            .arg(&csv)
            .args(["--toolchain", "cross=/nonexistent/cc -target aarch64-linux-musl"])
            .args(extra)
            .arg("--out")
            .arg(&out_file))
    };
    let out = import(&["--toolchain-version", "0.16.0", "--libc", "musl 1.2.5 (zig)"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let written: Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    let tc = &written["toolchain"];
    assert_eq!((tc["version"].as_str(), tc["libc"].as_str()), (Some("0.16.0"), Some("musl 1.2.5 (zig)")));
    assert_eq!(
        (tc["target"].as_str(), tc["compiler"].as_str()),
        (Some("aarch64-linux-musl"), Some("/nonexistent/cc -target aarch64-linux-musl"))
    );
    assert_eq!(written["workloads"][0]["size_unit"], "items", "the default unit");

    std::fs::remove_file(&out_file).unwrap();
    let out = import(&["--toolchain-version", "0.16.0"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("toolchain cross"), "{}", text(&out));
    assert!(!out_file.exists());

    let out = run(agent().args(["import", "--format", "csv"]).arg(&csv).args([
        "--toolchain",
        "cross=cc",
        "--toolchain-version",
        "1",
        "--libc",
        "none",
    ]));
    assert_eq!(out.status.code(), Some(2), "neither sent nor written: {}", text(&out));
    assert!(text(&out).contains("--server <SERVER>"), "{}", text(&out));
}

/// g++ and Google Benchmark's headers and library, if this host has them.
fn google_benchmark_compiler() -> Option<PathBuf> {
    let gpp = which("g++")?;
    Path::new("/usr/include/benchmark/benchmark.h").is_file().then_some(gpp)
}

#[test]
fn a_benchmark_compiled_and_run_here_is_imported_quadratic_where_it_is_quadratic() {
    let Some(gpp) = google_benchmark_compiler() else {
        eprintln!("note: g++ or libbenchmark-dev is not installed (scripts/install-test-deps installs them); skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("scan");
    let status = Command::new(gpp)
        .args(["-O2"])
        .arg(fixture("google-benchmark/scan.cc"))
        .arg("-o")
        .arg(&bin)
        .args(["-lbenchmark", "-lpthread"])
        .status()
        .unwrap();
    assert!(status.success(), "scan.cc compiles against libbenchmark");
    let results = dir.path().join("scan.json");
    let out = Command::new(&bin)
        .arg(format!("--benchmark_out={}", results.display()))
        .arg("--benchmark_out_format=json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out_file = dir.path().join("run.json");
    let out = run(agent()
        .args(["import", "--format", "google-benchmark"])
        .arg(&results)
        .args(["--toolchain", "gcc-glibc=g++", "--unit", "bytes", "--out"])
        .arg(&out_file));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let found = slopes(&out_file);
    let names: Vec<&str> = found.iter().map(|(_, w, _)| w.as_str()).collect();
    assert_eq!(names, ["BM_Strchr", "BM_StrlenStrchr", "BM_Stride/N/16", "BM_Stride/N/64"]);
    let (linear, quadratic) = (found[0].2, found[1].2);
    assert!(quadratic > 1.6 && quadratic > linear + 0.5, "linear {linear}, quadratic {quadratic}");
}

#[test]
fn the_command_line_with_import_passes_clap_s_own_checks() {
    use clap::CommandFactory;
    slopewatch_agent::cli::Cli::command().debug_assert();
}
