//! The contract catalogue with real toolchains: what each libc's functions cost on their axes,
//! what they read past their bounds, what they do not provide; an archive linked ahead of glibc;
//! a static musl's version; and a team's own workload held to the class it declares.

use crate::helpers::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Runs `measure` of `workloads` with each toolchain (`NAME=COMMAND`) into `dir`, and returns its
/// output and the contract table's cells: probe → toolchain → cell.
pub(super) fn contracts(dir: &Path, toolchains: &[String], extra: &[&str], workloads: &str) -> (String, Cells) {
    let out_file = dir.join("runs.json");
    let mut cmd = agent();
    cmd.arg("measure").args(["--workloads", workloads, "--reps", "3"]);
    for t in toolchains {
        cmd.arg("--toolchain").arg(t);
    }
    let out = run(cmd.args(extra).arg("--cache-dir").arg(dir.join("cache")).arg("--out").arg(&out_file));
    let said = text(&out);
    (said.clone(), cells(&said))
}

pub(super) type Cells = BTreeMap<String, BTreeMap<String, String>>;

/// The contract table's cells, read back from what the agent printed: each toolchain's column
/// starts where its name does in the header.
fn cells(said: &str) -> Cells {
    let mut lines = said.lines().skip_while(|l| !l.starts_with("header "));
    let Some(head) = lines.next() else { return Cells::new() };
    let head: Vec<char> = head.chars().collect();
    let mut starts = Vec::new();
    for (i, c) in head.iter().enumerate() {
        if *c != ' ' && (i == 0 || head[i - 1] == ' ') {
            starts.push(i);
        }
    }
    let columns = &starts[3..];
    let name = |at: usize| head[at..].iter().take_while(|c| **c != ' ').collect::<String>();
    let mut cells = Cells::new();
    for line in lines.take_while(|l| l.contains("contract.")) {
        let chars: Vec<char> = line.chars().collect();
        let probe = line.split_whitespace().nth(1).unwrap().to_string();
        for (i, &at) in columns.iter().enumerate() {
            let end = columns.get(i + 1).copied().unwrap_or(chars.len()).min(chars.len());
            let cell: String = chars.get(at.min(end)..end).unwrap_or(&[]).iter().collect();
            cells.entry(probe.clone()).or_default().insert(name(at), cell.trim().to_string());
        }
    }
    cells
}

pub(super) fn cell<'a>(cells: &'a Cells, probe: &str, toolchain: &str) -> &'a str {
    cells.get(probe).and_then(|c| c.get(toolchain)).map_or("", String::as_str)
}

