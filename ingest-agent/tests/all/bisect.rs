//! `bisect` with 32 toolchain "builds" made of the host's gcc and shim libcs: builds from the 20th
//! on link a `strchr` that measures the rest of the string first (quadratic), one in the middle
//! does not compile. Listed in a file, or fetched by a script; an inverted range; a server that is
//! down when the answer is ready.

use crate::helpers::*;
use std::path::{Path, PathBuf};

/// The versions of the 32 builds, oldest first: a release, 30 dev builds, the next release.
fn versions() -> Vec<String> {
    let mut v = vec!["0.15.2".to_string()];
    v.extend((1..=30).map(|n| format!("0.16.0-dev.{n}+g{:07x}", n * 7919)));
    v.push("0.16.0".into());
    v
}

/// The index of the first bad build, and of the one that does not compile.
const FIRST_BAD: usize = 19;
const BROKEN: usize = 15;

/// The compiler command of build `i`: gcc, with the quadratic strchr linked in from FIRST_BAD on,
/// and a forced include that stops the compile for BROKEN.
fn command(dir: &Path, i: usize) -> String {
    let shim = dir.join("quadratic_strchr.o");
    if !shim.exists() {
        shim_object(dir, "quadratic_strchr.c");
    }
    let broken = dir.join("broken.h");
    std::fs::write(&broken, "#error this build of the toolchain is broken\n").unwrap();
    match i {
        BROKEN => format!("gcc -include {}", broken.display()),
        i if i >= FIRST_BAD => format!("gcc {}", shim.display()),
        _ => "gcc".to_string(),
    }
}

fn candidates_file(dir: &Path) -> PathBuf {
    let lines: Vec<String> = versions().iter().enumerate().map(|(i, v)| format!("{v}={}", command(dir, i))).collect();
    let path = dir.join("candidates.txt");
    std::fs::write(&path, format!("# oldest first\n{}\n", lines.join("\n"))).unwrap();
    path
}

fn bisect(dir: &Path, args: &[&str]) -> std::process::Output {
    run(agent()
        .args(["bisect", "--workloads", "strchr", "--lineage", "shim-libc", "--max-size", "256K"])
        .args(["--measure", "instructions", "--size-budget", "100ms", "--total-budget", "10s"])
        .args(args)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .arg("--spool-dir")
        .arg(dir.join("spool")))
}

/// The step lines printed: (version, verdict).
fn steps(out: &std::process::Output) -> Vec<(String, String)> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr
        .lines()
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            match words.as_slice() {
                [n, version, verdict, ..]
                    if n.parse::<u32>().is_ok() && ["good", "bad", "skipped"].contains(verdict) =>
                {
                    Some((version.to_string(), verdict.to_string()))
                }
                _ => None,
            }
        })
        .collect()
}

