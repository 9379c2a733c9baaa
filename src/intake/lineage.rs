//! A lineage as the alert rules read it in a summary pass: the store's rows of its regressions'
//! workloads, its version summaries and its failures, turned into the rules' memberships and
//! tracks.

use crate::model::{Reason, Track};
use crate::rules::evaluate::{Current, Evidence, History, Membership, Outcomes, VersionFit};
use crate::rules::replay::TrackSummary;
use crate::store::{LineageSummary, Tx};
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::version;
use slopewatch_core::wire::{Failure, Metric, SizeUnit};
use std::cmp::Ordering;
use std::collections::HashMap;
use time::OffsetDateTime;

/// The workloads of `at`'s lineage's open regressions, and of any regression opened at its
/// version (repeated runs of that version must not alert again).
pub(super) async fn members(tx: &mut Tx<'_>, at: &LineageVersion) -> Result<Vec<Membership>, sqlx::Error> {
    let members = tx.lineage_members(at).await?;
    Ok(members
        .into_iter()
        .map(|m| Membership {
            regression_id: m.regression_id,
            version: m.version,
            open: m.status.is_open(),
            track: m.track,
            fixed: m.fixed_version.is_some(),
        })
        .collect())
}

/// The summaries the cost tracks among `current` are judged against without reading the whole
/// lineage: those of the version of the lineage just below `at`. Empty when `current` holds no
/// cost, or no version is below.
pub(super) async fn costs_before(
    tx: &mut Tx<'_>,
    at: &LineageVersion,
    current: &[Current],
) -> Result<Vec<History>, sqlx::Error> {
    let ids: Vec<i64> =
        current.iter().filter(|c| c.track.reason == Reason::Cost).map(|c| c.track.workload_id).collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let versions = tx.lineage_versions(&at.lineage).await?;
    let below = versions
        .into_iter()
        .filter(|v| version::compare(v, &at.version) == Ordering::Less)
        .max_by(|a, b| version::compare(a, b));
    let Some(below) = below else { return Ok(Vec::new()) };
    let rows = tx.lineage_summaries_at(&LineageVersion::new(at.lineage.clone(), below), &ids).await?;
    Ok(rows.iter().filter_map(cost_history).collect())
}

/// A summary's cost track: a count's, or a time's over the control beside it; `None` for a time
/// without one.
fn cost_history(row: &LineageSummary) -> Option<History> {
    let beside = row.beside.as_ref().map(|(lineage, sizes)| (lineage.as_str(), sizes.clone()));
    let fit = fit(row).cost(row.metric.is_count(), beside)?;
    Some(History { track: Track::cost(row.workload_id), version: row.version.clone(), evidence: Evidence::Cost(fit) })
}

/// A summary's fit, held to its workload's contract and with its source and build.
fn fit(row: &LineageSummary) -> VersionFit {
    VersionFit::new(row.slope, row.sizes.clone(), row.complexity.clone())
        .held_to(row.expected)
        .built(row.source_hash.clone(), row.build_hash.clone())
}

/// Every version summary of the lineage as tracks: a slope track for each summary (held to its
/// workload's contract, when it has one), a cost track for each summary of a count, and a failure
/// track for each version that measured a workload at all. In a fixed order, so a regression lists its workloads by name and metric.
pub(super) async fn summaries(tx: &mut Tx<'_>, lineage: &str) -> Result<Vec<TrackSummary>, sqlx::Error> {
    let rows = tx.lineage_summaries(lineage).await?;
    let failures = tx.lineage_failures(lineage).await?;
    // Per (workload, version), how its runs fared.
    struct Tally {
        workload: String,
        metric: Metric,
        size_unit: SizeUnit,
        first_seen: OffsetDateTime,
        passed: (usize, Vec<i64>),
        failed: (usize, Vec<i64>),
        failure: Option<Failure>,
    }
    let mut tallies: HashMap<(i64, String), Tally> = HashMap::new();
    let mut summaries = Vec::with_capacity(rows.len() * 2);
    for row in rows {
        let tally = Tally {
            workload: row.workload.clone(),
            metric: row.metric,
            size_unit: row.size_unit,
            first_seen: row.first_seen,
            passed: (row.runs, row.host_ids.clone()),
            failed: (0, Vec::new()),
            failure: None,
        };
        tallies.insert((row.workload_id, row.version.clone()), tally);
        if let Some(history) = cost_history(&row) {
            summaries.push(TrackSummary {
                history,
                workload: row.workload.clone(),
                metric: row.metric,
                size_unit: row.size_unit,
                first_seen: row.first_seen,
            });
        }
        let history = History {
            track: Track::slope(row.workload_id),
            version: row.version.clone(),
            evidence: Evidence::Slope(fit(&row)),
        };
        summaries.push(TrackSummary {
            history,
            workload: row.workload,
            metric: row.metric,
            size_unit: row.size_unit,
            first_seen: row.first_seen,
        });
    }
    for row in failures {
        let t = tallies.entry((row.workload_id, row.version)).or_insert_with(|| Tally {
            workload: row.workload,
            metric: row.metric,
            size_unit: row.size_unit,
            first_seen: row.first_seen,
            passed: (0, Vec::new()),
            failed: (0, Vec::new()),
            failure: None,
        });
        t.first_seen = t.first_seen.min(row.first_seen);
        t.failed = (row.runs, row.host_ids);
        t.failure = row.failure;
    }
    for ((workload_id, version), t) in tallies {
        let outcomes = Outcomes::new(t.passed.0, &t.passed.1, t.failed.0, &t.failed.1, t.failure);
        let history = History { track: Track::failure(workload_id), version, evidence: Evidence::Outcomes(outcomes) };
        summaries.push(TrackSummary {
            history,
            workload: t.workload,
            metric: t.metric,
            size_unit: t.size_unit,
            first_seen: t.first_seen,
        });
    }
    // In a fixed order, so a regression lists its workloads by name and metric whatever the
    // maps did.
    summaries.sort_by(|a, b| (&a.workload, a.metric, a.history.track).cmp(&(&b.workload, b.metric, b.history.track)));
    Ok(summaries)
}
