//! One toolchain version across every workload: against the version before it in version order
//! (or one chosen) and against the control lineages, with the regressions and findings opened or
//! fixed there and the artifacts scanned at it; as its page, its JSON and a Markdown release note
//! give it.

use super::changes::{ChangeRow, Changes, VersionAt};
use super::regression::postmortem::{destination, text};
use crate::links;
use crate::model::{
    Architecture, RegressionKind, RegressionRow, RegressionStatus, RegressionWorkload, RootCause, RootCauses,
    ScannedArtifact,
};
use serde::Serialize;
use std::fmt::Write;
use utoipa::ToSchema;

/// The version against a control lineage at its latest version.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ControlLine {
    pub control: VersionAt,
    /// "zig-cc-musl 0.16.0 against musl-gcc 1.2.5: 6 workloads went O(n) → O(n²), 6 unchanged."
    pub headline: String,
    /// The all-workloads comparison of the two, on the dashboard.
    pub compare_url: String,
}

/// A regression or finding opened at the version, or fixed by it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VersionRegression {
    pub id: i64,
    pub kind: RegressionKind,
    /// One of the `RegressionStatus` values.
    pub status: String,
    /// Opened at this version and still open or acknowledged.
    pub open: bool,
    /// This version brought it back under.
    pub fixed_here: bool,
    /// "6 workloads, 0.15.2 → 0.16.0" or "2 workloads over at 0.14.1, the first version measured".
    pub what: String,
    /// Its page on the dashboard.
    pub url: String,
    /// Its root causes in a phrase, "broke 24 functions; 5 workloads trace to strspn and
    /// strcspn", and each cause with its workloads (docs/alerts.md, "Root causes").
    pub causes_headline: Option<String>,
    pub root_causes: Vec<RootCause>,
}

/// Most causes the version page lists under a regression; its own page lists them all.
const CAUSES_LISTED: usize = 8;

impl VersionRegression {
    pub fn new(
        r: &RegressionRow,
        members: &[RegressionWorkload],
        version: &str,
        causes: RootCauses,
    ) -> VersionRegression {
        let n = members.len();
        let count = format!("{n} workload{}", if n == 1 { "" } else { "s" });
        let fixed_here = r.fixed_version.as_deref() == Some(version);
        let what = match (&r.previous_version, fixed_here) {
            (_, true) => format!("{count}, opened at {}, back under here", r.version),
            (Some(good), false) => format!("{count}, {good} → {}", r.version),
            (None, false) => format!("{count} over at {}, the first version measured", r.version),
        };
        let open = r.version == version && RegressionStatus::parse(&r.status).is_some_and(RegressionStatus::is_open);
        VersionRegression {
            id: r.id,
            kind: r.kind(),
            status: r.status.clone(),
            open,
            fixed_here,
            what,
            url: links::regression(r.id),
            causes_headline: causes.headline(),
            root_causes: causes.root_causes,
        }
    }

    /// The causes the page lists, each in a line, and how many more its own page has.
    pub fn cause_lines(&self) -> (Vec<String>, usize) {
        let plain = |s: &str| s.to_string();
        let lines = self.root_causes.iter().take(CAUSES_LISTED).map(|c| c.line(plain, plain)).collect();
        (lines, self.root_causes.len().saturating_sub(CAUSES_LISTED))
    }

    /// "Regression #3", "Finding #2".
    pub fn title(&self) -> String {
        format!("{} #{}", self.kind.title(), self.id)
    }

    pub fn status_label(&self) -> &str {
        RegressionStatus::label_of(&self.status)
    }
}

/// A toolchain version's page.
#[derive(Debug, Clone)]
pub struct VersionView {
    /// The version (`after`) against the one compared with (`before`), every workload.
    pub changes: Changes,
    /// The lineage's versions that reported, in version order.
    pub versions: Vec<String>,
    /// The version compared against was chosen with `?against=`, not the one before.
    pub against_asked: bool,
    pub controls: Vec<ControlLine>,
    pub regressions: Vec<VersionRegression>,
    /// The latest scan of each artifact judged by this version, worst first.
    pub artifacts: Vec<ScannedArtifact>,
    /// The lineage's architecture, and the hosts that measured the versions compared under
    /// emulation.
    pub arch: Architecture,
}

