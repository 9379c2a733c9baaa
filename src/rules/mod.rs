//! The alert rules, as values in and decisions out: whether a version's slope or class is over
//! its threshold (core's verdict) and which regression it opens, joins or resolves (`evaluate`),
//! the regressions a lineage has in version order whatever order its versions arrived in
//! (`replay`), what a regression's timeline says (`timeline`), and what a control lineage says moved
//! (`control`). No database and no HTTP here: `intake` reads what the rules need, asks them, and
//! stores what they decide.

pub mod control;
pub mod evaluate;
pub mod replay;
pub mod timeline;
