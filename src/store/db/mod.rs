//! The store's SQL plumbing, under the files of each subject: connections, transactions and
//! statements written once for both databases (`conn.rs`); what differs between them, in the
//! `Backend` trait (`backend.rs`) and its two implementations (`postgres.rs`, `sqlite.rs`);
//! SQLite's one writer (`sqlite_writer.rs`) and the lock that keeps a SQLite database to one server
//! (`single_server.rs`); rows and columns as the backends bind and read them (`columns.rs`,
//! `rows.rs`, `complexity.rs` for the class column); storage faults (`faults.rs`); and the claims
//! replicas take on periodic work (`claims.rs`).

mod backend;
mod claims;
pub(super) mod columns;
pub(super) mod complexity;
mod conn;
pub(super) mod faults;
mod postgres;
pub(super) mod rows;
pub(super) mod single_server;
mod sqlite;
pub(super) mod sqlite_writer;

pub use conn::Tx;
pub(in crate::store) use conn::{sql, Column, Exec, Pool, Record, Sql};

/// Reads a JSON column (a fit's medians, a summary's sizes, a measurement's samples); text that
/// does not parse is a decode error, as a column of the wrong type would be.
pub(super) fn decode_json<'a, T: serde::Deserialize<'a>>(text: &'a str) -> Result<T, sqlx::Error> {
    serde_json::from_str(text).map_err(|e| sqlx::Error::Decode(Box::new(e)))
}
