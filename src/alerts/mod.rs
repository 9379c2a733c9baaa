//! Alerts: deciding at ingest when a slope crossed its threshold, and delivering signed webhooks
//! about it through an outbox.

pub mod config;
pub mod evaluate;
pub mod payload;
pub mod signing;
pub mod worker;
