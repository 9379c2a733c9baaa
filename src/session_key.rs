//! The key that signs session cookies and their CSRF tokens. It comes from configuration, never
//! from the database, so whoever can read the database file alone cannot forge a session.

use anyhow::Context;
use rand::RngCore;
use std::fmt;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The fewest characters a configured key may have.
pub const MIN_LEN: usize = 32;

/// A session-signing key; its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionKey(String);

impl fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionKey(***)")
    }
}

impl SessionKey {
    /// A key given in configuration; `what` names where, for the error.
    pub fn new(key: &str, what: &str) -> anyhow::Result<SessionKey> {
        let key = key.trim();
        anyhow::ensure!(key.len() >= MIN_LEN, "{what} must be at least {MIN_LEN} characters");
        Ok(SessionKey(key.to_string()))
    }

    /// 256 random bits, as 64 hex characters.
    pub fn generate() -> SessionKey {
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        SessionKey(hex::encode(bytes))
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }

    /// The key in the file at `path`, which must exist.
    pub fn read(path: &Path) -> anyhow::Result<SessionKey> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the session key file {}", path.display()))?;
        if std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o077 != 0) {
            tracing::warn!(path = %path.display(), "the session key file can be read by other users; chmod 600 it");
        }
        SessionKey::new(&text, &format!("the session key in {}", path.display()))
    }

    /// The key in the file at `path`, made (readable by its owner only) when there is none yet.
    /// Servers starting together agree: the file appears whole or not at all, and the first wins.
    pub fn read_or_create(path: &Path) -> anyhow::Result<SessionKey> {
        if path.exists() {
            return SessionKey::read(path);
        }
        let key = SessionKey::generate();
        let draft = PathBuf::from(format!("{}.{}.tmp", path.display(), std::process::id()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&draft)
            .and_then(|mut f| f.write_all(format!("{}\n", key.0).as_bytes()).and_then(|()| f.sync_all()));
        let linked = written.and_then(|()| std::fs::hard_link(&draft, path));
        let _ = std::fs::remove_file(&draft);
        match linked {
            Ok(()) => {
                tracing::info!(path = %path.display(), "generated the session key");
                Ok(key)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => SessionKey::read(path),
            Err(e) => Err(e).with_context(|| format!("cannot write the session key file {}", path.display())),
        }
    }
}

/// Where the single-server default keeps its key: beside the SQLite database file.
pub fn default_file(database_file: &Path) -> PathBuf {
    let mut name = database_file.as_os_str().to_owned();
    name.push(".session-key");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_key_file_is_private_and_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = default_file(&dir.path().join("sw.db"));
        assert_eq!(path.file_name().unwrap(), "sw.db.session-key");
        let made = SessionKey::read_or_create(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(SessionKey::read_or_create(&path).unwrap(), made);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no draft is left behind");
        assert!(!format!("{made:?}").contains(&made.0));
    }

    #[test]
    fn short_keys_are_refused() {
        assert!(SessionKey::new("short", "SLOPEWATCH_SESSION_KEY").unwrap_err().to_string().contains("at least 32"));
        assert!(SessionKey::new(&"k".repeat(32), "x").is_ok());
    }
}
