//! What the slopewatch server and agent share, so that the two can never disagree: the wire between
//! them, and every figure and decision both work out.

pub mod answers;
pub mod arch;
pub mod bisection;
pub mod complexity;
pub mod exposure;
pub mod fit;
pub mod format;
pub mod lineage;
pub mod predict;
pub mod probe;
pub mod profile;
pub mod verdict;
pub mod version;
pub mod wire;
pub mod workloads;
