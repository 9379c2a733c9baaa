//! Everything that talks to the server; what it answers is read with core's `answers` types.

pub mod baseline;
pub mod client;
pub mod deliver;
pub mod regression;
pub mod spool;