#[test]
fn each_libc_is_judged_function_by_function_against_its_contracts() {
    let dir = tempfile::tempdir().unwrap();
    let mut toolchains = vec!["gcc-glibc=gcc".to_string()];
    toolchains.extend(which("musl-gcc").map(|_| "musl-gcc=musl-gcc".to_string()));
    let zigs = zigs();
    for z in &zigs {
        let v = z.parent().unwrap().parent().unwrap().file_name().unwrap().to_string_lossy().replace('.', "_");
        toolchains.push(format!("zig-{v}={} cc -target x86_64-linux-musl", z.display()));
    }
    let probes = "contract.strchr.remaining,contract.wcsncmp.bound,contract.strlcpy.length,contract.sscanf.remaining";
    let (said, cells) = contracts(dir.path(), &toolchains, &[], probes);
    assert_eq!(cells.len(), 4, "{said}");

    // glibc: the known finding shows, and a function it lacks is its own status.
    // Held is the verdict; O(1) may read as O(log n), which the contract allows (a logarithm is what
    // noise bends a flat line by).
    assert!(cell(&cells, "contract.strchr.remaining", "gcc-glibc").starts_with("held"), "{said}");
    assert!(cell(&cells, "contract.sscanf.remaining", "gcc-glibc").starts_with("OVER O(n"), "{said}");
    assert_eq!(cell(&cells, "contract.strlcpy.length", "gcc-glibc"), "not provided", "{said}");
    assert!(cell(&cells, "contract.wcsncmp.bound", "gcc-glibc").starts_with("held"), "{said}");
    if which("musl-gcc").is_some() {
        for probe in ["contract.strchr.remaining", "contract.sscanf.remaining", "contract.strlcpy.length"] {
            assert!(cell(&cells, probe, "musl-gcc").starts_with("held"), "{probe}: {said}");
        }
    }
    // Zig 0.16.0 breaks strchr's contract and reads past wcsncmp's bound; 0.15.2 holds both.
    for (zig, broken) in [("zig-0_15_2", false), ("zig-0_16_0", true)] {
        if !cells.values().any(|c| c.contains_key(zig)) {
            continue;
        }
        let strchr = cell(&cells, "contract.strchr.remaining", zig);
        let wcsncmp = cell(&cells, "contract.wcsncmp.bound", zig);
        if broken {
            assert!(strchr.starts_with("OVER O(n"), "{zig}: {said}");
            assert_eq!(wcsncmp, "✗ crashed", "{zig}: {said}");
            assert!(said.contains("read past its bound of"), "{said}");
        } else {
            assert!(strchr.starts_with("held"), "{zig}: {said}");
            assert!(wcsncmp.starts_with("held"), "{zig}: {said}");
        }
    }
    // Over-contract and crashed rows come first.
    let first = said.lines().skip_while(|l| !l.starts_with("header ")).nth(1).unwrap();
    assert!(first.contains("OVER") || first.contains('✗'), "{said}");

    let runs: Vec<Value> = serde_json::from_slice(&std::fs::read(dir.path().join("runs.json")).unwrap()).unwrap();
    let glibc = runs.iter().find(|r| r["toolchain"]["name"] == "gcc-glibc").unwrap();
    let probe = |name: &str| glibc["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap().clone();
    let strchr = probe("contract.strchr.remaining");
    assert_eq!(strchr["contract"]["expected"], "1", "{strchr}");
    assert!(strchr["contract"]["consequence"].as_str().unwrap().contains("O(n²)"), "{strchr}");
    let strlcpy = probe("contract.strlcpy.length");
    assert_eq!((strlcpy["not_provided"].as_bool(), strlcpy["measurements"].as_array().unwrap().len()), (Some(true), 0));
}

#[test]
fn an_archive_linked_ahead_of_glibc_is_judged_for_exactly_the_functions_it_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("overlay");
    std::fs::create_dir_all(&lib).unwrap();
    let objects: Vec<String> = ["overlay_strcspn.c", "overlay_strndup.c", "overlay_bsearch.c"]
        .iter()
        .map(|src| {
            let obj = lib.join(src.replace(".c", ".o"));
            let out = run(std::process::Command::new("gcc").args(["-O2", "-c"]).arg(fixture(src)).arg("-o").arg(&obj));
            assert!(out.status.success(), "{}", text(&out));
            obj.display().to_string()
        })
        .collect();
    let archive = lib.join("liboverlay.a");
    let out = run(std::process::Command::new("ar").arg("rcs").arg(&archive).args(&objects));
    assert!(out.status.success(), "{}", text(&out));

    let link = format!("gcc-overlay={}", archive.display());
    let toolchains = ["gcc-glibc=gcc".to_string(), "gcc-overlay=gcc".to_string()];
    // The three it replaces, and their neighbours in the catalogue that it does not: measured in
    // one build with the same glibc, these must read alike. (Not the whole catalogue: glibc's
    // `qsort` of equal keys grows past n log n in time at its largest sizes, and one column can
    // read it O(n²) where the other does not.)
    let probes = "contract.bsearch.*,contract.strcspn.*,contract.strndup.*,contract.strspn.*,contract.strpbrk.*,\
                  contract.strdup.*,contract.strchr.*,contract.memchr.*,contract.qsort.sorted";
    let (said, cells) = contracts(dir.path(), &toolchains, &["--link-after", &link], probes);
    assert!(said.contains("toolchain gcc-overlay: gcc") && said.contains("+ liboverlay.a"), "{said}");
    let bad = |toolchain: &str| -> Vec<String> {
        let functions = cells
            .iter()
            .filter(|(_, c)| c.get(toolchain).is_some_and(|v| v.starts_with("OVER") || v.starts_with('✗')))
            .map(|(probe, _)| probe.split('.').nth(1).unwrap().to_string());
        let mut functions: Vec<String> = functions.collect();
        functions.dedup();
        functions
    };
    let (glibc, overlay) = (bad("gcc-glibc"), bad("gcc-overlay"));
    let added: Vec<&String> = overlay.iter().filter(|f| !glibc.contains(f)).collect();
    let rows: Vec<String> = cells
        .iter()
        .filter(|(p, _)| added.iter().any(|f| p.contains(&format!(".{f}."))))
        .map(|(p, c)| format!("{p}: {c:?}"))
        .collect();
    assert_eq!(added, ["bsearch", "strcspn", "strndup"], "glibc {glibc:?}, with the overlay {overlay:?}: {rows:#?}");
    assert!(said.contains("read past its bound of"), "the strndup that reads to the terminator: {said}");
}

