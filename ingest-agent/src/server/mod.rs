//! Everything that talks to the server: one HTTP client with one retry policy, the spool where
//! runs and bisections wait, and the one way out of it.

pub mod baseline;
pub mod client;
pub mod deliver;
pub mod regression;
pub mod spool;
