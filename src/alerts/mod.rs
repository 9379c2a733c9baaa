//! Alerts: deciding at ingest when a slope crossed its threshold, and delivering signed webhooks
//! about it through an outbox, plus what retrospectives render (safe Markdown, exports).

pub mod config;
pub mod edits;
pub mod evaluate;
pub mod markdown;
pub mod payload;
pub mod postmortem;
pub mod signing;
pub mod worker;