#[test]
fn below_its_sizes_a_probe_refuses_to_set_up_rather_than_read_a_correct_libc_as_crashing_or_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(agent()
        .args(["build", "--toolchain", "gcc-glibc=gcc", "--workloads", "contract.strlen.length", "--cache-dir"])
        .arg(dir.path()));
    assert!(out.status.success(), "{}", text(&out));
    let binary = walk(dir.path()).into_iter().find(|p| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        name.starts_with("contracts-") && !name.ends_with(".json") && p.parent().is_some_and(|d| !d.ends_with("src"))
    });
    let binary = binary.unwrap_or_else(|| panic!("no contracts binary in {:?}", walk(dir.path())));
    // Every size a sweep, --start-size or widening may reach below a probe's own start: exit 0
    // (right), 2 (set-up refused) or 4 (not provided), never a crash or a wrong count.
    let mut odd = Vec::new();
    for probe in slopewatch_agent::builds::workloads::probes() {
        let sizes = std::iter::successors(Some(1u64), |s| Some(s * 2)).take_while(|s| *s < probe.start);
        for size in sizes {
            let out = std::process::Command::new(&binary)
                .args([size.to_string(), "1".to_string()])
                .env("SLOPEWATCH_PROBE", &probe.name)
                .env("SLOPEWATCH_MEASURE", "wall")
                .output()
                .unwrap();
            if !matches!(out.status.code(), Some(0 | 2 | 4)) {
                odd.push(format!(
                    "{} at {size}: {:?} {}",
                    probe.name,
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
    }
    assert!(odd.is_empty(), "{odd:#?}");
}

#[test]
fn a_static_musl_is_versioned_like_the_musl_it_links_dynamically() {
    if which("musl-gcc").is_none() {
        eprintln!("skipped: no musl-gcc");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = run(agent()
        .args(["toolchains", "--toolchain", "musl-static=musl-gcc -static", "--toolchain", "musl-gcc=musl-gcc"])
        .arg("--cache-dir")
        .arg(dir.path()));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let versions: Vec<&str> = said.lines().filter(|l| l.trim_start().starts_with("version:")).collect();
    assert_eq!(versions.len(), 2, "{said}");
    assert_eq!(versions[0], versions[1], "{said}");
    assert!(versions[0].contains("(libc musl)") && versions[0].contains("1."), "{said}");
}

#[test]
fn a_team_s_own_workload_is_held_to_the_class_it_expects() {
    let dir = tempfile::tempdir().unwrap();
    let example = dir.path().join("example");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/workloads"), &example);
    let config = example.join("slopewatch-agent.toml");
    let original = std::fs::read_to_string(&config).unwrap();
    let check = |expect: &str| {
        let line = original.lines().find(|l| l.starts_with("name = \"tokenize\"")).unwrap();
        std::fs::write(&config, original.replacen(line, &format!("{line}\nexpect = \"{expect}\""), 1)).unwrap();
        run(agent()
            .args(["check", "--workloads", "tokenize", "--max-size", "256K", "--reps", "3", "--size-budget", "100ms"])
            .arg("--config")
            .arg(&config)
            .arg("--cache-dir")
            .arg(dir.path().join("cache")))
    };
    // The example's tokenizer walks its input once: O(n), not the O(1) of a call that stops early.
    let held_to_one = check("O(1)");
    let said = text(&held_to_one);
    assert_eq!(held_to_one.status.code(), Some(1), "{said}");
    assert!(said.contains("OVER CONTRACT O(1)") && said.contains("over contract: gcc-glibc/tokenize"), "{said}");
    let held_to_n = check("n");
    assert!(gate_passed(&held_to_n), "{}", text(&held_to_n));
    std::fs::write(&config, original.replace("name = \"tokenize\"", "name = \"contract.mine.x\"")).unwrap();
    let out = run(agent().arg("check").arg("--config").arg(&config));
    assert!(text(&out).contains("kept for the probes of the contract catalogue"), "{}", text(&out));
}

#[test]
fn a_server_keeps_the_probes_contracts_and_an_older_one_is_sent_them_as_plain_workloads() {
    let dir = tempfile::tempdir().unwrap();
    let measure = |out: &Path| {
        run(agent()
            .args([
                "measure",
                "--toolchain",
                "gcc-glibc=gcc",
                "--workloads",
                "contract.strchr.*,contract.strlcpy.length",
            ])
            .args(["--reps", "3"])
            .arg("--cache-dir")
            .arg(dir.path().join("cache"))
            .arg("--out")
            .arg(out))
    };
    let file = dir.path().join("run.json");
    assert!(measure(&file).status.success());

    // A server of this release stores them as sent.
    if let Some((_server, url, token)) = real_server(dir.path(), &[]) {
        let out = run(agent()
            .args(["submit", "--server", &url, "--token", &token])
            .arg(&file)
            .arg("--spool-dir")
            .arg(dir.path().join("spool")));
        let said = text(&out);
        assert!(out.status.success() && !said.contains("does not accept contracts"), "{said}");
        wait_for_summary(&url, "contract.strchr.remaining", "gcc-glibc", &token);
    }

    // One that predates contracts refuses the fields by name: sent again without them.
    let refusal = r#"{"error":{"status":422,"code":"invalid_field","message":"workloads[0].contract: unknown field `contract`, expected one of `name`, `size_unit`","field":"workloads[0].contract"}}"#;
    let id = serde_json::from_slice::<Value>(&std::fs::read(&file).unwrap()).unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (url, seen) = listener(vec![(422, refusal.into()), stored(&id, true)]);
    let out = submit(&url, &file, &dir.path().join("spool-old"));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("does not accept contracts") && said.contains("contract.strlcpy.length"), "{said}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "{said}");
    let resent: Value = serde_json::from_str(&seen[1].body).unwrap();
    let names: Vec<&str> =
        resent["workloads"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"contract.strlcpy.length") && names.contains(&"contract.strchr.remaining"), "{names:?}");
    assert!(resent["workloads"].as_array().unwrap().iter().all(|w| w.get("contract").is_none()), "{resent}");
}
