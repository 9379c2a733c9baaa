//! What the slopewatch server and agent share: the wire format and its rules, the server's answers,
//! slope fitting, complexity classes, the noise rule verdicts are reached by, toolchain version
//! ordering, and which workloads the agent ships.

pub mod answers;
pub mod bisection;
pub mod complexity;
pub mod fit;
pub mod format;
pub mod lineage;
pub mod predict;
pub mod verdict;
pub mod version;
pub mod wire;
pub mod workloads;
