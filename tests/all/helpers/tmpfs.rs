//! A small real file system that a test can fill and free: a tmpfs mounted on a temporary
//! directory. Mounting needs root (permission bits do not stop root, so a mode-0500 directory
//! would prove nothing about a full or read-only disk); without it, `mount` answers `None` with a
//! note and the test skips. Shared by the server's and the agent's tests.

use std::io::Write;
use std::path::Path;
use std::process::Command;

/// A tmpfs mounted on a temporary directory, unmounted when dropped.
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` bytes with extra mount `options` (`,mode=0700,uid=…`); `None`
    /// without the privilege.
    pub fn mount(size: usize, options: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let opts = format!("size={size}{options}");
        let out = Command::new("mount").args(["-t", "tmpfs", "-o", &opts, "tmpfs"]).arg(dir.path()).output().ok()?;
        if !out.status.success() {
            eprintln!("note: cannot mount a tmpfs ({}); skipped", String::from_utf8_lossy(&out.stderr).trim());
            return None;
        }
        Some(Tmpfs { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    // Only the agent's spool tests remount; this file is compiled into both crates' tests.
    #[allow(dead_code)]
    pub fn remount(&self, options: &str) {
        let status = Command::new("mount").args(["-o", &format!("remount,{options}")]).arg(self.path()).status();
        assert!(status.unwrap().success(), "remount {options}");
    }

    /// Fills the file system with a file `filler` until a write fails with "no space", then
    /// gives `spare` bytes of it back.
    // Only the server's storage tests leave room; the agent's fill the file system whole.
    #[allow(dead_code)]
    pub fn fill_leaving(&self, spare: u64) {
        let filler = self.path().join("filler");
        fill(self.path());
        let len = std::fs::metadata(&filler).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(&filler).unwrap().set_len(len.saturating_sub(spare)).unwrap();
    }

    /// Removes what `fill` or `fill_leaving` wrote.
    pub fn free(&self) {
        std::fs::remove_file(self.path().join("filler")).unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Fills the file system under `dir` with a file `filler` until a write fails with "no space".
pub fn fill(dir: &Path) {
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![0u8; 4096];
    loop {
        match f.write_all(&chunk) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::StorageFull => return,
            Err(e) => panic!("filling {}: {e}", dir.display()),
        }
    }
}
