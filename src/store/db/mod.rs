//! The store's SQL plumbing, below the files of each subject: most SQL is written once for both
//! databases, and what differs is one trait with an implementation per backend.

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
