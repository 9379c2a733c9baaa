//! The server's shape holds: modules depend on each other in one direction only
//! (`scripts/import-circles` finds no import circle), and no source file grows past 500 lines.

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn the_server_has_no_import_circles() {
    let out = Command::new("python3")
        .arg("scripts/import-circles")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("python3 runs scripts/import-circles");
    assert!(
        out.status.success(),
        "scripts/import-circles exited with {}:\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
fn no_server_source_file_is_over_500_lines_before_its_tests() {
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    assert!(files.len() > 20, "found the server's sources: {files:?}");
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            // An inline test module at the end does not count.
            let lines = text.lines().take_while(|l| !l.starts_with("#[cfg(test)]")).count();
            (lines > 500).then(|| format!("{}: {lines} lines", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these by concern: {long:?}");
}
