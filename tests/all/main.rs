//! The server's integration tests, in one binary: a module per subject, through the public
//! surface (HTTP, the real binaries, a real browser) on Postgres and on SQLite. `helpers` holds
//! the databases, the app and the processes they run against; `builders` the runs they submit.

mod alerts;
mod api;
mod architectures;
mod bad_input;
mod browser;
mod builders;
mod cli;
mod complexity;
mod contracts;
mod dashboard;
mod deploy;
mod docs;
mod exposures;
mod failures;
mod faults;
mod found_probes;
mod gate_and_rules;
mod hardening;
mod helpers;
mod measures;
mod migrations;
mod openapi;
mod prediction;
mod regressions;
mod replicas;
mod retention;
mod security;
mod structure;
mod transfer;
mod versions;
mod webhook_refusals;
mod wire;
