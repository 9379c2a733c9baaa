//! `--measure` with real compilers and a real Valgrind: counts that are the same on every run,
//! CPU time, both measures in one invocation, and what the agent says when it cannot count.

use crate::helpers::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// `measure --out` of gcc's `strchr` with `args`, builds cached in `dir`; the runs written.
fn measured(dir: &Path, args: &[&str]) -> Vec<Value> {
    let out_file = dir.join("runs.json");
    let out = run(agent()
        .args(["measure", "--toolchain", "gcc-glibc=gcc", "--workloads", "strchr", "--max-size", "512K"])
        .args(["--size-budget", "300ms"])
        .args(args)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .arg("--out")
        .arg(&out_file));
    assert!(out.status.success(), "{}", text(&out));
    // One run is written as itself, several as a list.
    match serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap() {
        Value::Array(runs) => runs,
        one => vec![one],
    }
}

/// Each size's instruction counts in a run's one workload.
fn counts(run: &Value) -> BTreeMap<u64, Vec<u64>> {
    run["workloads"][0]["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let c = m["instructions"].as_array().unwrap_or_else(|| panic!("no counts: {m}"));
            (m["size"].as_u64().unwrap(), c.iter().map(|v| v.as_u64().unwrap()).collect())
        })
        .collect()
}

#[test]
fn valgrind_counts_one_binary_the_same_on_two_runs_with_one_repetition_a_size() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--measure", "instructions", "--counter", "valgrind"];
    let (first, second) = (measured(dir.path(), &args), measured(dir.path(), &args));
    for run in [&first[0], &second[0]] {
        assert_eq!((run["measure"].as_str(), run["counter"].as_str()), (Some("instructions"), Some("valgrind")));
    }
    let (a, b) = (counts(&first[0]), counts(&second[0]));
    assert!(a.len() >= 5 && a.values().all(|c| c.len() == 1), "five sizes, one count each: {a:?}");
    // The sizes a sweep reaches follow the time Valgrind takes, which the host's load moves; the
    // counts at a size do not.
    let shared: Vec<u64> = a.keys().filter(|s| b.contains_key(s)).copied().collect();
    assert!(shared.len() >= 4, "{a:?} {b:?}");
    for s in &shared {
        assert_eq!(a[s], b[s], "size {s}");
    }
    // strchr walks the text once: twice the text, twice the instructions, to a percent.
    let pairs: Vec<(u64, u64)> = shared.windows(2).map(|w| (a[&w[0]][0], a[&w[1]][0])).collect();
    for (small, large) in pairs.iter().filter(|_| shared.windows(2).all(|w| w[1] == 2 * w[0])) {
        let ratio = *large as f64 / *small as f64;
        assert!((ratio - 2.0).abs() < 0.02, "{ratio} in {a:?}");
    }
}

#[test]
fn cpu_time_is_a_measure_of_its_own_and_both_measures_run_in_one_invocation() {
    let dir = tempfile::tempdir().unwrap();
    let runs = measured(dir.path(), &["--measure", "cpu,instructions,cpu", "--reps", "3"]);
    let measures: Vec<&str> = runs.iter().map(|r| r["measure"].as_str().unwrap()).collect();
    assert_eq!(measures, ["cpu", "instructions"], "one run per measure, each once");
    assert_eq!(runs[0].get("counter"), None);
    assert_ne!(runs[0]["run_id"], runs[1]["run_id"], "two runs");
    let samples = &runs[0]["workloads"][0]["measurements"][0]["samples_ns"];
    assert_eq!(samples.as_array().unwrap().len(), 3, "{samples}");
    // The same binary measured both ways, so the same source hash on both.
    assert_eq!(runs[0]["workloads"][0]["source_hash"], runs[1]["workloads"][0]["source_hash"]);
}

