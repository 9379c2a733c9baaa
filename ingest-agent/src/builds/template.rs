//! `init-workload`: the commented C template of a team's own workload and its `[[workloads]]`
//! entry.

use crate::builds::workloads;
use crate::config;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A workload following the `sw_*` harness, with what to change in comments; it compiles and
/// runs as it is.
pub const TEMPLATE: &str = include_str!("../../c/template.c");

/// Writes `DIR/NAME.c` from the template (never over an existing file) and returns the
/// `[[workloads]]` entry for it. With `config`, the entry is appended to that file (created if
/// missing) when no workload there has the name, its `sources` relative to the file's directory.
pub fn init(name: &str, dir: &Path, config: Option<&Path>) -> Result<Written> {
    workloads::check_name(name)?;
    if workloads::builtin().iter().any(|w| w.name == name) {
        bail!("{name:?} is the name of a built-in workload; choose another");
    }
    let existing = match config.filter(|c| c.exists()) {
        Some(c) => Some(std::fs::read_to_string(c).with_context(|| format!("cannot read {}", c.display()))?),
        None => None,
    };
    if let (Some(c), Some(text)) = (config, &existing) {
        if !text.trim().is_empty() {
            let parsed = config::parse_config(text).with_context(|| format!("in config file {}", c.display()))?;
            if parsed.workloads.iter().any(|w| w.name == name) {
                bail!("{} already has a workload named {name:?}", c.display());
            }
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let source = dir.join(format!("{name}.c"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&source)
        .with_context(|| format!("cannot create {} (an existing file is never overwritten)", source.display()))?;
    file.write_all(TEMPLATE.as_bytes()).with_context(|| format!("cannot write {}", source.display()))?;
    let listed = match config {
        Some(c) => relative_to_dir_of(&source, c)?,
        None => source.display().to_string(),
    };
    let entry = entry(name, &listed);
    if let Some(c) = config {
        let sep = match &existing {
            Some(t) if t.is_empty() || t.ends_with("\n\n") => "",
            Some(t) if t.ends_with('\n') => "\n",
            Some(_) => "\n\n",
            None => "",
        };
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(c)
            .with_context(|| format!("cannot open {}", c.display()))?;
        write!(f, "{sep}{entry}").with_context(|| format!("cannot write {}", c.display()))?;
    }
    Ok(Written { source, entry })
}

/// What `init` wrote.
pub struct Written {
    pub source: PathBuf,
    pub entry: String,
}

/// The `[[workloads]]` entry for a template at `source`.
fn entry(name: &str, source: &str) -> String {
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    format!(
        "[[workloads]]\nname = {}\nsources = [{}]\nunit = \"bytes\"\nstart = \"64K\"\nmax = \"4M\"\n",
        quote(name),
        quote(source)
    )
}

/// `path` relative to the directory of `config`, or absolute where it is not under it.
fn relative_to_dir_of(path: &Path, config: &Path) -> Result<String> {
    let parent = config.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let base =
        parent.canonicalize().with_context(|| format!("cannot resolve the directory of {}", config.display()))?;
    let path = path.canonicalize().with_context(|| format!("cannot resolve {}", path.display()))?;
    Ok(path.strip_prefix(&base).unwrap_or(&path).display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_is_a_workload_the_config_reads() {
        let text = entry("my-loop", "bench/my \"loop\".c");
        let parsed = config::parse_config(&text).unwrap();
        assert_eq!(parsed.workloads[0].name, "my-loop");
        assert_eq!(parsed.workloads[0].sources, ["bench/my \"loop\".c"]);
    }
}
