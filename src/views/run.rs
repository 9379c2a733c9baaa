//! What a run page shows beside each workload's own numbers: its complexity class, the same
//! workload at the version measured before in its lineage, and the regression (or finding) its
//! version opened or lies in.

use crate::format;
use crate::links;
use crate::store::{HeldBy, RunDetail, SlopeRow, WorkloadDetail};
use slopewatch_core::version::compare;
use std::cmp::Ordering;

/// One workload of a run, with what the page says beside it.
pub struct RunContext {
    /// `O(n²)`, `unsure`, or none for a failed workload.
    pub class: Option<&'static str>,
    /// The workload at the version before the run's, in the run's lineage and metric.
    pub previous: Option<Previous>,
    /// The regression or finding its version opened or lies in.
    pub regression: Option<HoldingRegression>,
}

/// A workload's class and slope at an earlier version.
#[derive(Debug, Clone, PartialEq)]
pub struct Previous {
    pub version: String,
    /// `O(n)`, `unsure`, or `–` where the summary has no class yet.
    pub class: &'static str,
    pub slope: String,
}

/// A link to the regression or finding that holds a workload at the run's version.
#[derive(Debug, Clone, PartialEq)]
pub struct HoldingRegression {
    pub url: String,
    /// `regression #3` or `finding #3`.
    pub name: String,
    /// `opened at this version`, or where the regression started: `since 0.16.0`.
    pub how: String,
    /// `open`, `acknowledged`, `fixed`, `false alarm`.
    pub status: &'static str,
    /// The run's version is the regression's first bad one.
    pub opened_here: bool,
}

/// Each of the run's workloads in order, with its class, its previous version from `slopes`
/// (the run's lineage and metric, each workload's versions in order) and its regression from
/// `held`.
pub fn context(run: &RunDetail, slopes: &[SlopeRow], held: &[HeldBy]) -> Vec<RunContext> {
    let version = run.toolchain.version.as_str();
    run.workloads
        .iter()
        .map(|w| RunContext {
            class: w.failure.is_none().then(|| format::class_label(w.complexity.as_ref())).flatten(),
            previous: previous(w, version, slopes),
            regression: regression(w, version, held),
        })
        .collect()
}

/// The latest summary of `w` at a version before `version`: the one just before it in the
/// series' order when the version has a summary, else the last that compares lower.
fn previous(w: &WorkloadDetail, version: &str, slopes: &[SlopeRow]) -> Option<Previous> {
    let series: Vec<&SlopeRow> = slopes.iter().filter(|s| s.workload == w.name).collect();
    let before = match series.iter().position(|s| s.version == version) {
        Some(at) => at.checked_sub(1).map(|i| series[i]),
        None => series.iter().rev().find(|s| compare(&s.version, version) == Ordering::Less).copied(),
    }?;
    Some(Previous {
        version: before.version.clone(),
        class: before.class.map_or("–", format::label),
        slope: format::slope(before.slope),
    })
}

