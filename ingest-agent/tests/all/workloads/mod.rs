//! A team's own workloads: built from sources, or by a command; and the example's tokenizer on
//! every toolchain, through a real server.

mod commands;
mod on_every_toolchain;
mod sources;
