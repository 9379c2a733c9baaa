//! A spool that cannot keep runs: its directory under a regular file, on a full disk, on a
//! read-only file system. The agent says so, exits non-zero, and never drops a run silently.
//!
//! The full and read-only cases mount a small tmpfs (`helpers::tmpfs`, shared with the server's
//! tests), which needs root; without it they are skipped with a note.

use crate::helpers::tmpfs::{fill, Tmpfs};
use crate::helpers::*;
use std::path::{Path, PathBuf};
use std::process::Output;

/// What a spool directory holds besides `keep`: runs, temporary files, anything.
fn leftovers(dir: &Path, keep: &[&str]) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| !keep.iter().any(|k| p.ends_with(k))).collect())
        .unwrap_or_default()
}

/// The agent exits 1 (not 75, "kept for later"), names the run, and says it was not saved.
fn assert_not_kept(out: &Output, id: &str, cause: &str) {
    let said = text(out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains(&format!("run {id} could not be kept in the spool")), "{said}");
    assert!(said.contains(cause), "the cause {cause:?} is shown: {said}");
    assert!(said.contains(&format!("run {id} could not be delivered")) && said.contains("was not saved"), "{said}");
}

#[test]
fn a_spool_under_a_regular_file_and_a_server_down_is_an_error_that_says_the_run_was_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (file, id) = run_file(dir.path());
    let blocker = dir.path().join("not-a-directory");
    std::fs::write(&blocker, "a file where the spool's parent should be").unwrap();
    let out = submit(&unreachable_server(), &file, &blocker.join("spool"));
    assert_not_kept(&out, &id, "Not a directory");
    assert!(file.is_file(), "the run's own file is untouched");
}

#[test]
fn a_spool_that_cannot_keep_runs_does_not_stop_delivery() {
    let dir = tempfile::tempdir().unwrap();
    let (file, id) = run_file(dir.path());
    let blocker = dir.path().join("not-a-directory");
    std::fs::write(&blocker, "").unwrap();
    let (url, seen) = listener(vec![stored(&id, true)]);
    let out = submit(&url, &file, &blocker.join("spool"));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "a broken spool is reported even when the run got through: {said}");
    assert!(said.contains(&format!("run {id} stored at /runs/{id}")), "{said}");
    assert!(said.contains("could not be kept in the spool"), "{said}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn a_full_disk_is_an_error_and_leaves_no_half_written_run() {
    let Some(fs) = Tmpfs::mount(64 * 1024, "") else { return };
    let spool = fs.path().join("spool");
    std::fs::create_dir(&spool).unwrap();
    fill(fs.path());
    let dir = tempfile::tempdir().unwrap();
    let (file, id) = run_file(dir.path());
    let out = submit(&unreachable_server(), &file, &spool);
    assert_not_kept(&out, &id, "No space left on device");
    assert!(leftovers(&spool, &[]).is_empty(), "no partial file: {:?}", leftovers(&spool, &[]));

    // Space again: the same submission is kept for later, as usual.
    fs.free();
    let out = submit(&unreachable_server(), &file, &spool);
    assert_eq!(out.status.code(), Some(75), "{}", text(&out));
    assert_eq!(spooled(&spool), [format!("{id}.json")]);
}

#[test]
fn a_read_only_spool_is_an_error_and_a_stored_run_left_in_it_is_sent_once_more_harmlessly() {
    let Some(fs) = Tmpfs::mount(1024 * 1024, "") else { return };
    let spool = fs.path().join("spool");
    let dir = tempfile::tempdir().unwrap();
    let (file, id) = run_file(dir.path());
    // One run already waits in the spool when the file system turns read-only.
    assert_eq!(submit(&unreachable_server(), &file, &spool).status.code(), Some(75));
    fs.remount("ro");

    let (second, second_id) = {
        let sub = dir.path().join("second");
        std::fs::create_dir(&sub).unwrap();
        run_file(&sub)
    };
    let out = submit(&unreachable_server(), &second, &spool);
    assert_not_kept(&out, &second_id, "Read-only file system");

    // Flushing delivers the waiting run but cannot remove it: an error, and the run stays.
    let (url, seen) = listener(vec![stored(&id, true)]);
    let out = run(agent().args(["flush", "--server", &url, "--token", "sw_test"]).arg("--spool-dir").arg(&spool));
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains(&format!("run {id} stored")) && said.contains("stays in the spool"), "{said}");
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert_eq!(spooled(&spool), [format!("{id}.json")]);

    // Writable again: the next flush is answered "already stored" and empties the spool.
    fs.remount("rw");
    let (url, seen) = listener(vec![stored(&id, false)]);
    let out = run(agent().args(["flush", "--server", &url, "--token", "sw_test"]).arg("--spool-dir").arg(&spool));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains(&format!("run {id} already stored")));
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(spooled(&spool).is_empty());
}
