//! slopewatch-agent: builds C workloads with each toolchain under test, times them at growing
//! sizes on the libc that toolchain links, fits the growth slope and delivers runs to the server.

pub mod artifact;
pub mod bisect;
pub mod builds;
pub mod cli;
pub mod commands;
pub mod config;
pub mod exit;
pub mod exposure;
pub mod host;
pub mod import;
pub mod measure;
pub mod output;
pub mod search;
pub mod server;

/// The agent's version, sent with every run.
pub const AGENT_VERSION: &str = env!("CARGO_PKG_VERSION");
