//! Command workloads: a team's program in any language, built by a shell command of its own with
//! the toolchain under test and timed as a process.
//!
//! ```toml
//! [[workloads]]
//! name = "lexer-rs"
//! build = "cargo zigbuild --release --target {target} && cp target/{target}/release/lexer {out}"
//! command = "{out} --bytes {size}"
//! sources = ["src", "Cargo.toml"]
//! ```
//!
//! `build` runs once per toolchain, in the config file's directory, with `{cc}`, `{cflags}`,
//! `{target}` and `{out}` substituted (shell-quoted); `command` is split into words and run
//! without a shell, once for a warm-up and once per repetition at each size, with `{out}` and
//! `{size}` substituted. A repetition's time is what the program prints as `slopewatch_ns=<n>`,
//! or else its wall time from start to exit.

use crate::builds::error::BuildError;
use crate::builds::hash::walk_files;
use crate::builds::toolchain::{CompileError, DetectedToolchain};
use crate::config::{split_words, WorkloadEntry};
use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const BUILD_PLACEHOLDERS: &[&str] = &["cc", "cflags", "target", "out"];
const COMMAND_PLACEHOLDERS: &[&str] = &["out", "size"];

/// What a command workload runs, checked when the config is read.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandWorkload {
    build: Option<String>,
    /// `command` split into words, placeholders still in them.
    command: Vec<String>,
    /// The workload's own flags, added to the toolchain's in `{cflags}`.
    cflags: Vec<String>,
    /// The config file's directory: where `build` and `command` run.
    root: PathBuf,
    /// Whether `sources` were listed: only then is a build reused while they are unchanged.
    hashes_sources: bool,
    /// See [`CommandWorkload::configure`].
    pub hash: String,
}

impl CommandWorkload {
    /// Reads a `[[workloads]]` entry with `build` or `command`. The source hash covers both
    /// commands, the flags, and every file of `sources` (directories at any depth).
    pub fn configure(e: &WorkloadEntry, root: &Path) -> Result<CommandWorkload> {
        let Some(command) = &e.command else {
            bail!("command: missing; `build` makes a program, `command` says how to run it at a size, e.g. \"{{out}} {{size}}\"");
        };
        if !e.include.is_empty() || !e.libs.is_empty() {
            bail!("include, libs: for C workloads only; a command workload's build passes its own flags");
        }
        if let Some(build) = &e.build {
            check_placeholders(build, BUILD_PLACEHOLDERS).context("build")?;
            if !build.contains("{out}") {
                bail!("build: must write the program to {{out}}, the path the agent keeps per toolchain");
            }
        }
        check_placeholders(command, COMMAND_PLACEHOLDERS).context("command")?;
        let words = split_words(command).context("command")?;
        if words.is_empty() {
            bail!("command: empty");
        }
        if !command.contains("{size}") {
            bail!("command: must pass the input size, as {{size}}");
        }
        if e.build.is_none() && command.contains("{out}") {
            bail!("command: {{out}} names what `build` makes, and there is no build");
        }
        let cflags = split_words(e.cflags.as_deref().unwrap_or("")).context("cflags")?;

        let mut files = Vec::new();
        for s in &e.sources {
            let path = root.join(s);
            if path.is_dir() {
                files.extend(walk_files(&path)?);
            } else if path.is_file() {
                files.push(path);
            } else {
                bail!("sources: {s:?} is neither a file nor a directory (looked for {})", path.display());
            }
        }
        files.sort();
        files.dedup();
        let mut h = Sha256::new();
        for part in
            [e.build.as_deref().unwrap_or(""), command.as_str()].into_iter().chain(cflags.iter().map(String::as_str))
        {
            h.update(part.as_bytes());
            h.update([0]);
        }
        for f in &files {
            let bytes = std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?;
            h.update(f.strip_prefix(root).unwrap_or(f).to_string_lossy().as_bytes());
            h.update([0]);
            h.update(Sha256::digest(bytes));
        }
        Ok(CommandWorkload {
            build: e.build.clone(),
            command: words,
            cflags,
            root: root.to_path_buf(),
            hashes_sources: !e.sources.is_empty(),
            hash: format!("sha256:{}", hex::encode(h.finalize())),
        })
    }

