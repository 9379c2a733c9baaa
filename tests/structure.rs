//! The server's modules depend on each other in one direction only: `scripts/import-circles` finds no import circle.

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
