//! Command workloads (`build` and `command` in `[[workloads]]`) with real compilers: the example's
//! `tokenize-cli`, a program timed by its wall time, a build one toolchain fails, a program that
//! hangs, results that differ between toolchains, and the config's errors.

use crate::helpers::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A directory with `config` as its `slopewatch-agent.toml` and the C program `prog.c`.
fn project(dir: &Path, config: &str, program: &str) -> PathBuf {
    std::fs::write(dir.join("prog.c"), program).unwrap();
    let path = dir.join("slopewatch-agent.toml");
    std::fs::write(&path, config).unwrap();
    path
}

fn measure(config: &Path, dir: &Path, args: &[&str]) -> (std::process::Output, Vec<Value>) {
    let out_file = dir.join("runs.json");
    let out = run(agent()
        .arg("measure")
        .arg("--config")
        .arg(config)
        .args(["--reps", "3", "--size-budget", "200ms"])
        .args(args)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .arg("--out")
        .arg(&out_file));
    let runs = match std::fs::read(&out_file).ok().map(|b| serde_json::from_slice(&b).unwrap()) {
        Some(Value::Array(runs)) => runs,
        Some(one) => vec![one],
        None => vec![],
    };
    (out, runs)
}

fn workload<'a>(runs: &'a [Value], toolchain: &str, name: &str) -> &'a Value {
    let run = runs.iter().find(|r| r["toolchain"]["name"] == toolchain).unwrap_or_else(|| panic!("{runs:?}"));
    run["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap()
}

const GCC: &str = "[[toolchains]]\nname = \"gcc\"\ncc = \"gcc\"\n";

/// Sleeps SIZE microseconds, printing nothing: only its wall time tells how long it took.
const SLEEPER: &str = r#"
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv) {
    long long us = atoll(argv[1]);
    if (us >= HANG_FROM) for (;;) nanosleep(&(struct timespec){1, 0}, 0);
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&t, 0);
    return 0;
}
"#;

#[test]
fn the_example_command_workload_builds_with_each_toolchain_and_times_itself() {
    let dir = tempfile::tempdir().unwrap();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/workloads/slopewatch-agent.toml");
    let mut args = vec!["--workloads", "tokenize-cli", "--max-size", "1M"];
    let musl = which("musl-gcc").is_some();
    if musl {
        args.extend(["--toolchain", "musl-gcc=musl-gcc"]);
    }
    let (out, runs) = measure(&config, dir.path(), &args);
    assert!(out.status.success(), "{}", text(&out));
    for tc in ["gcc-glibc"].into_iter().chain(musl.then_some("musl-gcc")) {
        let w = workload(&runs, tc, "tokenize-cli");
        assert!(w.get("failure").is_none(), "{w}");
        assert_eq!(w["metadata"]["timing"], "slopewatch_ns", "{w}");
        assert!(w["measurements"].as_array().unwrap().len() >= 6, "{w}");
        assert!(w["source_hash"].as_str().unwrap().starts_with("sha256:"));
    }
    let slopes = slopes(&dir.path().join("runs.json"));
    assert!(slopes.iter().all(|(_, _, k)| (0.8..1.3).contains(k)), "the lexer is linear here: {slopes:?}");
    // The build is reused while its sources are unchanged, and made again after an edit.
    let builds =
        || walk(&dir.path().join("cache")).into_iter().filter(|p| p.to_string_lossy().contains("tokenize-cli-"));
    let before = builds().count();
    assert!(before >= 1, "one build per toolchain is kept");
    let (again, _) = measure(&config, dir.path(), &args);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(builds().count(), before, "nothing rebuilt");
}

#[test]
fn a_program_that_prints_no_time_is_timed_by_its_wall_time() {
    let dir = tempfile::tempdir().unwrap();
    let config = project(
        dir.path(),
        &format!(
            "{GCC}\n[[workloads]]\nname = \"sleeper\"\nbuild = \"{{cc}} {{cflags}} -DHANG_FROM=1000000000 -o {{out}} prog.c\"\n\
             command = \"{{out}} {{size}}\"\nsources = [\"prog.c\"]\nunit = \"iterations\"\nstart = 2000\nmax = 32000\n"
        ),
        SLEEPER,
    );
    let (out, runs) = measure(&config, dir.path(), &["--workloads", "sleeper"]);
    assert!(out.status.success(), "{}", text(&out));
    let w = workload(&runs, "gcc", "sleeper");
    assert_eq!(w["metadata"]["timing"], "wall time", "{w}");
    let largest = w["measurements"].as_array().unwrap().iter().find(|m| m["size"] == 32000).expect("32000 measured");
    for ns in largest["samples_ns"].as_array().unwrap() {
        let ns = ns.as_f64().unwrap();
        assert!((32e6..1e9).contains(&ns), "32 ms asleep, start-up on top: {ns}");
    }
}

