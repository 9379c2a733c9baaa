//! Helpers shared by the agent's integration tests: running the real binary, real compilers.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn agent() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_slopewatch-agent"));
    // Tests must not read or write the user's own cache, spool or token.
    for var in
        ["SLOPEWATCH_TOKEN", "SLOPEWATCH_TOKEN_FILE", "SLOPEWATCH_SERVER", "SLOPEWATCH_CONFIG", "SLOPEWATCH_SPOOL_DIR"]
    {
        c.env_remove(var);
    }
    c
}

pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("the agent runs");
    eprintln!(
        "--- stdout\n{}--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Compiles a fixture into an object with gcc, to be linked ahead of libc.
pub fn shim_object(dir: &Path, name: &str) -> PathBuf {
    let obj = dir.join(name.replace(".c", ".o"));
    let status = Command::new("gcc").args(["-O2", "-c"]).arg(fixture(name)).arg("-o").arg(&obj).status().unwrap();
    assert!(status.success());
    obj
}

pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(program)).find(|p| p.is_file())
}

/// Zig releases to test: `SLOPEWATCH_TEST_ZIG` (colon-separated paths) or the CI install paths.
pub fn zigs() -> Vec<PathBuf> {
    if let Some(list) = std::env::var_os("SLOPEWATCH_TEST_ZIG") {
        return std::env::split_paths(&list).filter(|p| p.is_file()).collect();
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/opt/slopewatch-zig")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("ziglang/zig"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found
}

/// The slope per (toolchain, workload) of a file written by `measure --out`.
pub fn slopes(path: &Path) -> Vec<(String, String, f64)> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let runs = match v {
        serde_json::Value::Array(a) => a,
        one => vec![one],
    };
    let mut out = Vec::new();
    for r in runs {
        let run = slopewatch_core::wire::RunSubmission::from_json(&serde_json::to_vec(&r).unwrap()).unwrap();
        for w in &run.workloads {
            let pts: Vec<(f64, f64)> = w.measurements.iter().map(|m| (m.size as f64, m.median_ns())).collect();
            out.push((run.toolchain.name.clone(), w.name.clone(), slopewatch_core::fit::fit(&pts).unwrap().slope));
        }
    }
    out
}
