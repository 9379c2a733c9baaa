//! Workloads that break under a toolchain, with real compilers: each failure is carried in the
//! run with its kind and what it printed, beside the workloads it does not break.

use crate::helpers::*;
use serde_json::Value;
use slopewatch_core::wire::RunSubmission;
use std::path::Path;

/// The one run in a file written by `measure --out`, checked against the wire's rules.
fn written_run(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap();
    RunSubmission::from_json(&bytes).unwrap_or_else(|e| panic!("the written run is invalid: {e}"));
    serde_json::from_slice(&bytes).unwrap()
}

fn workload<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap()
}

fn sizes(w: &Value) -> Vec<u64> {
    w["measurements"].as_array().unwrap().iter().map(|m| m["size"].as_u64().unwrap()).collect()
}

#[test]
fn a_strtol_that_misplaces_the_end_pointer_is_sent_as_a_wrong_result_beside_the_workloads_it_does_not_break() {
    let dir = tempfile::tempdir().unwrap();
    let shim = shim_object(dir.path(), "bad_endptr_strtol.c");
    let (url, seen) = listener(vec![stored_unknown(true)]);
    let out = run(agent()
        .args(["run", "--server", &url, "--token", "sw_test", "--workloads", "strtol,memchr"])
        .args(["--max-size", "128K", "--reps", "1", "--toolchain"])
        .arg(format!("bad-strtol=gcc {}", shim.display()))
        .arg("--spool-dir")
        .arg(dir.path().join("spool"))
        .arg("--cache-dir")
        .arg(dir.path().join("cache")));
    assert_eq!(out.status.code(), Some(1), "a failure still fails the job: {}", text(&out));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "the run is sent with its failure");
    let sent: Value = serde_json::from_str(&seen[0].body).unwrap();
    let strtol = workload(&sent, "strtol");
    let f = &strtol["failure"];
    assert_eq!(f["kind"], "wrong_result", "{strtol}");
    // Trailing blanks read as a 0: the first size (128K widened down to six sizes) already counts
    // wrong. "123456 " is 7 bytes.
    let size = f["size"].as_u64().unwrap();
    assert_eq!(size, 4 * 1024);
    assert_eq!((f["got"].as_str(), f["expected"].as_str()), (Some("-1"), Some(&*(size / 7).to_string())));
    assert!(sizes(strtol).is_empty());
    let memchr = workload(&sent, "memchr");
    assert!(memchr.get("failure").is_none() && sizes(memchr).len() >= 3, "{memchr}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("✗ wrong result at 4 KiB: got -1, expected 585"), "{table}");
    assert!(spooled(&dir.path().join("spool")).is_empty());
}

#[test]
fn a_strchr_that_crashes_past_a_length_is_a_crash_at_that_size_keeping_the_sizes_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let shim = shim_object(dir.path(), "crashing_strchr.c");
    let out_file = dir.path().join("run.json");
    let out = run(agent()
        .args(["measure", "--workloads", "strchr", "--start-size", "16K", "--max-size", "256K", "--reps", "2"])
        .arg("--toolchain")
        .arg(format!("crashing=gcc {}", shim.display()))
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&out_file));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let run = written_run(&out_file);
    let strchr = workload(&run, "strchr");
    let f = &strchr["failure"];
    assert_eq!(
        (f["kind"].as_str(), f["signal"].as_i64(), f["size"].as_u64()),
        (Some("crashed"), Some(11), Some(131072))
    );
    assert_eq!(f["detail"], "crashing_strchr: a string of 131072 bytes");
    // 16K to 256K is widened down to 8K, for six sizes.
    assert_eq!(sizes(strchr), [8192, 16384, 32768, 65536]);
    let table = String::from_utf8_lossy(&out.stdout);
    let line = table.lines().find(|l| l.contains("strchr")).unwrap();
    assert!(line.contains("✗ crashed at 128 KiB: signal 11 (SIGSEGV) — crashing_strchr: a string of"), "{table}");
    assert!(
        line.split_whitespace().nth(3).unwrap().ends_with('*'),
        "the partial slope (after the class) is marked: {line}"
    );
    assert!(table.contains("* partial"), "{table}");
}

