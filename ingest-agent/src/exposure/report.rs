//! What a scan found, per artifact, and the three ways it is written: a table for a terminal,
//! Markdown for a pull request, JSON for machines. Functions come worst first: those the
//! toolchain breaks and nobody accepted, then the accepted ones, the unsure, the held and the
//! ones the libc does not provide.

use crate::artifact::{Caller, FoundBy};
use serde::Serialize;
use slopewatch_core::exposure::{Breakage, Linkage};

/// One artifact, scanned and judged.
#[derive(Debug, Serialize)]
pub(crate) struct Scan {
    pub artifact: String,
    pub path: String,
    pub digest: String,
    pub arch: String,
    pub linkage: Linkage,
    pub libc: Libc,
    /// The toolchain version whose verdicts it was judged by; none when it could not be judged.
    pub judged_by: Option<JudgedBy>,
    pub status: Status,
    /// Why the scan cannot tell, and how to let it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cannot_tell: Option<String>,
    /// What a reader should know: the libc it carries is not the toolchain's, …
    pub notes: Vec<String>,
    pub functions: Vec<Reached>,
    /// Functions of the catalogue linked in or imported, but never called nor referenced.
    pub unused: Vec<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Libc {
    pub name: String,
    pub evidence: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct JudgedBy {
    pub lineage: String,
    pub version: String,
    /// The libc the toolchain links, as it names it.
    pub libc: String,
    /// Where the verdicts came from: measured here, the agent's cache, a server.
    pub verdicts_from: Vec<String>,
}

/// What became of an artifact's scan; the exit status is the worst of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    /// It reaches a function the toolchain breaks, and nobody accepted it.
    Exposed,
    /// It reaches a function the catalogue could not judge either way.
    Unsure,
    /// The scan cannot tell: see `cannot_tell`.
    CannotTell,
    /// It reaches nothing the toolchain breaks (or only what is accepted).
    Clean,
}

/// One function of the catalogue the artifact calls or references.
#[derive(Debug, Serialize)]
pub(crate) struct Reached {
    pub function: String,
    /// The names it goes by in the artifact.
    pub aliases: Vec<String>,
    pub verdict: Verdict,
    pub call_sites: u32,
    pub referenced: bool,
    pub callers: Vec<Caller>,
    /// How the artifact told it: by a symbol, an import, or its code.
    pub found_by: FoundBy,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted: Option<AcceptedUntil>,
    /// An acceptance that has expired: the function fails the scan again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expired: Option<AcceptedUntil>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Verdict {
    /// `breaks`, `held`, `not_provided`, `unsure`, or `unjudged` (the catalogue has no probe).
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breach: Option<Breakage>,
    /// For people: "O(n) against its contract of O(1) (contract.strspn.set)", "held".
    pub words: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct AcceptedUntil {
    pub reason: String,
    pub until: String,
}

impl Reached {
    /// Whether it fails the scan: broken, and not accepted.
    pub fn fails(&self) -> bool {
        self.verdict.breach.is_some() && self.accepted.is_none()
    }

    /// Its place in the table: unaccepted breaks by breach, accepted ones, unsure, held, the rest.
    pub fn rank(&self) -> (u8, Option<Breakage>) {
        let class = match (self.verdict.state, self.accepted.is_some()) {
            ("breaks", false) => 0,
            ("breaks", true) => 1,
            ("unsure", _) => 2,
            ("held", _) => 3,
            _ => 4,
        };
        (class, self.verdict.breach)
    }

    /// The verdict as a table cell: the words, marked when accepted or expired.
    fn verdict_cell(&self) -> String {
        match (&self.accepted, &self.expired) {
            (Some(a), _) => format!("{} — accepted until {}: {}", self.verdict.words, a.until, a.reason),
            (None, Some(e)) => format!("{} — acceptance expired {}: {}", self.verdict.words, e.until, e.reason),
            _ => self.verdict.words.clone(),
        }
    }

    /// "jsonTranslateTextToBlob (3, sqlite3.c:3112), sqlite3DecOrHexToI64 (1)", the first
    /// `most`, then how many more; "(address taken)" when referenced.
    fn callers_cell(&self, most: usize) -> String {
        let mut parts: Vec<String> = self
            .callers
            .iter()
            .take(most)
            .map(|c| {
                let libc = if c.in_libc { ", in the libc" } else { "" };
                // The file's name is enough beside its function's; the JSON keeps the path.
                match c.location.as_deref().map(|at| at.rsplit('/').next().unwrap_or(at)) {
                    Some(at) => format!("{} ({}, {at}{libc})", c.name, c.sites),
                    None => format!("{} ({}{libc})", c.name, c.sites),
                }
            })
            .collect();
        if self.callers.len() > most {
            parts.push(format!("{} more", self.callers.len() - most));
        }
        if self.referenced {
            parts.push("address taken".into());
        }
        parts.join(", ")
    }
}

impl Scan {
    /// "api-server: static, zig libc (…), judged by zig-cc-musl 0.16.0 (measured here)".
    fn heading(&self) -> String {
        let judged = match &self.judged_by {
            Some(j) => format!(", judged by {} {} ({})", j.lineage, j.version, j.verdicts_from.join(", ")),
            None => String::new(),
        };
        format!(
            "{}: {} {}, {} libc ({}){judged}",
            self.artifact,
            self.arch,
            self.linkage.as_str(),
            self.libc.name,
            self.libc.evidence
        )
    }

