//! Measuring: the sweep of one workload over growing sizes within its budget, the limits a
//! measured workload is judged against, whether toolchains agree on the results, and the failures.

pub mod agreement;
pub mod budget;
pub mod failure;
pub mod gate;
pub mod meter;
pub mod process;
pub mod sweep;

pub use budget::Budget;
pub use process::Watch;
pub use sweep::{measure, unbuilt, Measured};
