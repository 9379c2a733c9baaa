//! `submit`: sends runs that `measure` wrote to files.

use crate::cli::{ServerArgs, SpoolArgs};
use crate::exit::ExitStatus;
use crate::server::deliver::deliver_runs;
use anyhow::{Context, Result};
use slopewatch_core::wire::RunSubmission;
use std::path::{Path, PathBuf};

/// `submit`: reads every file, then spools and sends the runs in them.
pub fn submit(files: &[PathBuf], server: &ServerArgs, spool: &SpoolArgs) -> Result<ExitStatus> {
    let mut runs = Vec::new();
    for f in files {
        runs.extend(read_runs(f)?);
    }
    let client = server.client()?;
    deliver_runs(&client, &spool.open()?, &runs)
}

/// Reads a file written by `measure`: one run, or an array of runs. Each is validated.
fn read_runs(path: &Path) -> Result<Vec<RunSubmission>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).with_context(|| format!("{} is not JSON", path.display()))?;
    let items = match value {
        serde_json::Value::Array(items) => items,
        one => vec![one],
    };
    items
        .iter()
        .map(|v| {
            RunSubmission::from_json(&serde_json::to_vec(v)?)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("{} holds an invalid run", path.display()))
        })
        .collect()
}
