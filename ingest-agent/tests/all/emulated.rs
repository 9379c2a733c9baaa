//! Targets the host cannot run: aarch64 builds of real toolchains, run under QEMU's user-mode
//! emulator (Debian's qemu-user), found on PATH or named with `--runner`. Growth survives the
//! emulator; the catalogue's guard pages still catch a read past a bound; a counted measure is
//! refused; and through a real server the aarch64 series stays apart from the x86-64 one.

use crate::contracts::{cell, contracts};
use crate::helpers::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Zig 0.15.2 and 0.16.0, and qemu-aarch64 to run what they build for aarch64.
fn zigs_and_qemu() -> Option<(PathBuf, PathBuf)> {
    if which("qemu-aarch64").is_none() {
        eprintln!("skipped: no qemu-aarch64 (Debian qemu-user)");
        return None;
    }
    let zigs = zigs();
    let find = |v: &str| zigs.iter().find(|z| z.to_string_lossy().contains(v)).cloned();
    match (find("0.15.2"), find("0.16.0")) {
        (Some(old), Some(new)) => Some((old, new)),
        _ => {
            eprintln!("skipped: Zig 0.15.2 and 0.16.0 are not both installed");
            None
        }
    }
}

fn aarch64(name: &str, zig: &Path) -> String {
    format!("{name}={} cc -target aarch64-linux-musl", zig.display())
}

/// The runs `--out` wrote, one or several.
fn runs(path: &Path) -> Vec<Value> {
    match serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap() {
        Value::Array(runs) => runs,
        run => vec![run],
    }
}

#[test]
fn zig_aarch64_builds_run_under_qemu_found_on_path_and_keep_their_growth() {
    let Some((old, new)) = zigs_and_qemu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("runs.json");
    let out = run(agent()
        .args(["measure", "--workloads", "strchr", "--toolchain", &aarch64("a64-0.15.2", &old)])
        .args(["--toolchain", &aarch64("a64-0.16.0", &new), "--cache-dir"])
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&out_file));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("aarch64-linux-musl, run by") && said.contains("qemu-aarch64 (found on PATH)"), "{said}");
    assert!(said.contains("aarch64 binaries run under an emulator: growth (slopes, classes) holds"), "{said}");
    let slopes = slopes(&out_file);
    let slope = |tc: &str| slopes.iter().find(|(t, w, _)| t == tc && w == "strchr").map(|s| s.2).unwrap();
    assert!(slope("a64-0.16.0") > 1.5, "0.16.0's strchr measures the rest of the string: {slopes:?}");
    assert!(slope("a64-0.15.2") < 1.5, "0.15.2's is linear: {slopes:?}");
    for r in runs(&out_file) {
        assert_eq!(r["toolchain"]["target"], "aarch64-linux-musl", "{r}");
        assert_eq!(r["host"]["arch"], "x86_64", "{r}");
    }
}

#[test]
fn the_catalogues_guard_pages_catch_a_read_past_the_bound_under_qemu() {
    let Some((old, new)) = zigs_and_qemu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let toolchains = [aarch64("a64-0.15.2", &old), aarch64("a64-0.16.0", &new)];
    // Each probe of a bound puts the bytes against an unreadable page: a read past it crashes.
    let probes = "contract.memchr.remaining,contract.strncmp.bound,contract.strnlen.bound,contract.strchr.remaining";
    let (said, cells) = contracts(dir.path(), &toolchains, &["--max-size", "64K"], probes);
    for probe in ["contract.memchr.remaining", "contract.strncmp.bound"] {
        assert_eq!(cell(&cells, probe, "a64-0.16.0"), "✗ crashed", "{probe} at 0.16.0\n{said}");
        assert!(cell(&cells, probe, "a64-0.15.2").starts_with("held"), "{probe} at 0.15.2\n{said}");
    }
    assert!(said.contains("a64-0.16.0/contract.strncmp.bound: crashed at"), "{said}");
    assert!(said.contains("read past its bound of"), "the guard page told the read past the bound: {said}");
    assert!(cell(&cells, "contract.strnlen.bound", "a64-0.16.0").starts_with("held"), "{said}");
    assert!(cell(&cells, "contract.strchr.remaining", "a64-0.16.0").starts_with("OVER"), "{said}");
    assert!(cell(&cells, "contract.strchr.remaining", "a64-0.15.2").starts_with("held"), "{said}");
}

#[test]
fn without_a_runner_the_error_names_the_target_the_package_and_the_flag() {
    let Some((_, new)) = zigs_and_qemu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = run(agent()
        .env("PATH", dir.path())
        .args(["check", "--workloads", "strchr", "--toolchain", &aarch64("a64", &new), "--cache-dir"])
        .arg(dir.path().join("cache")));
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("builds for aarch64 (aarch64-linux-musl), which this x86_64 host cannot run"), "{said}");
    assert!(said.contains("apt-get install qemu-user") && said.contains("--runner a64=qemu-aarch64"), "{said}");

    // Named, it is used, wherever it is.
    let qemu = which("qemu-aarch64").unwrap();
    let runner = format!("a64={}", qemu.display());
    let out = run(agent()
        .env("PATH", dir.path())
        .args(["check", "--workloads", "strchr", "--toolchain", &aarch64("a64", &new), "--runner", &runner])
        .args(["--max-size", "64K", "--cache-dir"])
        .arg(dir.path().join("cache")));
    let said = text(&out);
    assert!(said.contains(&format!("run by {} (as configured)", qemu.display())), "{said}");
    assert!(said.contains("slope over 1.5: a64/strchr"), "{said}");
}