impl VersionView {
    pub fn at(&self) -> &VersionAt {
        &self.changes.after
    }

    /// The versions just before and after this one in version order.
    pub fn neighbours(&self) -> (Option<&str>, Option<&str>) {
        let i = self.versions.iter().position(|v| *v == self.at().version);
        let at = |j: Option<usize>| j.and_then(|j| self.versions.get(j)).map(String::as_str);
        (at(i.and_then(|i| i.checked_sub(1))), at(i.map(|i| i + 1)))
    }

    /// The regressions and findings opened here and still open, for the top of the page.
    pub fn open_regressions(&self) -> impl Iterator<Item = &VersionRegression> {
        self.regressions.iter().filter(|r| r.open)
    }

    /// The version's page as a Markdown release note, its links absolute where the server knows
    /// its public URL.
    pub fn markdown(&self, public_url: Option<&str>) -> String {
        let at = self.at();
        let url = |path: &str| destination(&links::absolute(public_url, path));
        let mut md = format!(
            "# {}\n\n{}\n\n{}\n",
            text(&at.label()),
            text(&self.changes.headline()),
            text(&self.arch.sentence())
        );
        for c in &self.controls {
            let _ = write!(md, "\nControl: {} ([all workloads](<{}>))\n", text(&c.headline), url(&c.compare_url));
        }
        if !self.regressions.is_empty() {
            md.push_str("\n## Regressions and findings\n\n");
            for r in &self.regressions {
                let _ = writeln!(md, "- [{}](<{}>) ({}): {}", r.title(), url(&r.url), r.status_label(), text(&r.what));
                if let Some(h) = &r.causes_headline {
                    let _ = writeln!(md, "  - It {}:", text(h));
                }
                let (lines, more) = r.cause_lines();
                for c in r.root_causes.iter().take(lines.len()) {
                    let _ = writeln!(md, "    - {}", c.line(text, text));
                }
                if more > 0 {
                    let _ = writeln!(md, "    - and {more} more on its page");
                }
            }
        }
        let before = self.changes.before_name().unwrap_or_else(|| "before".into());
        for (group, rows) in self.changes.groups() {
            let _ = write!(
                md,
                "\n## {}\n\n| Workload | Measure | {} | {} | Change | Ratio | At the size of interest |\n\
                 |---|---|---|---|---|---|---|\n",
                group.title(),
                text(&before),
                text(&at.version)
            );
            for r in rows {
                let _ = writeln!(
                    md,
                    "| [{}](<{}>){} | {} | {} | {} | {} | {} | {} |",
                    text(&r.workload),
                    url(&r.series_url),
                    marker(r),
                    r.metric.label(),
                    state(r.before.as_ref().map(|s| s.text())),
                    state(r.after.as_ref().map(|s| s.text())),
                    text(&r.change_text),
                    r.ratio_text().unwrap_or_else(|| "–".into()),
                    r.at_interest.as_ref().map_or_else(|| "–".into(), |c| text(&c.sentence)),
                );
            }
        }
        if !self.artifacts.is_empty() {
            md.push_str(&super::exposures::markdown(&self.artifacts, text));
        }
        let _ = write!(md, "\nFrom slopewatch: <{}>\n", url(&links::version_page(&at.lineage, &at.version)));
        md
    }
}

/// A cell's state, or a dash where the version did not measure the workload.
fn state(s: Option<String>) -> String {
    s.map_or_else(|| "–".into(), |s| text(&s))
}

/// After a workload's name: that it is a finding, or held by a regression.
fn marker(r: &ChangeRow) -> String {
    match (&r.held_by, r.finding) {
        (Some(h), true) => format!(" (finding #{})", h.id),
        (Some(h), false) => format!(" (regression #{})", h.id),
        (None, _) => String::new(),
    }
}
