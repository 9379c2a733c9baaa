//! Building the workloads: the toolchains (given, found on the host, or Zig releases fetched), the workloads built
//! in and the team's own, and the cache of what each toolchain built.

pub mod cache;
pub mod command;
pub mod contracts;
pub mod discover;
pub mod error;
pub mod fetch;
pub mod hash;
pub mod parallel;
pub mod sources;
pub mod template;
pub mod toolchain;
pub mod workloads;
