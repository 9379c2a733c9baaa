//! Measuring: from a built binary to a judged workload, or to the failure that stopped it; the
//! engine that measures a whole plan (`engine`), and the progress it shows on the way (`progress`).

pub mod agreement;
pub mod beside;
pub mod budget;
pub mod engine;
pub mod failure;
pub mod judged;
pub mod meter;
pub mod process;
pub mod profile;
pub mod progress;
mod session;
pub mod side_by_side;
pub mod sweep;

pub use budget::Budget;
pub use process::Watch;
pub use sweep::{measure, unbuilt, Measured};
