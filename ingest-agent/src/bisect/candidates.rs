//! The candidates of a bisection, builds of one lineage oldest first: a file of `VERSION=CC COMMAND`
//! lines, or versions with a script that fetches or builds each and prints its compiler command,
//! run only for the candidates measured.

use crate::config::split_words;
use anyhow::{bail, Context, Result};
use std::path::Path;

/// Where the candidates come from.
#[derive(Debug, Clone)]
pub enum Candidates {
    /// `VERSION=CC COMMAND`, in order.
    Listed(Vec<(String, String)>),
    /// Versions in order, and a script with `{version}` that prints the compiler command.
    Materialized { script: String, versions: Vec<String> },
}

impl Candidates {
    pub fn versions(&self) -> Vec<String> {
        match self {
            Candidates::Listed(l) => l.iter().map(|(v, _)| v.clone()).collect(),
            Candidates::Materialized { versions, .. } => versions.clone(),
        }
    }

    /// The compiler command of candidate `i`: listed, or printed by the script on its last line.
    pub(super) fn command(&self, i: usize) -> Result<String, String> {
        match self {
            Candidates::Listed(l) => Ok(l[i].1.clone()),
            Candidates::Materialized { script, versions } => {
                let script = script.replace("{version}", &shell_quote(&versions[i]));
                let out = std::process::Command::new("sh")
                    .arg("-c")
                    .arg(&script)
                    .output()
                    .map_err(|e| format!("cannot run the materialize script: {e}"))?;
                let stdout = String::from_utf8_lossy(&out.stdout);
                if !out.status.success() {
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    return Err(format!(
                        "the materialize script exited with {}: {}",
                        out.status,
                        crate::measure::failure::detail(&stderr).lines().last().unwrap_or("")
                    ));
                }
                match stdout.lines().rev().map(str::trim).find(|l| !l.is_empty()) {
                    Some(command) => Ok(command.to_string()),
                    None => Err("the materialize script printed no compiler command".into()),
                }
            }
        }
    }
}

/// Reads a candidates file: one `VERSION=CC COMMAND` per line, oldest first; blank lines and
/// lines starting with `#` are skipped. Each error names the line.
pub fn read_candidates(path: &Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out: Vec<(String, String)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), n + 1);
        let Some((version, command)) = line.split_once('=') else {
            bail!(
                "{}: expected VERSION=CC COMMAND, e.g. 0.16.0-dev.1234+abc=/opt/zig/zig cc -target x86_64-linux-musl",
                at()
            );
        };
        let (version, command) = (version.trim(), command.trim());
        check_version(version).with_context(at)?;
        if split_words(command).with_context(at)?.is_empty() {
            bail!("{}: the compiler command is empty", at());
        }
        if out.iter().any(|(v, _)| v == version) {
            bail!("{}: version {version} is listed twice", at());
        }
        out.push((version.to_string(), command.to_string()));
    }
    if out.len() < 2 {
        bail!("{}: a bisection needs at least two candidates, found {}", path.display(), out.len());
    }
    Ok(out)
}

/// Reads a versions file for `--materialize`: one version per line, oldest first.
pub fn read_versions(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out: Vec<String> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let v = line.trim();
        if v.is_empty() || v.starts_with('#') {
            continue;
        }
        check_version(v).with_context(|| format!("{}:{}", path.display(), n + 1))?;
        if out.iter().any(|o| o == v) {
            bail!("{}:{}: version {v} is listed twice", path.display(), n + 1);
        }
        out.push(v.to_string());
    }
    if out.len() < 2 {
        bail!("{}: a bisection needs at least two versions, found {}", path.display(), out.len());
    }
    Ok(out)
}

fn check_version(v: &str) -> Result<()> {
    if v.is_empty() || v.len() > 128 || !v.chars().all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c)) {
        bail!("version {v:?} must be 1 to 128 letters, digits, '.', '_', '+' or '-'");
    }
    Ok(())
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_files_are_checked_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.txt");
        std::fs::write(&path, "# oldest first\n0.15.2=gcc\n\n0.16.0-dev.3+abc=gcc -O2\n").unwrap();
        assert_eq!(read_candidates(&path).unwrap()[1], ("0.16.0-dev.3+abc".into(), "gcc -O2".into()));
        for (text, why) in [
            ("0.1=gcc\njust gcc\n", "c.txt:2: expected VERSION=CC COMMAND"),
            ("0.1=gcc\n0.1=clang\n", "listed twice"),
            ("0.1=gcc\n0 1=gcc\n", "must be 1 to 128"),
            ("0.1=gcc\n", "at least two"),
            ("0.1=gcc\n0.2=\n", "empty"),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = format!("{:#}", read_candidates(&path).unwrap_err());
            assert!(e.contains(why), "{text:?}: {e}");
        }
    }
}
