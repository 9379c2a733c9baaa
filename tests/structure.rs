//! Every crate's shape holds: in the server (`src/`), core (`core/src`) and the agent
//! (`ingest-agent/src`), modules depend on each other in one direction only
//! (`scripts/import-circles` finds no import circle), no source file grows past 500 lines
//! before its inline tests, and the agent reads what the server answers with core's types only.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates' source folders, from the repository's root.
const CRATES: [&str; 3] = ["src", "core/src", "ingest-agent/src"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `scripts/import-circles` on one crate's sources and fails with what it printed.
fn assert_no_import_circles(src: &str) {
    let out = Command::new("python3")
        .arg("scripts/import-circles")
        .arg(src)
        .current_dir(root())
        .output()
        .expect("python3 runs scripts/import-circles");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts/import-circles {src} exited with {}:\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("import circles: 0 top-level, 0 between siblings"), "{src}: {stdout}");
}

#[test]
fn the_server_has_no_import_circles() {
    assert_no_import_circles("src");
}

#[test]
fn core_has_no_import_circles() {
    assert_no_import_circles("core/src");
}

#[test]
fn the_agent_has_no_import_circles() {
    assert_no_import_circles("ingest-agent/src");
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn no_source_file_of_any_crate_is_over_500_lines_before_its_tests() {
    let mut long = Vec::new();
    for src in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(src), &mut files);
        assert!(files.len() > 10, "found the sources of {src}: {files:?}");
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            // An inline test module at the end does not count.
            let lines = text.lines().take_while(|l| !l.starts_with("#[cfg(test)]")).count();
            if lines > 500 {
                long.push(format!("{}: {lines} lines", f.strip_prefix(root()).unwrap_or(f).display()));
            }
        }
    }
    assert!(long.is_empty(), "split these by concern: {long:?}");
}

/// The lines of `text` (numbered from 1) that declare a type read from JSON (a derived or
/// implemented `Deserialize`, the derive possibly over several lines) or read untyped JSON
/// (`serde_json::Value`).
fn json_readers(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut derive: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if let Some((_, attribute)) = derive.as_mut() {
            attribute.push_str(code);
        } else if code.contains("#[derive(") || (code.contains("derive(") && code.contains("cfg_attr")) {
            derive = Some((n + 1, code.to_string()));
        }
        if let Some((at, attribute)) = derive.take_if(|(_, a)| a.contains(")]")) {
            if attribute.contains("Deserialize") {
                found.push((at, attribute.trim().to_string()));
            }
        }
        let implements = code.contains("impl<'de>") || code.contains("Deserialize<'de> for");
        let untyped =
            code.contains("serde_json::Value") || (code.contains("use serde_json::") && code.contains("Value"));
        if implements || untyped {
            found.push((n + 1, code.trim().to_string()));
        }
    }
    found
}

/// What the server answers the agent reads with core's types (`slopewatch_core::answers`), the
/// ones the server writes, so agent and server cannot drift apart: under `ingest-agent/src/server/`,
/// where everything that talks to the server lives, no file but the spool's (`spool.rs`, whose
/// records are the agent's own file format) derives or implements `Deserialize` or reads a
/// `serde_json::Value`.
#[test]
fn the_agent_declares_no_type_of_its_own_for_what_the_server_answers() {
    let mut files = Vec::new();
    rust_files(&root().join("ingest-agent/src/server"), &mut files);
    assert!(files.iter().any(|f| f.ends_with("client.rs")), "found the agent's server module: {files:?}");
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("spool.rs")) {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, what) in json_readers(&text) {
            found.push(format!("{}:{n}: {what}", f.strip_prefix(root()).unwrap_or(f).display()));
        }
    }
    assert!(found.is_empty(), "read the server's answers with slopewatch_core::answers instead: {found:?}");
}

#[test]
fn json_readers_are_found_however_they_are_written() {
    let text = "use serde::Deserialize;\n#[derive(Debug, Deserialize)]\nstruct A;\n#[derive(\n    Clone,\n    \
                serde::Deserialize,\n)]\nstruct B;\nimpl<'de> serde::Deserialize<'de> for C {}\n\
                let v: serde_json::Value = x;\nuse serde_json::{json, Value};\n#[derive(Serialize)]\nstruct D;\n\
                // serde_json::Value in a comment\n";
    let lines: Vec<usize> = json_readers(text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(lines, [2, 4, 9, 10, 11]);
}
