//! Why a workload has no binary: the toolchain's failure, reported with the run, or the host's.

use crate::builds::toolchain::CompileError;

/// Why a workload has no binary.
#[derive(Debug)]
pub enum BuildError {
    /// The toolchain could not build it: a failure of the toolchain, reported with the run.
    Compiler(CompileError),
    /// The build cache could not be used (a full disk, permissions): the host's problem, not the
    /// toolchain's, so it is not reported as the workload's failure.
    Cache(anyhow::Error),
}

impl From<CompileError> for BuildError {
    fn from(e: CompileError) -> BuildError {
        BuildError::Compiler(e)
    }
}

impl From<anyhow::Error> for BuildError {
    fn from(e: anyhow::Error) -> BuildError {
        BuildError::Cache(e)
    }
}

impl From<std::io::Error> for BuildError {
    fn from(e: std::io::Error) -> BuildError {
        BuildError::Cache(e.into())
    }
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Compiler(e) => e.fmt(f),
            BuildError::Cache(e) => write!(f, "{e:#}"),
        }
    }
}

/// A compile error in one line: its first line (which names the toolchain) and the compiler's
/// first line that says `error`, at most 300 characters.
pub fn one_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    let line = match lines.find(|l| l.contains("error")) {
        Some(error) => format!("{} {error}", first.trim_end_matches(':')),
        None => first.to_string(),
    };
    line.chars().take(300).collect()
}