#[test]
fn bisecting_32_builds_finds_the_20th_in_at_most_8_measurements_and_skips_the_broken_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = candidates_file(dir.path());
    let v = versions();
    let out = bisect(dir.path(), &["--good", &v[0], "--bad", &v[31], "--candidates", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let steps = steps(&out);
    assert!(steps.len() <= 8, "{steps:?}");
    assert_eq!(steps[0], (v[0].clone(), "good".into()), "the ends first: {steps:?}");
    assert_eq!(steps[1], (v[31].clone(), "bad".into()), "{steps:?}");
    assert!(steps.contains(&(v[BROKEN].clone(), "skipped".into())), "{steps:?}");
    for (version, verdict) in &steps {
        let i = v.iter().position(|x| x == version).unwrap();
        let expected = if i == BROKEN {
            "skipped"
        } else if i >= FIRST_BAD {
            "bad"
        } else {
            "good"
        };
        assert_eq!(verdict, expected, "{version}");
    }
    let said = String::from_utf8_lossy(&out.stdout);
    let expected = format!(
        "first bad: {}, last good: {}, measured {} of 32 candidates",
        v[FIRST_BAD],
        v[FIRST_BAD - 1],
        steps.len()
    );
    assert!(said.contains(&expected), "{said}");
    assert!(
        text(&out).contains("failed to compile") && text(&out).contains("this build of the toolchain is broken"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_materialize_script_is_run_only_for_the_candidates_measured() {
    let dir = tempfile::tempdir().unwrap();
    let v = versions();
    // The script "fetches" a build by looking its command up, and logs each version asked for.
    let table = candidates_file(dir.path());
    let log = dir.path().join("fetched.log");
    let script = format!(
        "echo {{version}} >> {log}; echo fetching {{version}} >&2; grep -F -- \"$(printf '%s=' {{version}})\" {table} | cut -d= -f2-",
        log = log.display(),
        table = table.display()
    );
    let versions_file = dir.path().join("versions.txt");
    std::fs::write(&versions_file, v.join("\n")).unwrap();
    let out = bisect(
        dir.path(),
        &["--good", &v[0], "--bad", &v[31], "--materialize", &script, "--versions", versions_file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out));
    let fetched: Vec<String> = std::fs::read_to_string(&log).unwrap().lines().map(str::to_string).collect();
    let measured: Vec<String> = steps(&out).into_iter().map(|(v, _)| v).collect();
    assert_eq!(fetched, measured, "fetched exactly the candidates measured, in order");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("first bad: {}", v[FIRST_BAD])), "{}", text(&out));
}

#[test]
fn a_class_limit_judges_the_candidates_too() {
    let dir = tempfile::tempdir().unwrap();
    let file = candidates_file(dir.path());
    let v = versions();
    // A slope limit nothing reaches: only the class tells good from bad.
    let out = bisect(
        dir.path(),
        &[
            "--good",
            &v[0],
            "--bad",
            &v[31],
            "--max-slope",
            "9",
            "--max-class",
            "n",
            "--candidates",
            file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("first bad: {}", v[FIRST_BAD])), "{}", text(&out));
}

#[test]
fn an_inverted_range_is_reported_not_searched() {
    let dir = tempfile::tempdir().unwrap();
    let file = candidates_file(dir.path());
    let v = versions();
    // The "good" end is a build with the quadratic strchr.
    let out = bisect(dir.path(), &["--good", &v[25], "--bad", &v[31], "--candidates", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(steps(&out).len(), 2, "only the ends are measured: {}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(&format!("the good end {} measured bad: nothing to search", v[25])), "{said}");

    let out = bisect(dir.path(), &["--good", &v[0], "--bad", &v[10], "--candidates", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("measured good: nothing to search"), "{}", text(&out));
}

#[test]
fn bad_arguments_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let file = candidates_file(dir.path());
    let f = file.to_str().unwrap();
    for (args, why) in [
        (
            vec!["--good", "0.15.2", "--bad", "9.9.9", "--candidates", f],
            "the bad version 9.9.9 is not among the candidates",
        ),
        (vec!["--good", "0.16.0", "--bad", "0.15.2", "--candidates", f], "must come before"),
        (vec!["--good", "0.15.2", "--bad", "0.16.0"], "--candidates"),
        (vec!["--bad", "0.16.0", "--candidates", f], "give --good"),
        (vec!["--good", "0.15.2", "--bad", "0.16.0", "--materialize", "echo gcc", "--versions", f], "{version}"),
    ] {
        let out = bisect(dir.path(), &args);
        assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(why), "{args:?}: {}", text(&out));
    }
}

/// Submits one run of lineage `shim-libc` at `version`, built with `cc`, to the server at `url`.
fn store_run(dir: &Path, url: &str, token: &str, version: &str, cc: &str) {
    let config = dir.join(format!("run-{version}.toml"));
    std::fs::write(&config, format!("[[toolchains]]\nname = \"shim-libc\"\ncc = \"{cc}\"\nversion = \"{version}\"\n"))
        .unwrap();
    let out = run(agent()
        .args(["run", "--server", url, "--token", token, "--workloads", "strchr", "--max-size", "256K"])
        .args(["--reps", "3", "--size-budget", "100ms", "--config"])
        .arg(&config)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .arg("--spool-dir")
        .arg(dir.join("spool")));
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out));
}

fn get_json(url: &str) -> serde_json::Value {
    let body = ureq::get(url).call().unwrap().body_mut().read_to_string().unwrap();
    serde_json::from_str(&body).unwrap()
}

/// Waits up to 20 s for `done` to hold.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let began = std::time::Instant::now();
    while !done() {
        assert!(began.elapsed() < std::time::Duration::from_secs(20), "waited in vain for {what}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn a_bisection_of_a_stored_regression_is_spooled_while_the_server_is_down_then_recorded_shown_and_announced_once() {
    let dir = tempfile::tempdir().unwrap();
    // Room for every event: the candidates sent as counted runs are series of their own, with
    // findings and regressions of their own announced beside the bisections.
    let (hook, seen) = listener(vec![(200, "{}".to_string()); 40]);
    let config = dir.path().join("server.toml");
    std::fs::write(
        &config,
        format!(
            "[alerts]\npoll_ms = 100\nretry_base_ms = 100\n\n[[webhooks]]\nname = \"team\"\nurl = \"{hook}\"\n\
             secret = \"a secret of sixteen characters or more\"\nformat = \"json\"\n"
        ),
    )
    .unwrap();
    let Some((_server, url, token)) = real_server(dir.path(), &["--config", config.to_str().unwrap()]) else { return };
    let v = versions();
    let file = candidates_file(dir.path());
    store_run(dir.path(), &url, &token, &v[0], &command(dir.path(), 0));
    store_run(dir.path(), &url, &token, &v[31], &command(dir.path(), 31));
    let mut regression = 0;
    wait_until("the regression", || {
        let list = get_json(&format!("{url}/api/v1/regressions"));
        let first = list["regressions"].as_array().and_then(|r| r.first()).cloned();
        regression = first.and_then(|r| r["regression"]["id"].as_i64()).unwrap_or(0);
        regression > 0
    });
    let id = regression.to_string();

    // The server is down when the answer is ready: the bisection waits in the spool.
    let down = run(agent()
        .args(["bisect", "--regression", &id, "--server", "http://127.0.0.1:9", "--token", &token])
        .args(["--attempts", "1", "--lineage", "shim-libc", "--good", &v[0], "--bad", &v[31], "--workloads", "strchr"])
        .args(["--max-size", "256K", "--measure", "instructions", "--size-budget", "100ms", "--candidates"])
        .arg(&file)
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--spool-dir")
        .arg(dir.path().join("spool")));
    assert_eq!(down.status.code(), Some(75), "{}", text(&down));
    assert!(String::from_utf8_lossy(&down.stdout).contains(&format!("first bad: {}", v[FIRST_BAD])), "{}", text(&down));
    assert_eq!(walk(&dir.path().join("spool/bisections")).len(), 1, "{}", text(&down));

    // The next flush delivers it, once; a second flush has nothing to send. The ingest token
    // still records it, and the agent passes on the server's warning that it will not for long.
    for flush in 0..2 {
        let flushed = run(agent()
            .args(["flush", "--server", &url, "--token", &token, "--spool-dir"])
            .arg(dir.path().join("spool")));
        assert_eq!(flushed.status.code(), Some(0), "{}", text(&flushed));
        let warned = String::from_utf8_lossy(&flushed.stderr).contains("warning: the server says: ingest tokens");
        assert_eq!(warned, flush == 0, "{}", text(&flushed));
    }
    assert!(walk(&dir.path().join("spool/bisections")).iter().all(|p| p.to_string_lossy().contains("rejected")));
    let stored = get_json(&format!("{url}/api/v1/regressions/{id}"));
    let bisections = stored["bisections"].as_array().unwrap();
    assert_eq!(bisections.len(), 1, "{stored}");
    let b = &bisections[0];
    assert_eq!((b["outcome"].as_str(), b["first_bad"].as_str()), (Some("found"), Some(v[FIRST_BAD].as_str())), "{b}");
    let steps = b["steps"].as_array().unwrap();
    assert!(steps.len() <= 8, "{b}");
    assert!(steps.iter().any(|s| s["version"] == v[BROKEN] && s["verdict"] == "skipped"), "{b}");

    // Taken from the regression: lineage, range and workloads; each candidate sent as a run, with
    // a bisect token, which submits runs as well as the bisection.
    let db = format!("sqlite://{}", dir.path().join("server.db").display());
    let token = token_of_scope(&server_binary().unwrap(), &db, "bisector", "bisect");
    let direct = run(agent()
        .args([
            "bisect",
            "--regression",
            &id,
            "--server",
            &url,
            "--token",
            &token,
            "--submit",
            "--max-class",
            "n",
            "--measure",
            "instructions",
        ])
        .args(["--max-size", "256K", "--size-budget", "100ms", "--candidates"])
        .arg(&file)
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .arg("--spool-dir")
        .arg(dir.path().join("spool")));
    assert_eq!(direct.status.code(), Some(0), "{}", text(&direct));
    assert!(!String::from_utf8_lossy(&direct.stderr).contains("warning: the server says"), "{}", text(&direct));
    assert!(
        String::from_utf8_lossy(&direct.stdout).contains(&format!("first bad: {}", v[FIRST_BAD])),
        "{}",
        text(&direct)
    );
    let stored = get_json(&format!("{url}/api/v1/regressions/{id}"));
    let latest = stored["bisections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["bisection_id"] != bisections[0]["bisection_id"])
        .cloned()
        .unwrap();
    assert_eq!(latest["max_class"], "n", "the class limit is recorded: {latest}");
    let linked = latest["steps"].as_array().unwrap().iter().filter(|s| s["run_stored"] == true).count();
    assert!(linked >= 6, "the measured candidates' runs are stored and linked: {latest}");

    let page = ureq::get(format!("{url}/regressions/{id}")).call().unwrap().body_mut().read_to_string().unwrap();
    assert!(
        page.contains(&format!("bisected to {}", v[FIRST_BAD].replace('+', "&#43;")))
            || page.contains(&format!("bisected to {}", v[FIRST_BAD])),
        "{page}"
    );
    let bisected = || seen.lock().unwrap().iter().filter(|s| s.body.contains("\"regression.bisected\"")).count();
    wait_until("two regression.bisected deliveries", || bisected() >= 2);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(bisected(), 2, "one per bisection, never repeated");
}
