//! `init-workload`: writes the C template of a workload of the team's own and prints its
//! `[[workloads]]` entry.

use crate::builds::template;
use crate::exit::ExitStatus;
use anyhow::Result;
use std::path::Path;

/// `init-workload`: writes `dir/name.c` and adds its entry to `config`, or prints it to add.
pub fn init_workload(name: &str, dir: &Path, config: Option<&Path>) -> Result<ExitStatus> {
    let written = template::init(name, dir, config)?;
    println!("wrote {}", written.source.display());
    match config {
        Some(c) => println!("added to {}:\n\n{}", c.display(), written.entry),
        None => {
            println!("add to your config file (--config; sources are relative to its directory):\n\n{}", written.entry)
        }
    }
    Ok(ExitStatus::Ok)
}
