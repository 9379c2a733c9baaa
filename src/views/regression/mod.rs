//! A regression's page beyond its rows: what its editors write, and the postmortem it exports.

pub mod edits;
pub mod markdown;
pub mod postmortem;
