//! SQLite serves one server at a time. A server holds an exclusive lock on a file beside the
//! database (`slopewatch.db.lock` for `slopewatch.db`) for as long as it runs, with its host, pid
//! and start time written in it, so a second server started on the same database is refused and
//! told who holds it. The kernel drops the lock when the holder exits, however it exits, so a
//! server killed outright never blocks the next one.

use crate::store::sqlite_file;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// The lock a server holds on its SQLite database until it is dropped.
#[derive(Debug)]
pub struct ServerLock {
    _file: File,
    pub path: PathBuf,
}

/// Why the server may not serve this database.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{database} is already served by another slopewatch server ({holder}; lock file {}). SQLite \
         serves one server at a time: stop the other server first, or run several servers on one Postgres \
         database instead",
        path.display()
    )]
    Held { database: String, holder: String, path: PathBuf },
    #[error("cannot lock {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

impl ServerLock {
    /// Takes the server lock of the SQLite database at `url`: `None` for Postgres (where several
    /// servers share a database) and for in-memory databases.
    pub fn acquire(url: &str) -> Result<Option<ServerLock>, LockError> {
        let Some(database) = sqlite_file(url) else { return Ok(None) };
        let mut name = database.clone().into_os_string();
        name.push(".lock");
        let path = PathBuf::from(name);
        let io = |source| LockError::Io { path: path.clone(), source };
        // Not truncated on opening: a server that does not get the lock reads who holds it.
        let mut file = File::options().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
        if let Err(e) = try_lock_exclusive(&file) {
            if e.kind() != std::io::ErrorKind::WouldBlock {
                return Err(io(e));
            }
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = match holder.trim() {
                "" => "holder unknown".to_string(),
                said => said.to_string(),
            };
            return Err(LockError::Held { database: database.display().to_string(), holder, path });
        }
        let since =
            time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
        let said = format!("pid {} on host {}, since {since}\n", std::process::id(), crate::instance::hostname());
        file.set_len(0).and_then(|()| file.rewind()).and_then(|()| file.write_all(said.as_bytes())).map_err(io)?;
        Ok(Some(ServerLock { _file: file, path }))
    }
}

/// `flock(LOCK_EX | LOCK_NB)`: an advisory lock on the open file, released when it is closed or
/// the process ends.
fn try_lock_exclusive(file: &File) -> std::io::Result<()> {
    // SAFETY: flock only reads the descriptor, which `file` keeps open for the duration of the call.
    let done = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sqlite_files_are_locked() {
        assert!(ServerLock::acquire("postgres://sw@db/sw").unwrap().is_none());
        assert!(ServerLock::acquire("sqlite::memory:").unwrap().is_none());
    }

    #[test]
    fn a_second_lock_on_the_same_database_names_the_first_holder() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("sw.db").display());
        let first = ServerLock::acquire(&url).unwrap().expect("a SQLite file is locked");
        let second = ServerLock::acquire(&url).unwrap_err().to_string();
        assert!(second.contains(&format!("pid {}", std::process::id())), "{second}");
        assert!(second.contains("one server at a time"), "{second}");
        drop(first);
        assert!(ServerLock::acquire(&url).unwrap().is_some(), "free again once the holder is gone");
    }
}
