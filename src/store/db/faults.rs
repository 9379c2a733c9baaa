//! Storage faults: the database refusing a write because the disk is full, an I/O error, a lock
//! another process holds, or a read-only file system, told apart from a query that is wrong. Each
//! is a condition that passes; the HTTP layer answers it with a 503 to retry later, and the store
//! remembers the last write's outcome for the health check and counts faults for the metrics.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// Why the database could not write, when the cause is the storage and not the statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageFault {
    /// No space left: SQLite's `SQLITE_FULL` (an `ENOSPC` on the database or its log), Postgres's
    /// `disk_full` (53100).
    Full,
    /// An I/O error reading or writing the files: SQLite's `SQLITE_IOERR*` and `SQLITE_CANTOPEN`,
    /// Postgres's `io_error` (58030) and missing or duplicate files (58P01, 58P02).
    Io,
    /// Another process holds the database's write lock past the busy timeout: SQLite's
    /// `SQLITE_BUSY` and `SQLITE_LOCKED`.
    Locked,
    /// The database or its file system is read-only: SQLite's `SQLITE_READONLY`, Postgres's
    /// `read_only_sql_transaction` (25006, e.g. a standby after a failover).
    ReadOnly,
    /// The database ran out of a resource other than disk: Postgres's other
    /// `insufficient_resources` codes (53000, 53200 out of memory, 53400 a configured limit).
    Exhausted,
}

impl StorageFault {
    /// Every fault, in the order the metrics list them.
    pub const ALL: [StorageFault; 5] =
        [StorageFault::Full, StorageFault::Io, StorageFault::Locked, StorageFault::ReadOnly, StorageFault::Exhausted];

    /// The fault behind `e`, or `None` when `e` is no storage fault (a wrong query, a constraint,
    /// a connection that went away).
    pub fn of(e: &sqlx::Error) -> Option<StorageFault> {
        let sqlx::Error::Database(d) = e else { return None };
        let code = d.code()?;
        if d.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
            let extended: i32 = code.parse().ok()?;
            // The primary result code is the low byte of the extended one.
            return match extended & 0xff {
                13 => Some(StorageFault::Full),
                10 | 14 => Some(StorageFault::Io),
                5 | 6 => Some(StorageFault::Locked),
                8 => Some(StorageFault::ReadOnly),
                _ => None,
            };
        }
        match code.as_ref() {
            "53100" => Some(StorageFault::Full),
            "58030" | "58P01" | "58P02" => Some(StorageFault::Io),
            "25006" => Some(StorageFault::ReadOnly),
            // 53300 (too many connections) is the database being busy, not its storage.
            "53000" | "53200" | "53400" => Some(StorageFault::Exhausted),
            _ => None,
        }
    }

    /// The fault's name in metrics (`kind="full"`) and after `storage_` in error codes.
    pub fn kind(self) -> &'static str {
        match self {
            StorageFault::Full => "full",
            StorageFault::Io => "io",
            StorageFault::Locked => "locked",
            StorageFault::ReadOnly => "read_only",
            StorageFault::Exhausted => "exhausted",
        }
    }

    /// The stable error code an answer carries, e.g. `storage_full`.
    pub fn code(self) -> &'static str {
        match self {
            StorageFault::Full => "storage_full",
            StorageFault::Io => "storage_io",
            StorageFault::Locked => "storage_locked",
            StorageFault::ReadOnly => "storage_read_only",
            StorageFault::Exhausted => "storage_exhausted",
        }
    }

    /// What people are told, e.g. "storage full".
    pub fn describe(self) -> &'static str {
        match self {
            StorageFault::Full => "storage full",
            StorageFault::Io => "storage I/O error",
            StorageFault::Locked => "database locked by another process",
            StorageFault::ReadOnly => "storage read-only",
            StorageFault::Exhausted => "database out of resources",
        }
    }

    /// How long a client should wait before it tries again: a lock passes in moments, space and
    /// I/O take someone to act.
    pub fn retry_after_secs(self) -> u64 {
        match self {
            StorageFault::Locked => 1,
            _ => 10,
        }
    }

    fn index(self) -> usize {
        StorageFault::ALL.iter().position(|f| *f == self).expect("every fault is listed")
    }
}

/// The outcome of the store's latest write, and the storage faults counted so far.
#[derive(Debug, Default)]
pub struct WriteHealth {
    /// 0 when the latest write succeeded (or none failed yet), else 1 + the fault's index.
    last: AtomicU8,
    faults: [AtomicU64; StorageFault::ALL.len()],
}

impl WriteHealth {
    /// Notes a write's outcome: a success clears a failing state, a storage fault sets it and is
    /// counted; any other error leaves both as they are, since it says nothing of the storage.
    pub fn note<T>(&self, outcome: &Result<T, sqlx::Error>) {
        match outcome {
            Ok(_) => self.last.store(0, Ordering::Relaxed),
            Err(e) => {
                if let Some(fault) = StorageFault::of(e) {
                    self.faults[fault.index()].fetch_add(1, Ordering::Relaxed);
                    self.last.store(fault.index() as u8 + 1, Ordering::Relaxed);
                }
            }
        }
    }

    /// The fault the latest write failed with, or `None` when it succeeded.
    pub fn failing(&self) -> Option<StorageFault> {
        match self.last.load(Ordering::Relaxed) {
            0 => None,
            n => StorageFault::ALL.get(usize::from(n) - 1).copied(),
        }
    }

    /// How many writes failed with each fault.
    pub fn fault_counts(&self) -> [(StorageFault, u64); StorageFault::ALL.len()] {
        StorageFault::ALL.map(|f| (f, self.faults[f.index()].load(Ordering::Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_success_clears_the_failing_state_and_the_counts_stay() {
        let health = WriteHealth::default();
        assert_eq!(health.failing(), None);
        health.note::<()>(&Err(sqlx::Error::RowNotFound));
        assert_eq!(health.failing(), None, "an error that is no storage fault says nothing of the storage");
        health.note(&Ok(()));
        assert!(health.fault_counts().iter().all(|(_, n)| *n == 0));
    }

    #[test]
    fn codes_and_kinds_name_each_fault_once() {
        let codes: std::collections::BTreeSet<_> = StorageFault::ALL.iter().map(|f| f.code()).collect();
        assert_eq!(codes.len(), StorageFault::ALL.len());
        for f in StorageFault::ALL {
            assert_eq!(f.code(), format!("storage_{}", f.kind()));
        }
    }
}
