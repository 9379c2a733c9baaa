//! The agent's integration tests, in one binary: a module per subject, run against the real
//! `slopewatch-agent` with real compilers; `helpers` runs the binary and the server they talk to.

mod agreement;
mod bisect;
mod check;
mod contracts;
mod costs;
mod counted;
mod cpu_and_instructions;
mod delivery;
mod emulated;
mod exposure;
mod failures;
mod first_run;
mod helpers;
mod import;
mod profiles;
mod sarif;
mod search;
mod size_of_interest;
mod slopes;
mod sqlite;
mod static_musl;
mod stripped;
mod toolchains;
mod unfamiliar_libcs;
mod workloads;
