//! Everything before measuring: the toolchains and the workloads, and the binaries each toolchain
//! builds of them.

pub mod build_hash;
pub mod cache;
pub mod command;
pub mod contract_build;
pub mod contract_gaps;
pub mod contracts;
pub mod discover;
pub mod error;
pub mod fetch;
pub mod fingerprints;
pub mod hash;
pub mod parallel;
pub mod runner;
pub mod rust_musl;
pub mod shapes;
pub mod sources;
pub mod template;
pub mod toolchain;
pub mod workloads;