/// The regression that `version` opened for `w`, else the newest one whose range (first bad up
/// to the workload's fix) holds `version`.
fn regression(w: &WorkloadDetail, version: &str, held: &[HeldBy]) -> Option<HoldingRegression> {
    let mine = held.iter().filter(|h| h.workload == w.name);
    let opened = mine.clone().filter(|h| h.version == version).max_by_key(|h| h.regression_id);
    let within = || {
        mine.clone()
            .filter(|h| compare(&h.version, version) == Ordering::Less)
            .filter(|h| h.fixed_version.as_deref().is_none_or(|f| compare(version, f) == Ordering::Less))
            .max_by_key(|h| h.regression_id)
    };
    let h = opened.or_else(within)?;
    let opened_here = h.version == version;
    let kind = if h.previous_version.is_some() { "regression" } else { "finding" };
    Some(HoldingRegression {
        url: links::regression(h.regression_id),
        name: format!("{kind} #{}", h.regression_id),
        how: if opened_here { "opened at this version".into() } else { format!("since {}", h.version) },
        status: h.status.label(),
        opened_here,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RegressionStatus;
    use crate::store::MeasurementDetail;
    use slopewatch_core::complexity::Class;
    use slopewatch_core::wire::{Failure, FailureKind, Host, Metric, SizeUnit, Toolchain, VersionFrom};
    use std::collections::BTreeMap;
    use time::OffsetDateTime;

    fn workload(name: &str, failure: Option<Failure>) -> WorkloadDetail {
        WorkloadDetail {
            name: name.into(),
            size_unit: SizeUnit::Bytes,
            source_hash: String::new(),
            slope: Some(2.0),
            intercept: None,
            r2: None,
            stderr: None,
            ci_low: None,
            ci_high: None,
            n_sizes: 6,
            complexity: None,
            local_slopes: Vec::new(),
            metadata: BTreeMap::new(),
            measurements: Vec::<MeasurementDetail>::new(),
            partial: false,
            failure,
            size_of_interest: None,
            at_size_of_interest: None,
        }
    }

    fn run(version: &str, workloads: Vec<WorkloadDetail>) -> RunDetail {
        RunDetail {
            run_id: uuid::Uuid::nil(),
            agent_version: String::new(),
            started_at: OffsetDateTime::UNIX_EPOCH,
            received_at: OffsetDateTime::UNIX_EPOCH,
            samples_pruned_at: None,
            host: Host { name: "h".into(), cpu: String::new(), kernel: String::new(), arch: String::new() },
            toolchain: Toolchain {
                name: "zig-cc-musl".into(),
                version: version.into(),
                libc: String::new(),
                target: String::new(),
                compiler: String::new(),
                flags: String::new(),
                version_from: VersionFrom::default(),
            },
            metric: Metric::Wall,
            workloads,
        }
    }

    fn slope(workload: &str, version: &str, slope: f64, class: Class) -> SlopeRow {
        SlopeRow {
            workload: workload.into(),
            metric: Metric::Wall,
            size_unit: SizeUnit::Bytes,
            lineage: "zig-cc-musl".into(),
            version: version.into(),
            slope,
            class: Some(Some(class)),
            first_seen: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn held(workload: &str, id: i64, version: &str, fixed: Option<&str>) -> HeldBy {
        HeldBy {
            workload: workload.into(),
            regression_id: id,
            version: version.into(),
            previous_version: Some("0.15.2".into()),
            status: RegressionStatus::Open,
            reason: "slope".into(),
            joined_late: false,
            fixed_version: fixed.map(Into::into),
        }
    }

    #[test]
    fn the_previous_version_is_the_one_measured_before_the_runs() {
        let slopes = [
            slope("strchr", "0.14.0", 1.0, Class::Linear),
            slope("strchr", "0.15.2", 1.01, Class::Linear),
            slope("strchr", "0.16.0", 2.0, Class::Quadratic),
            slope("other", "0.15.9", 3.0, Class::Cubic),
        ];
        let at = |version: &str| context(&run(version, vec![workload("strchr", None)]), &slopes, &[]);
        let expected = Previous { version: "0.15.2".into(), class: "O(n)", slope: "1.01".into() };
        assert_eq!(at("0.16.0")[0].previous.as_ref(), Some(&expected));
        // A version without a summary of its own (the workload failed there) looks back the same way.
        assert_eq!(at("0.15.3")[0].previous.as_ref(), Some(&expected));
        assert_eq!(at("0.14.0")[0].previous, None, "the first version measured has none");
    }

    #[test]
    fn a_run_links_the_regression_its_version_opened_or_lies_in() {
        let wrong = Failure {
            kind: FailureKind::WrongResult,
            size: Some(32768),
            detail: String::new(),
            exit_status: None,
            signal: None,
            limit_ms: None,
            got: Some("-1".into()),
            expected: Some("4681".into()),
        };
        let held = [held("strchr", 3, "0.16.0", Some("0.17.0")), held("strtol", 4, "0.16.0", None)];
        let workloads = || vec![workload("strchr", None), workload("strtol", Some(wrong.clone()))];
        let opened = context(&run("0.16.0", workloads()), &[], &held);
        let link = opened[0].regression.as_ref().unwrap();
        assert_eq!((link.url.as_str(), link.name.as_str()), ("/regressions/3", "regression #3"));
        assert!(link.opened_here && link.how == "opened at this version");
        assert_eq!(opened[1].regression.as_ref().unwrap().name, "regression #4");
        assert_eq!(opened[1].class, None, "a failed workload has no class");
        let later = context(&run("0.16.1", workloads()), &[], &held);
        assert_eq!(later[0].regression.as_ref().unwrap().how, "since 0.16.0");
        let fixed = context(&run("0.17.0", workloads()), &[], &held);
        assert_eq!(fixed[0].regression, None, "fixed at its version");
        assert_eq!(fixed[1].regression.as_ref().unwrap().name, "regression #4", "never fixed");
        assert!(context(&run("0.15.2", workloads()), &[], &held).iter().all(|c| c.regression.is_none()));
    }
}
