//! The alert rules, as values in and decisions out. No database and no HTTP here: `intake` reads
//! what the rules need, asks them, and stores what they decide.

pub mod control;
pub mod cost;
pub mod evaluate;
pub mod replay;
pub mod timeline;
