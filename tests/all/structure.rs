//! Every crate's shape holds: in the server (`src/`), core (`core/src`) and the agent
//! (`ingest-agent/src`), modules depend on each other in one direction only
//! (`scripts/import-circles` finds no import circle), no source file grows past 500 lines
//! before its inline tests, and the integration tests are one binary, `tests/all`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates' folders, from the repository's root (the server's is the root itself).
const CRATES: [&str; 3] = ["", "core", "ingest-agent"];

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
    for krate in CRATES {
        let src = Path::new(krate).join("src");
        let mut files = Vec::new();
        rust_files(&root().join(&src), &mut files);
        assert!(files.len() > 10, "found the sources of {}: {files:?}", src.display());
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

/// Each crate's integration tests are one binary, `tests/all`, with a module per subject: a
/// `tests/*.rs` file or a `tests/*/main.rs` beside it (or a `[[test]]` in the manifest) would be
/// a second binary linking the whole crate again.
#[test]
fn every_crate_has_one_integration_test_binary() {
    let mut others = Vec::new();
    for krate in CRATES {
        let tests = root().join(krate).join("tests");
        assert!(tests.join("all/main.rs").is_file(), "{} has no tests/all/main.rs", tests.display());
        for entry in std::fs::read_dir(&tests).unwrap() {
            let path = entry.unwrap().path();
            let target = if path.is_dir() {
                path.file_name().is_some_and(|n| n != "all") && path.join("main.rs").is_file()
            } else {
                path.extension().is_some_and(|e| e == "rs")
            };
            if target {
                others.push(path.strip_prefix(root()).unwrap_or(&path).display().to_string());
            }
        }
        let manifest = Path::new(krate).join("Cargo.toml");
        if std::fs::read_to_string(root().join(&manifest)).unwrap().lines().any(|l| l.trim() == "[[test]]") {
            others.push(format!("[[test]] in {}", manifest.display()));
        }
    }
    assert!(others.is_empty(), "make these modules of tests/all (declared in its main.rs): {others:?}");
}