#[test]
fn a_counter_without_instructions_a_bad_measure_and_a_missing_valgrind_are_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let base = || {
        let mut c = agent();
        c.args(["check", "--toolchain", "gcc-glibc=gcc", "--workloads", "strchr", "--cache-dir"])
            .arg(dir.path().join("cache"));
        c
    };
    let out = run(base().args(["--measure", "wall", "--counter", "valgrind"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("goes with --measure instructions"), "{}", text(&out));
    let out = run(base().args(["--measure", "cycles"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("not a measure: wall, cpu or instructions"), "{}", text(&out));
    // No valgrind on PATH: the agent names the package, and measures nothing else instead.
    let empty = tempfile::tempdir().unwrap();
    let out = run(base().args(["--measure", "instructions", "--counter", "valgrind"]).env("PATH", empty.path()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("apt-get install valgrind"), "{}", text(&out));
    assert!(!text(&out).contains("measured toolchain"), "{}", text(&out));
}

#[test]
fn a_config_file_sets_the_measure_and_the_command_line_wins() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agent.toml");
    std::fs::write(&config, "measure = \"cpu\"\n").unwrap();
    let runs = measured(dir.path(), &["--config", config.to_str().unwrap(), "--reps", "1"]);
    assert_eq!(runs[0]["measure"], "cpu");
    let runs = measured(dir.path(), &["--config", config.to_str().unwrap(), "--measure", "wall", "--reps", "1"]);
    assert_eq!(runs[0].get("measure"), None, "wall is left out, as older servers expect");
    std::fs::write(&config, "measure = \"wall,time\"\n").unwrap();
    let out = run(agent().args(["check", "--toolchain", "gcc-glibc=gcc", "--config"]).arg(&config));
    assert!(text(&out).contains("\"time\" is not wall, cpu or instructions"), "{}", text(&out));
}

#[test]
fn a_server_that_predates_measures_is_told_plainly_and_sent_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let runs = measured(dir.path(), &["--measure", "cpu", "--reps", "1"]);
    let file = dir.path().join("cpu-run.json");
    std::fs::write(&file, serde_json::to_vec(&runs[0]).unwrap()).unwrap();
    let refusal = r#"{"error":{"status":422,"code":"invalid_field","message":"measure: unknown field `measure`, expected one of `run_id`, `agent_version`","field":"measure"}}"#;
    let (url, seen) = listener(vec![(422, refusal.into())]);
    let out = submit(&url, &file, &dir.path().join("spool"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("takes wall time only"), "{}", text(&out));
    assert_eq!(seen.lock().unwrap().len(), 1, "not sent again as another measure: {}", text(&out));
}

/// The server's series of `workload` in `lineage` by `measure`, read with `token`.
fn series(url: &str, token: &str, workload: &str, lineage: &str, measure: &str) -> Value {
    let began = std::time::Instant::now();
    loop {
        let got = ureq::get(format!("{url}/api/v1/series"))
            .query("workload", workload)
            .query("toolchain", lineage)
            .query("measure", measure)
            .header("Authorization", &format!("Bearer {token}"))
            .call()
            .ok()
            .and_then(|mut r| r.body_mut().read_to_string().ok())
            .and_then(|body| serde_json::from_str::<Value>(&body).ok());
        if let Some(s) = got.filter(|s| s["versions"][0]["slope"].is_number()) {
            return s;
        }
        assert!(began.elapsed() < std::time::Duration::from_secs(20), "no {measure} series of {workload}/{lineage}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn three_measures_reach_a_real_server_as_three_series_on_gcc_musl_gcc_and_zig() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_server, url, token)) = real_server(dir.path(), &[]) else { return };
    let mut toolchains = vec![("gcc-glibc", "gcc".to_string())];
    if which("musl-gcc").is_some() {
        toolchains.push(("musl-gcc", "musl-gcc".into()));
    }
    let zig = std::path::PathBuf::from("/opt/slopewatch-zig/0.16.0/ziglang/zig");
    if zig.is_file() {
        toolchains.push(("zig-cc-musl", format!("{} cc -target x86_64-linux-musl", zig.display())));
    }
    for (name, cc) in &toolchains {
        let out = run(agent()
            .args(["run", "--server", &url, "--token", &token, "--toolchain", &format!("{name}={cc}")])
            .args(["--measure", "wall,cpu,instructions", "--workloads", "strchr", "--max-size", "256K"])
            .args(["--reps", "3", "--size-budget", "100ms", "--cache-dir"])
            .arg(dir.path().join("cache"))
            .arg("--spool-dir")
            .arg(dir.path().join("spool")));
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out));
        assert!(spooled(&dir.path().join("spool")).is_empty(), "all three runs delivered: {}", text(&out));
        let wall = series(&url, &token, "strchr", name, "wall");
        let counted = series(&url, &token, "strchr", name, "instructions-valgrind");
        let cpu = series(&url, &token, "strchr", name, "cpu");
        assert_eq!(wall["measure"], "wall");
        assert_eq!(counted["measure"], "instructions-valgrind", "{counted}");
        assert_eq!(cpu["measure"], "cpu");
        let mut measures: Vec<&str> =
            counted["measures"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        measures.sort();
        assert_eq!(measures, ["cpu", "instructions-valgrind", "wall"], "{counted}");
        // Counts, not times: whole numbers, while the times of the same sizes are not counts.
        let medians = |s: &Value| -> Vec<f64> {
            let sizes = s["versions"][0]["sizes"].as_array().unwrap();
            sizes.iter().map(|x| x["median_ns"].as_f64().unwrap()).collect()
        };
        assert!(medians(&counted).iter().all(|c| c.fract() == 0.0), "{counted}");
        assert_ne!(medians(&counted), medians(&wall));
        let slope = counted["versions"][0]["slope"].as_f64().unwrap();
        if *name == "zig-cc-musl" {
            assert!(slope > 1.9, "Zig 0.16.0's strchr counts quadratic: {counted}");
        } else {
            assert!((slope - 1.0).abs() < 0.02, "{counted}");
        }
    }
}

#[test]
fn a_command_workload_is_counted_as_a_whole_process_and_timed_by_its_cpu_time() {
    let dir = tempfile::tempdir().unwrap();
    let example = dir.path().join("example");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/workloads"), &example);
    let out_file = dir.path().join("runs.json");
    let out = run(agent()
        .args(["measure", "--measure", "cpu,instructions", "--workloads", "tokenize-cli", "--max-size", "256K"])
        .args(["--reps", "2", "--size-budget", "300ms", "--config"])
        .arg(example.join("slopewatch-agent.toml"))
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--out")
        .arg(&out_file));
    assert!(out.status.success(), "{}", text(&out));
    let runs: Vec<Value> = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    let (cpu, counted) = (&runs[0]["workloads"][0], &runs[1]["workloads"][0]);
    assert_eq!(cpu["metadata"]["timing"], "CPU time", "{cpu}");
    assert_eq!(counted["metadata"]["timing"], "instructions of the whole process", "{counted}");
    assert_eq!(runs[1]["counter"], "valgrind", "a command's program is counted under Valgrind");
    let c = counts(&runs[1]);
    assert!(c.len() >= 5 && c.values().all(|v| v.len() == 1), "{c:?}");
    // The lexer walks its input once: more than the start-up, and growing with it.
    let (small, large) = (c.values().next().unwrap()[0], c.values().next_back().unwrap()[0]);
    assert!(large > small, "{c:?}");
}
