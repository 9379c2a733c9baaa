//! Measuring: the sweep of one workload over growing sizes within its budget, each measured
//! workload judged by core's verdict, whether toolchains agree on the results, and the failures.

pub mod agreement;
pub mod budget;
pub mod failure;
pub mod judged;
pub mod meter;
pub mod process;
pub mod sweep;

pub use budget::Budget;
pub use process::Watch;
pub use sweep::{measure, unbuilt, Measured};