    /// Runs `build` for `tc` so that it writes `out`. A build whose sources are hashed is reused
    /// while `out` exists (its name carries the hash); one without runs every time, since nothing
    /// tells when what it reads has changed.
    pub fn build(&self, tc: &DetectedToolchain, out: &Path) -> Result<(), BuildError> {
        let Some(build) = &self.build else { return Ok(()) };
        if self.hashes_sources && out.is_file() {
            return Ok(());
        }
        // Built under a temporary name so an interrupted build never leaves a program to reuse.
        let tmp = out.with_file_name(format!(
            ".{}.{}",
            out.file_name().and_then(|n| n.to_str()).unwrap_or("out"),
            std::process::id()
        ));
        let cc = tc.spec.command.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
        let cflags = tc.spec.flags.iter().chain(&self.cflags).map(|w| quote(w)).collect::<Vec<_>>().join(" ");
        let values = [
            ("cc", cc.clone()),
            ("cflags", cflags.clone()),
            ("target", quote(&tc.target)),
            ("out", quote(&tmp.display().to_string())),
        ];
        let script = substitute(build, &values);
        let failed = |exit_status, signal, output: String| CompileError {
            toolchain: tc.spec.name.clone(),
            exit_status,
            signal,
            output,
        };
        let output = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .current_dir(&self.root)
            .env("CC", &cc)
            .env("CFLAGS", &cflags)
            .env("SLOPEWATCH_TARGET", &tc.target)
            .output()
            .map_err(|e| failed(None, None, format!("cannot run the build with sh: {e}")))?;
        if !output.status.success() {
            let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&output.stderr));
            std::fs::remove_file(&tmp).ok();
            let e = failed(output.status.code(), output.status.signal(), text);
            return Err(e.relative_to(tmp.parent().unwrap_or(Path::new("/"))).relative_to(&self.root).into());
        }
        if !tmp.is_file() {
            return Err(failed(None, None, format!("the build succeeded but wrote nothing to {{out}}: {build}")).into());
        }
        std::fs::rename(&tmp, out)?;
        Ok(())
    }

    /// The program and its arguments at `size`, `out` being what the build made.
    pub fn argv(&self, out: &Path, size: u64) -> Vec<String> {
        let values = [("out", out.display().to_string()), ("size", size.to_string())];
        self.command.iter().map(|w| substitute(w, &values)).collect()
    }

    /// Where the program runs.
    pub fn dir(&self) -> &Path {
        &self.root
    }
}

/// What one run of the program printed that the agent reads: its own timing and its result.
#[derive(Debug, Default, PartialEq)]
pub struct Printed {
    /// `slopewatch_ns=<n>`: the time of the work itself, start-up excluded.
    pub ns: Option<f64>,
    /// `slopewatch_result=<text>`: compared between toolchains, as the harness's `result`.
    pub result: Option<String>,
}

impl Printed {
    /// Reads the last `slopewatch_ns=` and `slopewatch_result=` lines of `stdout`.
    pub fn read(stdout: &str) -> Result<Printed, String> {
        let mut printed = Printed::default();
        for line in stdout.lines().map(str::trim) {
            if let Some(v) = line.strip_prefix("slopewatch_ns=") {
                match v.trim().parse::<f64>() {
                    Ok(ns) if ns.is_finite() && ns > 0.0 => printed.ns = Some(ns),
                    _ => {
                        return Err(format!("printed {line:?}; slopewatch_ns must be a positive number of nanoseconds"))
                    }
                }
            } else if let Some(v) = line.strip_prefix("slopewatch_result=") {
                printed.result = Some(v.trim().to_string());
            }
        }
        Ok(printed)
    }
}

/// Refuses `{name}` placeholders other than `allowed`, so a typo is not run as text.
fn check_placeholders(text: &str, allowed: &[&str]) -> Result<()> {
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let name = &after[..close];
        if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.is_empty() && !allowed.contains(&name) {
            let known: Vec<String> = allowed.iter().map(|a| format!("{{{a}}}")).collect();
            bail!("unknown placeholder {{{name}}}; known here: {}", known.join(", "));
        }
        rest = &after[close + 1..];
    }
    Ok(())
}

fn substitute(text: &str, values: &[(&str, String)]) -> String {
    values.iter().fold(text.to_string(), |t, (name, value)| t.replace(&format!("{{{name}}}"), value))
}

/// `word` as one shell word.
fn quote(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_checked_and_substituted() {
        assert!(check_placeholders("cc {cc} {cflags} -o {out}", BUILD_PLACEHOLDERS).is_ok());
        let e = check_placeholders("{out} {sise}", COMMAND_PLACEHOLDERS).unwrap_err().to_string();
        assert!(e.contains("{sise}") && e.contains("{size}"), "{e}");
        assert!(check_placeholders("awk '{print $1}' {size}", COMMAND_PLACEHOLDERS).is_ok(), "not a name");
        let values = [("out", "/b/x".to_string()), ("size", "4096".to_string())];
        assert_eq!(substitute("{out} --bytes {size}", &values), "/b/x --bytes 4096");
    }

    #[test]
    fn values_are_quoted_for_the_shell() {
        assert_eq!(quote("-O2"), "-O2");
        assert_eq!(quote("/opt/zig 0.16/zig"), "'/opt/zig 0.16/zig'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn the_program_s_own_timing_and_result_are_read() {
        let p = Printed::read("lexing\nslopewatch_ns=1250.5\nslopewatch_result=4681\n").unwrap();
        assert_eq!(p, Printed { ns: Some(1250.5), result: Some("4681".into()) });
        assert_eq!(Printed::read("just text\n").unwrap(), Printed::default());
        assert!(Printed::read("slopewatch_ns=-3\n").unwrap_err().contains("positive"));
        assert!(Printed::read("slopewatch_ns=soon\n").is_err());
    }
}
