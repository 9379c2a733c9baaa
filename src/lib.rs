//! slopewatch: stores benchmark runs of C workloads built with each toolchain under test, fits
//! the log-log slope of time against input size, and shows and alerts on growth regressions.

pub mod analysis;
pub mod auth;
pub mod causes;
pub mod charts;
pub mod cli;
pub mod client_addr;
pub mod config;
pub mod episodes;
pub mod format;
pub mod http;
pub mod instance;
pub mod intake;
pub mod links;
pub mod metrics;
pub mod model;
pub mod profiles;
pub mod retention;
pub mod rules;
pub mod session_key;
pub mod store;
pub mod transfer;
pub mod views;
pub mod webhooks;

pub use http::{app, AppState};