#[test]
fn a_build_one_toolchain_fails_is_reported_there_while_the_other_is_measured() {
    if which("musl-gcc").is_none() {
        eprintln!("SKIPPED: musl-gcc is not installed (Debian: apt-get install musl-tools)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = project(
        dir.path(),
        &format!(
            "{GCC}[[toolchains]]\nname = \"musl\"\ncc = \"musl-gcc\"\n\n[[workloads]]\nname = \"sleeper\"\n\
             build = \"case {{target}} in *musl*) echo 'this build needs glibc' >&2; exit 7;; esac; {{cc}} {{cflags}} -DHANG_FROM=1000000000 -o {{out}} prog.c\"\n\
             command = \"{{out}} {{size}}\"\nunit = \"iterations\"\nstart = 500\nmax = 16000\n"
        ),
        SLEEPER,
    );
    let (out, runs) = measure(&config, dir.path(), &["--workloads", "sleeper"]);
    assert_eq!(out.status.code(), Some(1), "a failure fails the job: {}", text(&out));
    let failed = workload(&runs, "musl", "sleeper");
    assert_eq!(failed["failure"]["kind"], "build_failed", "{failed}");
    assert_eq!(failed["failure"]["exit_status"], 7, "{failed}");
    assert!(failed["failure"]["detail"].as_str().unwrap().contains("this build needs glibc"), "{failed}");
    let measured = workload(&runs, "gcc", "sleeper");
    assert!(measured.get("failure").is_none(), "{measured}");
}

#[test]
fn a_program_that_hangs_at_a_size_is_stopped_there_and_the_sweep_goes_on_below() {
    let dir = tempfile::tempdir().unwrap();
    let config = project(
        dir.path(),
        &format!(
            "{GCC}\n[[workloads]]\nname = \"hangs\"\nbuild = \"{{cc}} {{cflags}} -DHANG_FROM=8000 -o {{out}} prog.c\"\n\
             command = \"{{out}} {{size}}\"\nunit = \"iterations\"\nstart = 1000\nmax = 64000\n"
        ),
        SLEEPER,
    );
    let (out, runs) = measure(&config, dir.path(), &["--workloads", "hangs", "--total-budget", "2s"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("hangs at 8,000 iterations ran past the budget"), "{}", text(&out));
    let w = workload(&runs, "gcc", "hangs");
    assert!(w.get("failure").is_none(), "{w}");
    let sizes: Vec<u64> = w["measurements"].as_array().unwrap().iter().map(|m| m["size"].as_u64().unwrap()).collect();
    assert_eq!(sizes, [125, 250, 500, 1000, 2000, 4000], "the sizes below the hang, and halving below the start");
}

#[test]
fn a_program_that_hangs_at_every_size_is_reported_timed_out() {
    let dir = tempfile::tempdir().unwrap();
    let config = project(
        dir.path(),
        &format!(
            "{GCC}\n[[workloads]]\nname = \"hangs\"\nbuild = \"{{cc}} {{cflags}} -DHANG_FROM=0 -o {{out}} prog.c\"\n\
             command = \"{{out}} {{size}}\"\nunit = \"iterations\"\nstart = 1000\nmax = 64000\n"
        ),
        SLEEPER,
    );
    let (out, runs) = measure(&config, dir.path(), &["--workloads", "hangs", "--total-budget", "500ms"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let w = workload(&runs, "gcc", "hangs");
    assert_eq!(w["failure"]["kind"], "timed_out", "{w}");
    assert_eq!(w["measurements"].as_array().unwrap().len(), 0, "{w}");
}

#[test]
fn results_that_differ_between_toolchains_fail_the_odd_one() {
    let program = r#"
#include <stdio.h>
#include <stdlib.h>
#ifndef OFF
#define OFF 0
#endif
int main(int argc, char **argv) {
    long long n = atoll(argv[1]), sum = 0;
    for (long long i = 0; i < n; i++) sum += i % 7;
    printf("slopewatch_ns=%lld\nslopewatch_result=%lld\n", n * 10 + 1, sum + (n > 3000 ? OFF : 0));
    return 0;
}
"#;
    let dir = tempfile::tempdir().unwrap();
    let toolchains = "[[toolchains]]\nname = \"a\"\ncc = \"gcc\"\n[[toolchains]]\nname = \"b\"\ncc = \"gcc\"\n\
                      [[toolchains]]\nname = \"odd\"\ncc = \"gcc\"\nflags = \"-O2 -DOFF=1\"\n";
    let config = project(
        dir.path(),
        &format!(
            "{toolchains}\n[[workloads]]\nname = \"sums\"\nbuild = \"{{cc}} {{cflags}} -o {{out}} prog.c\"\n\
             command = \"{{out}} {{size}}\"\nunit = \"items\"\nstart = 1000\nmax = 32000\n"
        ),
        program,
    );
    let (out, runs) = measure(&config, dir.path(), &["--workloads", "sums"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    for tc in ["a", "b"] {
        assert!(workload(&runs, tc, "sums").get("failure").is_none(), "{runs:?}");
    }
    let odd = workload(&runs, "odd", "sums");
    assert_eq!(odd["failure"]["kind"], "wrong_result", "{odd}");
    assert_eq!(odd["failure"]["size"], 4000, "the first size that differs: {odd}");
}

#[test]
fn command_workload_config_errors_name_the_workload_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    for (entry, why) in [
        ("build = \"{cc} -o {out} prog.c\"", "command: missing"),
        ("command = \"{out} {size}\"", "there is no build"),
        ("build = \"{cc} -o {out} prog.c\"\ncommand = \"{out} {sise}\"", "unknown placeholder {sise}"),
        ("build = \"{cc} -o {out} prog.c\"\ncommand = \"{out}\"", "{size}"),
        ("build = \"{cc} -o prog prog.c\"\ncommand = \"./prog {size}\"", "must write the program to {out}"),
        ("build = \"{cc} -o {out} prog.c\"\ncommand = \"{out} {size}\"\nlibs = [\"-lm\"]", "for C workloads only"),
        ("build = \"{cc} -o {out} prog.c\"\ncommand = \"{out} {size}\"\nsources = [\"nope\"]", "neither a file"),
    ] {
        let config = project(dir.path(), &format!("{GCC}[[workloads]]\nname = \"w\"\n{entry}\n"), SLEEPER);
        let out = run(agent().arg("measure").arg("--config").arg(&config).args(["--workloads", "w", "--out", "-"]));
        assert_eq!(out.status.code(), Some(1), "{entry}: {}", text(&out));
        let err = text(&out);
        assert!(err.contains("workload \"w\"") && err.contains(why), "{entry}: {err}");
    }
}