#[test]
fn instructions_counted_under_an_emulator_are_refused() {
    let Some((_, new)) = zigs_and_qemu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = run(agent()
        .args(["check", "--workloads", "strchr", "--toolchain", &aarch64("a64", &new)])
        .args(["--measure", "instructions", "--counter", "valgrind", "--cache-dir"])
        .arg(dir.path().join("cache")));
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("would be the emulator's on this host, not the target's"), "{said}");
    assert!(said.contains("--measure wall"), "{said}");
}

#[test]
fn debians_cross_gcc_links_glibc_dynamically_and_runs_with_its_sysroot() {
    if which("aarch64-linux-gnu-gcc").is_none() || which("qemu-aarch64").is_none() {
        eprintln!("skipped: no aarch64-linux-gnu-gcc (Debian gcc-aarch64-linux-gnu) or qemu-aarch64");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Found by itself, with the sysroot of Debian's cross packages; and as a config file names it.
    let config = dir.path().join("slopewatch.toml");
    std::fs::write(
        &config,
        "[[toolchains]]\nname = \"gcc-a64-given\"\ncc = \"aarch64-linux-gnu-gcc\"\n\
         runner = \"qemu-aarch64 -L /usr/aarch64-linux-gnu\"\n",
    )
    .unwrap();
    let out_file = dir.path().join("runs.json");
    let out = run(agent()
        .args(["measure", "--workloads", "strchr", "--toolchain", "gcc-a64=aarch64-linux-gnu-gcc", "--config"])
        .arg(&config)
        .args(["--max-size", "256K", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&out_file));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("-L /usr/aarch64-linux-gnu (found on PATH)"), "{said}");
    assert!(said.contains("run by qemu-aarch64 -L /usr/aarch64-linux-gnu (as configured)"), "{said}");
    let runs = runs(&out_file);
    assert_eq!(runs.len(), 2, "{said}");
    for r in &runs {
        assert_eq!(r["toolchain"]["target"], "aarch64-linux-gnu", "{r}");
        assert!(r["toolchain"]["libc"].as_str().unwrap().starts_with("glibc 2."), "{r}");
        let w = &r["workloads"][0];
        assert!(w["failure"].is_null() && w["measurements"].as_array().unwrap().len() >= 3, "{w}");
    }
}

#[test]
fn through_a_real_server_the_aarch64_series_is_apart_and_its_regression_names_the_architecture() {
    let Some((old, new)) = zigs_and_qemu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some((_server, url, token)) = real_server(dir.path(), &[]) else { return };
    let submit = |toolchain: String| {
        let out = run(agent()
            .args(["run", "--toolchain", &toolchain, "--workloads", "strchr", "--max-size", "256K"])
            .args(["--server", &url, "--token", &token, "--cache-dir"])
            .arg(dir.path().join("cache"))
            .arg("--spool-dir")
            .arg(dir.path().join("spool")));
        assert!(out.status.code().is_some_and(|c| c <= 1), "{toolchain}: {}", text(&out));
    };
    submit(aarch64("zig", &old));
    submit(aarch64("zig", &new));
    // The same lineage built for x86-64, at the bad version: a series of its own.
    submit(format!("zig={} cc -target x86_64-linux-musl", new.display()));

    let series = |lineage: &str| {
        let path = format!("/api/v1/series?workload=strchr&toolchain={}", lineage.replace(' ', "%20"));
        get_json(&url, &path.replace('(', "%28").replace(')', "%29"))
    };
    let a64 = series("zig (aarch64)");
    let versions: Vec<&str> =
        a64["versions"].as_array().unwrap().iter().filter_map(|v| v["version"].as_str()).collect();
    assert_eq!(versions, ["0.15.2", "0.16.0"], "{a64}");
    let x64 = series("zig");
    let versions: Vec<&str> =
        x64["versions"].as_array().unwrap().iter().filter_map(|v| v["version"].as_str()).collect();
    assert_eq!(versions, ["0.16.0"], "the x86-64 series has only its own run: {x64}");

    let began = std::time::Instant::now();
    let (regression, finding) = loop {
        let list = get_json(&url, "/api/v1/regressions");
        let of = |lineage: &str| {
            list["regressions"].as_array().unwrap().iter().find(|r| r["regression"]["lineage"] == lineage).cloned()
        };
        if let (Some(r), Some(f)) = (of("zig (aarch64)"), of("zig")) {
            break (r, f);
        }
        assert!(began.elapsed() < std::time::Duration::from_secs(30), "no regression of each series: {list}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    // aarch64 got worse from 0.15.2 to 0.16.0; x86-64 has one version, over from its first.
    assert_eq!(regression["kind"], "regression", "{regression}");
    assert_eq!(regression["regression"]["version"], "0.16.0", "{regression}");
    assert_eq!(regression["regression"]["previous_version"], "0.15.2", "{regression}");
    assert_eq!(finding["kind"], "finding", "{finding}");
    assert_eq!(finding["regression"]["version"], "0.16.0", "{finding}");
}

#[test]
fn bisect_runs_aarch64_candidates_under_qemu_and_skips_one_built_for_another_architecture() {
    let Some((old, new)) = zigs_and_qemu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let a64 = |zig: &Path| format!("{} cc -target aarch64-linux-musl", zig.display());
    let candidates = dir.path().join("candidates.txt");
    let lines = [
        format!("0.15.2={}", a64(&old)),
        format!("0.15.5={} cc -target x86_64-linux-musl", old.display()),
        format!("0.15.9={}", a64(&old)),
        format!("0.16.0={}", a64(&new)),
    ];
    std::fs::write(&candidates, lines.join("\n") + "\n").unwrap();
    let out = run(agent()
        .args(["bisect", "--workloads", "strchr", "--lineage", "zig (aarch64)", "--max-size", "256K"])
        .args(["--good", "0.15.2", "--bad", "0.16.0", "--candidates"])
        .arg(&candidates)
        .arg("--cache-dir")
        .arg(dir.path().join("cache")));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("0.15.5") && said.contains("it builds for x86_64, and the series bisected is aarch64's"),
        "{said}"
    );
    assert!(said.contains("first bad: 0.16.0") && said.contains("last good: 0.15.9"), "{said}");
}

#[test]
fn zig_0_16_0s_remaining_probes_break_the_same_under_qemu_as_on_x86_64() {
    let Some((_, new)) = zigs_and_qemu() else { return };
    let dir = tempfile::tempdir().unwrap();
    let toolchains = [aarch64("a64", &new), format!("x64={} cc -target x86_64-linux-musl", new.display())];
    let (said, cells) = contracts(dir.path(), &toolchains, &["--max-size", "64K"], "contract.*.remaining");
    assert!(cells.len() >= 30, "every .remaining probe of the catalogue: {said}");
    let over = |cell: &str| cell.starts_with("OVER") || cell.starts_with('✗');
    let mut broken = 0;
    for (probe, by) in &cells {
        let (a64, x64) = (by["a64"].as_str(), by["x64"].as_str());
        // A verdict left unsure on a busy host is no disagreement; held against over is one.
        let decided = |c: &str| !c.contains("unsure");
        if decided(a64) && decided(x64) {
            assert_eq!(over(a64), over(x64), "{probe}: {a64:?} under QEMU, {x64:?} on x86-64\n{said}");
        }
        broken += usize::from(over(a64));
    }
    assert!(broken >= 15, "the strchr family and its kin are over at 0.16.0 on aarch64 too: {said}");
}

/// A program calling `strspn` in a loop, built for aarch64 to be scanned.
const SPANS: &str = "#include <string.h>\n\
__attribute__((noinline)) size_t count_spans(const char *s, int n) {\n\
    size_t t = 0;\n\
    for (int i = 0; i < n; i++) t += strspn(s + (i & 1), \"abc\");\n\
    return t;\n\
}\n\
int main(int argc, char **argv) { return (int)count_spans(argv[0], argc * 100); }\n";

#[test]
fn an_aarch64_artifact_is_scanned_and_judged_by_verdicts_measured_under_qemu() {
    let Some((_, new)) = zigs_and_qemu() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spans.c"), SPANS).unwrap();
    let app = dir.path().join("app");
    let status = std::process::Command::new(&new)
        .args(["cc", "-target", "aarch64-linux-musl", "-O2", "-g", "spans.c", "-o"])
        .arg(&app)
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let scan = |toolchain: &str| {
        run(agent()
            .arg("exposure")
            .arg(&app)
            .args(["--toolchain", toolchain, "--cache-dir"])
            .arg(dir.path().join("cache")))
    };
    let out = scan(&aarch64("zig-a64", &new));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "exposed: {said}");
    assert!(said.contains("app: aarch64 static, zig libc"), "{said}");
    let strspn = said.lines().find(|l| l.trim_start().starts_with("strspn")).unwrap_or_default();
    assert!(strspn.contains("count_spans (1, spans.c:4)"), "the call site, decoded from aarch64 code: {said}");
    assert!(said.contains("judged by zig-a64 (aarch64) 0.16.0"), "{said}");

    // Judged by an x86-64 toolchain's verdicts, it cannot tell, and says why.
    let out = scan(&format!("zig-x64={} cc -target x86_64-linux-musl", new.display()));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(said.contains("it is built for aarch64, and zig-x64 0.16.0 builds for x86_64"), "{said}");
}
