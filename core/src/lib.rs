//! What the slopewatch server and agent share: the wire format and its rules, slope fitting, and
//! toolchain version ordering.

pub mod fit;
pub mod version;
pub mod wire;
