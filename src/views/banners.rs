//! The overview's verdict, above its grid: one banner per open (or acknowledged) regression or
//! finding, what it holds in a line ("6 workloads O(n) → O(n²), strtol wrong result") and each
//! workload behind it.

use crate::format;
use crate::model::{RegressionRow, RegressionStatus, RegressionWorkload};
use slopewatch_core::wire::Metric;
use time::OffsetDateTime;

/// One open regression or finding as the overview announces it.
#[derive(Debug, Clone)]
pub struct Banner {
    pub id: i64,
    pub lineage: String,
    /// The first bad version (a finding's: the first its lineage measured).
    pub version: String,
    /// The last good version; `None` for a finding.
    pub previous_version: Option<String>,
    pub acknowledged: bool,
    pub opened_at: OffsetDateTime,
    /// What it holds, workloads that changed alike counted together: `6 workloads O(n) → O(n²)`,
    /// `strtol wrong result`.
    pub parts: Vec<String>,
    /// Its root causes in a phrase, "broke 24 functions; 5 workloads trace to strspn and
    /// strcspn"; none where nothing traces to a function (the page fills it in when read).
    pub causes: Option<String>,
    pub workloads: Vec<BannerWorkload>,
}

/// One workload of a banner's regression.
#[derive(Debug, Clone)]
pub struct BannerWorkload {
    pub workload: String,
    pub metric: Metric,
    /// `k 1.00 → 2.01 · O(n) → O(n²)`, or what broke: `wrong result at 64 KiB: got -1, expected 9362`.
    pub what: String,
    pub failed: bool,
}

impl Banner {
    /// A finding: over at the first version its lineage measured, nothing to regress from.
    pub fn is_finding(&self) -> bool {
        self.previous_version.is_none()
    }
}

/// The banners of the stored regressions and findings (as the store lists them, newest first),
/// regressions apart from findings.
pub fn banners(stored: &[(RegressionRow, Vec<RegressionWorkload>)]) -> (Vec<Banner>, Vec<Banner>) {
    stored.iter().map(|(r, members)| banner(r, members)).partition(|b| !b.is_finding())
}

fn banner(r: &RegressionRow, members: &[RegressionWorkload]) -> Banner {
    let finding = r.previous_version.is_none();
    // Workloads that changed alike, in the order first met; those over their limit before those
    // that broke, and larger groups first.
    let mut groups: Vec<(bool, String, Vec<&str>)> = Vec::new();
    for m in members {
        let key = (m.is_failure(), change(m, finding));
        match groups.iter_mut().find(|(failed, what, _)| (*failed, what) == (key.0, &key.1)) {
            Some((_, _, names)) => names.push(&m.workload),
            None => groups.push((key.0, key.1, vec![&m.workload])),
        }
    }
    groups.sort_by_key(|(failed, _, names)| (*failed, std::cmp::Reverse(names.len())));
    let parts = groups
        .into_iter()
        .map(|(_, what, names)| match names.as_slice() {
            [one] => format!("{one} {what}"),
            many => format!("{} workloads {what}", many.len()),
        })
        .collect();
    Banner {
        id: r.id,
        lineage: r.lineage.clone(),
        version: r.version.clone(),
        previous_version: r.previous_version.clone(),
        acknowledged: r.status == RegressionStatus::Acknowledged.as_str(),
        opened_at: r.opened_at,
        parts,
        causes: None,
        workloads: members.iter().map(|m| workload(m, finding)).collect(),
    }
}

/// How a workload changed, in the words workloads that changed alike share: the class step, or
/// over its limit where no step is known, or the kind of failure; with the metric unless wall time.
fn change(m: &RegressionWorkload, finding: bool) -> String {
    let what = match &m.failure {
        Some(f) if m.is_failure() => f.kind.label().to_string(),
        _ if m.is_failure() => "failing".to_string(),
        _ if m.is_cost() => "cost more".to_string(),
        _ if finding => match m.class_after.as_deref().and_then(format::class_label_of_text) {
            Some(class) => format!("over its limit at {class}"),
            None => "over its limit".to_string(),
        },
        _ => match m.class_step() {
            Some(step) if m.class_before != m.class_after => step,
            _ => "over its limit".to_string(),
        },
    };
    if m.metric == Metric::Wall {
        what
    } else {
        format!("{what} ({})", m.metric.label())
    }
}

