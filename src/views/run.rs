//! A run as its page and the API show it: what is worked out on the stored numbers (classes, the
//! cost at a size of interest, a failed workload's partial slope), and what the page shows beside
//! each workload: its complexity class, the same workload at the version measured before in its
//! lineage, and the regression (or finding) its version opened or lies in.

use crate::analysis;
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

/// Works out what a run as stored does not hold: each fitted workload's complexity class and its
/// cost at its size of interest, and a failed workload's partial slope (`fit_partial_slopes`).
pub fn fill_in_run(run: &mut RunDetail, min_sizes: usize) {
    for w in run.workloads.iter_mut().filter(|w| w.slope.is_some()) {
        let medians: Vec<(u64, f64)> = w.measurements.iter().map(|m| (m.size as u64, m.median_ns)).collect();
        let points: Vec<(f64, f64)> = medians.iter().map(|&(s, t)| (s as f64, t)).collect();
        w.at_size_of_interest = w
            .size_of_interest
            .and_then(|at| slopewatch_core::predict::predict(&points, u64::try_from(at).ok()?).ok())
            .map(|p| p.sentence_in(w.size_unit, run.metric));
        w.complexity = analysis::classify(&medians, run.metric);
    }
    fit_partial_slopes(run, min_sizes);
}

/// Fits each failed workload of `run` over the sizes it measured before failing, when they are at
/// least `min_sizes` (the alert rules' minimum), and marks the fit partial. Such a slope is shown
/// with its run only: the store keeps no fit of a failed workload, so no summary or alert sees it.
fn fit_partial_slopes(run: &mut RunDetail, min_sizes: usize) {
    for w in run.workloads.iter_mut().filter(|w| w.failure.is_some() && w.slope.is_none()) {
        if w.measurements.len() < min_sizes {
            continue;
        }
        let points: Vec<(f64, f64)> = w.measurements.iter().map(|m| (m.size as f64, m.median_ns)).collect();
        let Ok(fit) = slopewatch_core::fit::fit(&points) else { continue };
        w.slope = Some(fit.slope);
        w.intercept = Some(fit.intercept);
        w.r2 = Some(fit.r2);
        w.stderr = Some(fit.stderr);
        w.ci_low = Some(fit.ci_low);
        w.ci_high = Some(fit.ci_high);
        w.n_sizes = fit.n as i32;
        w.local_slopes = fit.local_slopes;
        w.partial = true;
    }
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
            profile: None,
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
            evidence: slopewatch_core::verdict::SlopeEvidence {
                slope,
                ci_low: slope,
                ci_high: slope,
                r2: 1.0,
                sizes: 5,
            },
            complexity: None,
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
