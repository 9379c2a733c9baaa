//! Toolchains: detected on the host, and Zig releases fetched from the package index.

mod detection;
mod fetch;