    /// The functions recognised by their code, where no symbol names them; none when all are
    /// named.
    fn by_code(&self) -> Option<String> {
        let names: Vec<&str> =
            self.functions.iter().filter(|f| f.found_by == FoundBy::Code).map(|f| f.function.as_str()).collect();
        (!names.is_empty()).then(|| format!("recognised by their code, no symbol naming them: {}", names.join(", ")))
    }

    /// The last line: what the scan says of the artifact.
    fn summary(&self) -> String {
        let failing: Vec<&str> = self.functions.iter().filter(|f| f.fails()).map(|f| f.function.as_str()).collect();
        let by = self.judged_by.as_ref().map_or(String::new(), |j| format!("{} {}", j.lineage, j.version));
        match self.status {
            Status::Exposed => {
                format!("exposed: calls {} function(s) {by} breaks: {}", failing.len(), failing.join(", "))
            }
            Status::Unsure => "unsure: it calls a function the catalogue could not judge either way".into(),
            Status::CannotTell => format!("cannot tell: {}", self.cannot_tell.as_deref().unwrap_or("")),
            Status::Clean => format!("clean: calls nothing {by} breaks"),
        }
    }
}

/// The terminal's table, one block per artifact.
pub(crate) fn text(scans: &[Scan]) -> String {
    let mut out = String::new();
    for s in scans {
        out.push_str(&format!("{}\n", s.heading()));
        for n in &s.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        if !s.functions.is_empty() {
            let width = s.functions.iter().map(|f| f.function.len()).max().unwrap_or(0).max(8);
            let vwidth = s.functions.iter().map(|f| f.verdict_cell().chars().count()).max().unwrap_or(0).max(7);
            out.push_str(&format!("  {:<width$}  {:<vwidth$}  {:>5}  callers\n", "function", "verdict", "sites"));
            for f in &s.functions {
                let line = format!(
                    "  {:<width$}  {:<vwidth$}  {:>5}  {}",
                    f.function,
                    f.verdict_cell(),
                    f.call_sites,
                    f.callers_cell(3)
                );
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
        if let Some(line) = s.by_code() {
            out.push_str(&format!("  {line}\n"));
        }
        if !s.unused.is_empty() {
            out.push_str(&format!("  linked in but never called: {}\n", s.unused.join(", ")));
        }
        out.push_str(&format!("  {}\n\n", s.summary()));
    }
    out
}

/// The Markdown for a pull request: a section per artifact.
pub(crate) fn markdown(scans: &[Scan]) -> String {
    let mut out = String::from("## Exposure to the toolchain's broken libc functions\n\n");
    for s in scans {
        out.push_str(&format!("### `{}`\n\n{}\n\n", md(&s.artifact), md(&s.heading())));
        for n in &s.notes {
            out.push_str(&format!("> {}\n\n", md(n)));
        }
        if !s.functions.is_empty() {
            out.push_str("| Function | Verdict | Call sites | Callers |\n|---|---|---:|---|\n");
            for f in &s.functions {
                let name =
                    if f.fails() { format!("**`{}`**", md(&f.function)) } else { format!("`{}`", md(&f.function)) };
                out.push_str(&format!(
                    "| {name} | {} | {} | {} |\n",
                    md(&f.verdict_cell()),
                    f.call_sites,
                    md(&f.callers_cell(5))
                ));
            }
            out.push('\n');
        }
        if let Some(line) = s.by_code() {
            out.push_str(&format!("{}\n\n", md(&line)));
        }
        if !s.unused.is_empty() {
            out.push_str(&format!("Linked in but never called: {}\n\n", md(&s.unused.join(", "))));
        }
        out.push_str(&format!("**{}**\n\n", md(&s.summary())));
    }
    out
}

/// The JSON for machines: the overall status and every scan.
pub(crate) fn json(scans: &[Scan], status: Status) -> String {
    #[derive(Serialize)]
    struct All<'a> {
        status: Status,
        artifacts: &'a [Scan],
    }
    serde_json::to_string_pretty(&All { status, artifacts: scans }).expect("a scan always serializes") + "\n"
}

/// Text made safe for a Markdown table cell: pipes, backticks, angle brackets and newlines.
fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('`', "'").replace('<', "&lt;").replace('>', "&gt;").replace('\n', " ")
}