fn workload(m: &RegressionWorkload, finding: bool) -> BannerWorkload {
    let what = match (m.failure_summary(), m.slope) {
        (Some(f), _) if m.is_failure() => f,
        _ if m.is_cost() => m.cost_change().unwrap_or_else(|| "cost more".to_string()),
        (_, Some(k)) => {
            let slopes = match m.previous_slope {
                Some(before) if !finding => format!("k {} → {}", format::slope(before), format::slope(k)),
                _ => format!("k {}", format::slope(k)),
            };
            let class = if finding {
                m.class_after.as_deref().and_then(format::class_label_of_text).map(str::to_string)
            } else {
                m.class_step().filter(|_| m.class_before != m.class_after)
            };
            class.map_or(slopes.clone(), |c| format!("{slopes} · {c}"))
        }
        _ => "failing".to_string(),
    };
    BannerWorkload { workload: m.workload.clone(), metric: m.metric, what, failed: m.is_failure() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slopewatch_core::wire::{Failure, FailureKind, SizeUnit};

    fn regression(previous_version: Option<&str>) -> RegressionRow {
        RegressionRow {
            id: 2,
            lineage: "zig-cc-musl".into(),
            version: "0.16.0".into(),
            previous_version: previous_version.map(str::to_string),
            status: "open".into(),
            magnitude: None,
            first_run_at: OffsetDateTime::UNIX_EPOCH,
            opened_at: OffsetDateTime::UNIX_EPOCH,
            acknowledged_at: None,
            acknowledged_by: None,
            fixed_version: None,
            fix_first_run_at: None,
            resolved_at: None,
            merged_into: None,
        }
    }

    fn slope(workload: &str, before: &str, after: &str) -> RegressionWorkload {
        RegressionWorkload {
            regression_id: 2,
            workload: workload.into(),
            metric: Metric::Wall,
            reason: "slope".into(),
            slope: Some(2.01),
            ci_low: None,
            ci_high: None,
            r2: None,
            previous_slope: Some(1.0),
            time_ratio: None,
            ratio_size: None,
            joined_late: false,
            fixed_version: None,
            fixed_slope: None,
            fixed_ratio: None,
            failure_kind: None,
            failure_size: None,
            failure_detail: None,
            failure_facts: None,
            failure: None,
            class_before: Some(before.into()),
            class_after: Some(after.into()),
            source_changed: false,
            contract_break: None,
            contract: None,
            size_unit: SizeUnit::Bytes,
            size_of_interest: None,
            at_size_of_interest: None,
        }
    }

    fn failed(workload: &str) -> RegressionWorkload {
        let failure = Failure {
            kind: FailureKind::WrongResult,
            size: Some(65536),
            detail: String::new(),
            exit_status: None,
            signal: None,
            limit_ms: None,
            got: Some("-1".into()),
            expected: Some("9362".into()),
        };
        RegressionWorkload {
            reason: "failure".into(),
            slope: None,
            previous_slope: None,
            failure: Some(failure),
            class_before: None,
            class_after: None,
            ..slope(workload, "n", "n")
        }
    }

    #[test]
    fn a_regression_is_one_banner_counting_the_workloads_that_changed_alike() {
        let mut members: Vec<RegressionWorkload> = ["memchr", "strchr", "strcspn", "strlen", "strspn", "strstr"]
            .iter()
            .map(|w| slope(w, "n", "n^2"))
            .collect();
        members.push(failed("strtol"));
        members.push(slope("scan", "1", "n"));
        let (regressions, findings) = banners(&[(regression(Some("0.15.2")), members)]);
        assert!(findings.is_empty());
        let [b] = regressions.as_slice() else { panic!("one banner: {regressions:?}") };
        assert_eq!(b.parts, ["6 workloads O(n) → O(n²)", "scan O(1) → O(n)", "strtol wrong result"]);
        assert_eq!(b.workloads.len(), 8);
        assert_eq!(b.workloads[0].what, "k 1.00 → 2.01 · O(n) → O(n²)");
        assert_eq!(b.workloads[6].what, "wrong result at 64 KiB: got -1, expected 9362");
    }

    #[test]
    fn a_finding_says_over_its_limit_and_a_step_without_classes_says_so_too() {
        let over = RegressionWorkload { class_before: None, ..slope("strchr", "n", "n^2") };
        let (regressions, findings) = banners(&[
            (regression(None), vec![slope("contract.strchr.remaining", "n", "n")]),
            (regression(Some("0.15.2")), vec![over]),
        ]);
        assert_eq!(findings[0].parts, ["contract.strchr.remaining over its limit at O(n)"]);
        assert_eq!(findings[0].workloads[0].what, "k 2.01 · O(n)");
        assert_eq!(regressions[0].parts, ["strchr over its limit"]);
        assert_eq!(regressions[0].workloads[0].what, "k 1.00 → 2.01");
        let counted = RegressionWorkload { metric: Metric::InstructionsValgrind, ..slope("strchr", "n", "n^2") };
        let (regressions, _) = banners(&[(regression(Some("0.15.2")), vec![counted])]);
        assert_eq!(regressions[0].parts, ["strchr O(n) → O(n²) (instructions (Valgrind))"]);
    }
}
