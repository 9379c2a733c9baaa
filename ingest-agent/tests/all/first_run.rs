//! A newcomer's first run: with no `--toolchain` the agent measures the compilers it finds on the
//! host, and without a terminal its log names each phase with counters, an estimate and the
//! build's time.

use crate::helpers::*;
use std::path::Path;

/// A `PATH` of one directory holding `gcc`, `cc` as a second name for the same gcc, and the
/// assembler and linker gcc runs: no other compiler.
fn gcc_only_path(dir: &Path) -> std::ffi::OsString {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gcc = which("gcc").expect("gcc is installed");
    std::os::unix::fs::symlink(&gcc, bin.join("gcc")).unwrap();
    std::os::unix::fs::symlink(&gcc, bin.join("cc")).unwrap();
    for tool in ["as", "ld"] {
        std::os::unix::fs::symlink(which(tool).expect("binutils are installed"), bin.join(tool)).unwrap();
    }
    bin.into_os_string()
}

#[test]
fn with_no_toolchain_given_the_agent_lists_the_compilers_and_fetched_zig_found_on_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let path = gcc_only_path(dir.path());
    let cache = dir.path().join("cache");
    // Two releases fetched before, and one whose fetch never finished (no record).
    for v in ["0.15.2", "0.16.0", "0.17.0"] {
        std::fs::create_dir_all(cache.join("zig").join(v)).unwrap();
    }
    for v in ["0.15.2", "0.16.0"] {
        std::fs::write(cache.join("zig").join(v).join("fetched.toml"), "").unwrap();
    }
    let out = run(agent().args(["toolchains", "--found"]).arg("--cache-dir").arg(&cache).env("PATH", &path));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "gcc-glibc=gcc\nzig@0.16.0\n", "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("left out: cc (") && said.contains("is the compiler of gcc-glibc)"), "{said}");
    assert!(said.contains("left out: zig 0.15.2 (fetched; measure it with --toolchain zig@0.15.2)"), "{said}");

    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run(agent().args(["toolchains", "--found"]).arg("--cache-dir").arg(&empty).env("PATH", &empty));
    assert_eq!(out.status.code(), Some(1), "nothing found is a failure: {}", text(&out));
    let out = run(agent().arg("toolchains").arg("--cache-dir").arg(&empty).env("PATH", &empty));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("no toolchain found on this host"), "{}", text(&out));

    for given in [&["--toolchain", "gcc-glibc=gcc"][..], &["--version-from", "gcc-glibc=libc"]] {
        let out = run(agent().args(["toolchains", "--found"]).args(given));
        assert_eq!(out.status.code(), Some(2), "--found lists what is found, not what is given: {}", text(&out));
    }
}

#[test]
fn compilers_behind_one_wrapper_are_told_apart_by_what_they_say_they_are() {
    let (Some(gcc), Some(clang)) = (which("gcc"), which("clang")) else {
        eprintln!("note: clang is not installed; skipped");
        return;
    };
    // As with ccache on PATH: every compiler name is a link to one program, which runs the real one.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let wrapper = bin.join("wrapper");
    let script = format!(
        "#!/bin/sh\ncase \"${{0##*/}}\" in gcc) exec {} \"$@\";; *) exec {} \"$@\";; esac\n",
        gcc.display(),
        clang.display()
    );
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for name in ["gcc", "clang"] {
        std::os::unix::fs::symlink(&wrapper, bin.join(name)).unwrap();
    }
    let out = run(agent().args(["toolchains", "--found"]).arg("--cache-dir").arg(dir.path()).env("PATH", &bin));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "gcc-glibc=gcc\nclang-glibc=clang\n", "{}", text(&out));
}

#[test]
fn a_run_with_no_toolchain_measures_the_host_s_gcc_and_logs_each_phase_with_counters_and_build_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = gcc_only_path(dir.path());
    let cache = dir.path().join("cache");
    let measure = |out_file: &Path| {
        run(agent()
            .args(["measure", "--workloads", "strchr,memchr", "--max-size", "64K", "--reps", "2", "--build-jobs", "2"])
            .arg("--cache-dir")
            .arg(&cache)
            .arg("--out")
            .arg(out_file)
            .env("PATH", &path))
    };
    let runs = dir.path().join("runs.json");
    let out = measure(&runs);
    assert!(out.status.success(), "{}", text(&out));
    let run: slopewatch_core::wire::RunSubmission = serde_json::from_slice(&std::fs::read(&runs).unwrap()).unwrap();
    assert_eq!(run.toolchain.name, "gcc-glibc");
    assert!(run.toolchain.libc.starts_with("glibc"), "{:?}", run.toolchain);

    let log = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(log.contains("no --toolchain given; found on this host: gcc-glibc=gcc"), "{log}");
    let version = &run.toolchain.version;
    // No estimate before a workload is measured: the budgets' bound is hours for seconds of work.
    let first = format!("building 2 binaries with gcc-glibc {version} (2 at a time, 0 built) (toolchain 1 of 1)…");
    assert!(log.contains(&first), "the builds name their phase and counters: {log}");
    let measuring = format!("measuring strchr with gcc-glibc {version} at 2 KiB (toolchain 1 of 1, workload 1 of 2)…");
    assert!(log.contains(&measuring), "{log}");
    assert!(!log.contains("at most"), "{log}");
    let second =
        format!("measuring memchr with gcc-glibc {version} at 2 KiB (toolchain 1 of 1, workload 2 of 2; about ");
    assert!(log.contains(&second), "once a workload is done, the estimate comes from the pace: {log}");
    let summary = log.lines().find(|l| l.starts_with("gcc-glibc strchr: ")).unwrap_or_else(|| panic!("{log}"));
    assert!(summary.contains(" sizes in ") && summary.contains("(built in "), "{summary}");
    let (phase, measured) =
        (log.find(&first).unwrap(), log.find("measured toolchain=gcc-glibc workload=strchr").unwrap());
    assert!(phase < measured, "the build is told before the sizes: {log}");

    // Built once: the second run says the build was cached and tells no build phase.
    let out = measure(&dir.path().join("again.json"));
    assert!(out.status.success(), "{}", text(&out));
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!log.contains("building "), "{log}");
    let first = log.lines().find(|l| l.starts_with("measuring strchr ")).unwrap_or_else(|| panic!("{log}"));
    assert!(first.contains("; about ") && first.ends_with(" left at the last run's pace)…"), "{first}");
    assert!(log.lines().any(|l| l.starts_with("gcc-glibc strchr: ") && l.ends_with("(build cached)")), "{log}");
}

