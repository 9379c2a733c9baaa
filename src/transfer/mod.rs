//! Moving a store's whole history to another store, e.g. from the embedded SQLite to Postgres:
//! `slopewatch export` writes it as JSON lines and `slopewatch import` replays it.

pub mod export;
pub mod import;
mod pruned;
pub mod records;
pub mod tables;

pub use export::{export, ExportSummary};
pub use import::{import, ImportSummary, Rejection};
