//! A regression's timeline entries as values: what the rules recorded of it and what its editors
//! did, each with its kind and its wording, which are written here and nowhere else.

use super::evaluate::{time_ratio, Evidence, Outcomes};
use super::replay::{Moved, MovedField};
use crate::format;
use crate::model::{NewEvent, RegressionStatus};
use slopewatch_core::complexity::{Class, UNSURE};
use slopewatch_core::wire::SizeUnit;

/// One entry of a regression's timeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Entry<'a> {
    /// The regression's first bad version was first measured.
    FirstRun { version: &'a str },
    /// A workload went over its threshold, or failed, at version `at`: where the regression opened,
    /// or later (`late`), joining it. `before` is its summary at the version measured before;
    /// `unit` what its sizes count, for the size a failure stopped at; `threshold` the slope
    /// threshold, or for a cost its factor.
    Crossed {
        workload: &'a str,
        unit: SizeUnit,
        at: &'a str,
        evidence: &'a Evidence,
        before: Option<&'a Evidence>,
        threshold: f64,
        late: bool,
    },
    /// Versions measured out of order moved the regression (`measured` is the version whose runs
    /// showed it).
    Moved { moved: &'a Moved, measured: &'a str },
    /// A workload turned out to belong to another regression.
    Left { workload: &'a str, measured: &'a str },
    /// The regression turned out to be part of regression `into`.
    MergedInto { into: i64, measured: &'a str },
    /// Regression `from` turned out to be part of this one.
    Merged { from: i64, measured: &'a str },
    /// A workload came back under its threshold, or passed again, at `version`.
    Fixed { workload: &'a str, version: &'a str, evidence: &'a Evidence, threshold: f64 },
    /// Every workload of the regression came back at `version`.
    Resolved { version: &'a str },
    /// An editor set the regression's status.
    Status(RegressionStatus),
    /// An editor linked an upstream issue or the fixing change.
    Linked { title: &'a str },
}

impl Entry<'_> {
    /// The entry's kind as the timeline stores it.
    pub fn kind(&self) -> &'static str {
        match self {
            Entry::FirstRun { .. } => "first_run",
            Entry::Crossed { late: false, .. } => "opened",
            Entry::Crossed { late: true, .. } => "joined",
            Entry::Moved { .. } | Entry::MergedInto { .. } => "moved",
            Entry::Left { .. } => "left",
            Entry::Merged { .. } => "merged",
            Entry::Fixed { .. } => "fix_seen",
            Entry::Resolved { .. } => "resolved",
            Entry::Status(RegressionStatus::Acknowledged) => "acknowledged",
            Entry::Status(_) => "status",
            Entry::Linked { .. } => "link",
        }
    }

    /// The entry as the store writes it.
    pub fn event(&self) -> NewEvent {
        NewEvent { kind: self.kind(), detail: self.detail(), status: self.status() }
    }

    /// The status an editor set, for an entry that records one.
    pub fn status(&self) -> Option<RegressionStatus> {
        match self {
            Entry::Status(status) => Some(*status),
            _ => None,
        }
    }

    /// What the entry says, as its regression's page and postmortem show it.
    pub fn detail(&self) -> String {
        match *self {
            Entry::FirstRun { version } => format!("First run of {version}"),
            Entry::Crossed { workload, at, evidence: Evidence::Slope(fit), before, late, .. }
                if fit.contract.is_some() =>
            {
                let expected = fit.contract.map_or("", Class::label);
                let was = before.and_then(Evidence::slope).and_then(|b| format::class_label(b.complexity.as_ref()));
                format!(
                    "{workload} {} at {at}: {} against its contract of {expected}{}",
                    if late { "joined" } else { "broke its contract" },
                    format::class_label(fit.complexity.as_ref()).unwrap_or(UNSURE),
                    was.map(|c| format!(" (was {c})")).unwrap_or_default(),
                )
            }
            Entry::Crossed { workload, at, evidence: Evidence::Slope(fit), before, threshold, late, .. } => {
                let mut detail = format!(
                    "{workload} {} at {at}: slope {:.2} (95% CI {:.2}–{:.2}, threshold {threshold:.2})",
                    if late { "joined" } else { "crossed" },
                    fit.slope,
                    fit.ci_low,
                    fit.ci_high,
                );
                let before = before.and_then(Evidence::slope).and_then(|b| b.complexity.as_ref());
                if let Some(step) = format::class_step(before, fit.complexity.as_ref()) {
                    detail.push_str(&format!(", {step}"));
                }
                detail
            }
            Entry::Crossed { workload, unit, at, evidence: Evidence::Cost(fit), before, threshold, late } => {
                let before = before.and_then(Evidence::slope);
                let change = before.and_then(|b| time_ratio(&fit.sizes, &b.sizes)).map(|(size, ratio)| {
                    let (b, a) = (
                        before.and_then(|b| format::class_label(b.complexity.as_ref())),
                        format::class_label(fit.complexity.as_ref()),
                    );
                    let change = format::cost_change(ratio, size, unit, b, a);
                    match &fit.control {
                        Some(control) => format!("{change}, over {control} beside it"),
                        None => change,
                    }
                });
                format!(
                    "{workload} {} at {at}: {} (more than {} the version before)",
                    if late { "joined for its cost" } else { "rose in cost" },
                    change.unwrap_or_else(|| "cost rose".into()),
                    format::factor(threshold),
                )
            }
            Entry::Crossed { workload, unit, at, evidence: Evidence::Outcomes(o), late, .. } => {
                format!("{workload} failed at {at}{}: {}", if late { " and joined" } else { "" }, failing(o, unit))
            }
            Entry::Moved { moved, measured } => {
                let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".to_string());
                let (from, to) = (shown(&moved.from), shown(&moved.to));
                let what = match moved.field {
                    MovedField::Version => "First bad",
                    MovedField::PreviousVersion => "Last good",
                    MovedField::FixedVersion if moved.to.is_none() => {
                        return format!(
                            "Reopened when {measured} was measured: a workload regressed with it and is not fixed in \
                             {from}"
                        )
                    }
                    MovedField::FixedVersion => "Fixed in",
                    MovedField::MergedInto => {
                        let from = moved.from.as_deref().unwrap_or_default();
                        return format!("Taken out of #{from} when {measured} was measured: it regressed on its own");
                    }
                };
                format!("{what} moved from {from} to {to} when {measured} was measured")
            }
            Entry::Left { workload, measured } => {
                format!("{workload} left when {measured} was measured: it regressed elsewhere")
            }
            Entry::MergedInto { into, measured } => {
                format!("Merged into #{into} when {measured} was measured: its workloads regressed with it")
            }
            Entry::Merged { from, measured } => {
                format!("#{from} merged into this regression when {measured} was measured")
            }
            Entry::Fixed { workload, version, evidence: Evidence::Slope(fit), threshold } => {
                format!("{workload} back under {threshold:.2} at {version}: slope {:.2}", fit.slope)
            }
            Entry::Fixed { workload, version, evidence: Evidence::Cost(_), threshold } => {
                format!("{workload} back within {} of its last good cost at {version}", format::factor(threshold))
            }
            Entry::Fixed { workload, version, evidence: Evidence::Outcomes(o), .. } => format!(
                "{workload} runs correctly again at {version} ({} of {} runs passed)",
                o.passed,
                o.passed + o.failed
            ),
            Entry::Resolved { version } => format!("Resolved by {version}"),
            Entry::Status(RegressionStatus::Acknowledged) => "Acknowledged".to_string(),
            Entry::Status(status) => format!("Status set to {}", status.label()),
            Entry::Linked { title } => format!("Linked {title}"),
        }
    }
}

/// What a failing version shows: the latest failure, and on how many runs and hosts it failed.
fn failing(o: &Outcomes, unit: SizeUnit) -> String {
    let what = o.failure.as_ref().map_or_else(|| "failed".to_string(), |f| format::failure(f, unit));
    format!(
        "{what} (failed in {} of {} runs, on {} of {} hosts)",
        o.failed,
        o.passed + o.failed,
        o.failed_hosts,
        o.hosts
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_an_editor_sets_is_read_back_from_its_timeline_entry() {
        for status in RegressionStatus::ALL {
            assert_eq!(Entry::Status(status).status(), Some(status));
        }
        assert_eq!(Entry::Linked { title: "upstream" }.status(), None);
        assert_eq!(Entry::Resolved { version: "0.17.0" }.status(), None);
    }

    #[test]
    fn a_move_says_which_version_moved_where_and_a_reopening_what_it_no_longer_fixes() {
        let moved = |field, from: Option<&str>, to: Option<&str>| Moved {
            field,
            from: from.map(str::to_string),
            to: to.map(str::to_string),
        };
        let detail = |m: &Moved| Entry::Moved { moved: m, measured: "0.15.0" }.detail();
        assert_eq!(
            detail(&moved(MovedField::Version, Some("0.17.1"), Some("0.16.0"))),
            "First bad moved from 0.17.1 to 0.16.0 when 0.15.0 was measured"
        );
        assert_eq!(
            detail(&moved(MovedField::PreviousVersion, None, Some("0.15.2"))),
            "Last good moved from none to 0.15.2 when 0.15.0 was measured"
        );
        assert_eq!(
            detail(&moved(MovedField::FixedVersion, Some("0.19.0"), Some("0.17.0"))),
            "Fixed in moved from 0.19.0 to 0.17.0 when 0.15.0 was measured"
        );
        assert_eq!(
            detail(&moved(MovedField::FixedVersion, Some("0.19.0"), None)),
            "Reopened when 0.15.0 was measured: a workload regressed with it and is not fixed in 0.19.0"
        );
        assert_eq!(
            detail(&moved(MovedField::MergedInto, Some("4"), None)),
            "Taken out of #4 when 0.15.0 was measured: it regressed on its own"
        );
    }
}