#[test]
fn on_a_terminal_one_line_is_redrawn_with_the_phase_and_counters_within_its_width() {
    let Some(script) = which("script") else {
        eprintln!("note: script (util-linux) is not installed; skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A terminal of 90 columns, whatever the one running the tests is.
    let command = format!(
        "stty cols 90; {} measure --toolchain gcc-glibc=gcc --workloads strchr --max-size 4M --cache-dir {} --out {}",
        env!("CARGO_BIN_EXE_slopewatch-agent"),
        dir.path().join("cache").display(),
        dir.path().join("run.json").display()
    );
    // `script` runs the agent on a terminal of its own.
    let out = run(std::process::Command::new(script).args(["-qec", &command, "/dev/null"]));
    assert!(out.status.success(), "{}", text(&out));
    let screen = String::from_utf8_lossy(&out.stdout).to_string();
    let redrawn: Vec<&str> = screen.split("\r\x1b[2K").skip(1).filter(|l| !l.is_empty()).collect();
    let live =
        redrawn.iter().find(|l| l.starts_with("toolchain 1/1, workload 1/1: measuring strchr ")).unwrap_or_else(|| {
            panic!("no live line: {screen:?}");
        });
    // One workload and no earlier run: the phase's elapsed time, and no estimate to guess at.
    let elapsed = live.rsplit(", ").next().unwrap().trim_end_matches(['\r', '\n']);
    assert!(elapsed.ends_with('s') && elapsed.starts_with(|c: char| c.is_ascii_digit()), "{live:?}");
    assert!(!live.contains("at most"), "{live:?}");
    // What follows the last redraw is the table, on a line of its own.
    let live: Vec<&str> = redrawn
        .iter()
        .map(|l| l.split(['\r', '\n']).next().unwrap())
        .filter(|l| l.starts_with("toolchain 1/1"))
        .collect();
    assert!(live.iter().any(|l| l.contains(": building 1 binaries")), "the build is drawn too: {live:?}");
    for line in live {
        assert!(line.chars().count() < 90, "a live line wider than the terminal wraps: {line:?}");
    }
    assert!(!screen.contains("measured toolchain="), "a terminal gets the live line, not the log: {screen:?}");
}

#[test]
fn build_fills_the_cache_so_a_measurement_builds_nothing_and_names_what_does_not_build() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let broken = dir.path().join("broken.c");
    std::fs::write(&broken, "this is not C\n").unwrap();
    let out = run(agent()
        .args(["build", "--toolchain", "gcc-glibc=gcc", "--workloads", "strchr,memchr,broken", "--build-jobs", "2"])
        .arg("--workload-file")
        .arg(&broken)
        .arg("--cache-dir")
        .arg(&cache));
    assert_eq!(out.status.code(), Some(1), "a workload that does not build fails the build: {}", text(&out));
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(said.contains(": built 3 binaries for 3 workloads in "), "{said}");
    assert!(said.contains("; 1 failed to build") && said.contains("  ✗ broken: "), "{said}");
    let why = said.lines().find(|l| l.contains("✗ broken: ")).unwrap();
    assert!(why.contains("error"), "the compiler's own error, not only that it failed: {why}");

    let out = run(agent()
        .args(["measure", "--toolchain", "gcc-glibc=gcc", "--workloads", "strchr,memchr", "--max-size", "64K"])
        .arg("--cache-dir")
        .arg(&cache)
        .arg("--out")
        .arg(dir.path().join("run.json")));
    assert!(out.status.success(), "{}", text(&out));
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!log.contains("building "), "everything was built ahead: {log}");
    assert_eq!(log.matches("(build cached)").count(), 2, "{log}");

    let out = run(agent()
        .args(["build", "--toolchain", "gcc-glibc=gcc", "--workloads", "strchr"])
        .arg("--cache-dir")
        .arg(&cache));
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(": built 0 binaries for 0 workloads in "), "{}", text(&out));
    assert!(text(&out).contains(", 1 cached"), "{}", text(&out));
}