#[test]
fn a_workload_that_does_not_compile_fails_the_gate_with_the_compilers_first_lines_without_escape_codes() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.c");
    let undeclared: String = (0..15).map(|i| format!("int f{i}(void) {{ return undeclared_{i}; }}\n")).collect();
    std::fs::write(
        &broken,
        format!("// slopewatch: name=broken start=1K max=8K\n#include \"slopewatch.h\"\n{undeclared}"),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    // Colours forced on, as a compiler wrapper or GCC_COLORS in CI might do.
    let toolchain = "hostile=gcc -fdiagnostics-color=always";
    let out_file = dir.path().join("run.json");
    let out = run(agent()
        .args(["measure", "--workloads", "broken,memchr", "--max-size", "64K", "--reps", "1", "--toolchain", toolchain])
        .arg("--workload-file")
        .arg(&broken)
        .arg("--cache-dir")
        .arg(&cache)
        .arg("--out")
        .arg(&out_file));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let run = written_run(&out_file);
    let f = &workload(&run, "broken")["failure"];
    assert_eq!((f["kind"].as_str(), f["exit_status"].as_i64()), (Some("build_failed"), Some(1)), "{f}");
    let detail = f["detail"].as_str().unwrap();
    assert!(detail.contains("broken.c:3:") && detail.contains("error:"), "{detail}");
    assert!(!detail.contains('\u{1b}') && !detail.contains(dir.path().to_str().unwrap()), "{detail:?}");
    assert_eq!(detail.lines().count(), 20, "the first 20 lines of many: {detail}");
    assert!(workload(&run, "memchr").get("failure").is_none());

    let gate = run_gate(&broken, &cache, toolchain);
    assert_eq!(gate.status.code(), Some(1));
    let said = text(&gate);
    assert!(said.contains("✗ build failed: exit status 1 — broken.c:3:"), "{said}");
    assert!(said.contains("failed: hostile/broken (build failed)"), "{said}");
    assert!(!said.contains('\u{1b}'), "{said:?}");
}

fn run_gate(broken: &Path, cache: &Path, toolchain: &str) -> std::process::Output {
    run(agent()
        .args(["check", "--workloads", "broken,memchr", "--max-size", "64K", "--reps", "1", "--toolchain", toolchain])
        .arg("--workload-file")
        .arg(broken)
        .arg("--cache-dir")
        .arg(cache))
}

#[test]
fn a_hang_a_failed_set_up_and_garbled_output_are_each_reported_as_their_own_kind() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let path = dir.path().join(format!("{name}.c"));
        std::fs::write(&path, format!("// slopewatch: name={name} start=1K max=8K\n{body}")).unwrap();
        path
    };
    let hang = write("hang", "#include <unistd.h>\nint main(void) { for (;;) pause(); }\n");
    let no_setup = write(
        "no-setup",
        "#include \"slopewatch.h\"\nint sw_setup(long long n) { (void)n; return -1; }\nvoid sw_before(void) {}\n\
         long long sw_run(void) { return 0; }\nvoid sw_after(void) {}\nlong long sw_expected(void) { return 0; }\n",
    );
    let garbled = write("garbled", "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n");
    let out_file = dir.path().join("run.json");
    let mut cmd = agent();
    cmd.args(["measure", "--toolchain", "gcc-glibc=gcc", "--workloads", "hang,no-setup,garbled", "--reps", "1"])
        .args(["--size-budget", "100ms", "--total-budget", "300ms"]);
    for f in [&hang, &no_setup, &garbled] {
        cmd.arg("--workload-file").arg(f);
    }
    let out = run(cmd.arg("--cache-dir").arg(dir.path().join("cache")).arg("--out").arg(&out_file));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let run = written_run(&out_file);
    assert_eq!(run["workloads"].as_array().unwrap().len(), 3, "a run whose every workload failed is still a run");

    let f = &workload(&run, "hang")["failure"];
    assert_eq!(f["kind"], "timed_out", "{f}");
    assert_eq!(f["limit_ms"], 300);
    assert_eq!(f["size"], 128);
    let f = &workload(&run, "no-setup")["failure"];
    assert_eq!((f["kind"].as_str(), f["exit_status"].as_i64()), (Some("setup_failed"), Some(2)), "{f}");
    assert_eq!(f["detail"], "workload set-up failed");
    let f = &workload(&run, "garbled")["failure"];
    assert_eq!(f["kind"], "setup_failed", "{f}");
    assert!(f["detail"].as_str().unwrap().contains("no valid JSON"), "{f}");
    let table = String::from_utf8_lossy(&out.stdout);
    // 1K to 8K is widened down to 256 B, for six sizes: killed there, then at the one below,
    // where the sweep goes when too few fit.
    assert!(table.contains("✗ timed out at 128 B: limit 300 ms"), "{table}");
}
