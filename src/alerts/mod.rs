//! Alerts, as rules and values: when a slope crossed its threshold or a class stepped up
//! (`classes`) and which regression a version opens, joins or resolves (`evaluate`), what the webhooks say (`events`, `payload`, and `bisected` for a recorded bisection) and
//! how they are signed, the alert settings, and what retrospectives render (safe Markdown, the
//! postmortem). No database and no HTTP here: `intake` applies the rules in its summary passes,
//! `outbox` sends what they announce.

pub mod bisected;
pub mod classes;
pub mod config;
pub mod edits;
pub mod evaluate;
pub mod events;
pub mod lineage;
pub mod markdown;
pub mod payload;
pub mod postmortem;
pub mod signing;
pub mod timeline;
