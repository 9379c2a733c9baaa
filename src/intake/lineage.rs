//! A lineage as the alert rules read it in a summary pass: the store's rows of its regressions'
//! workloads, its version summaries and its failures, turned into the rules' memberships and
//! tracks.

use crate::model::Track;
use crate::rules::evaluate::{Evidence, History, Membership, Outcomes, VersionFit};
use crate::rules::replay::TrackSummary;
use crate::store::Tx;
use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::wire::{Failure, Metric, SizeUnit};
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

/// Every version summary of the lineage as tracks: a slope track for each summary (held to its
/// workload's contract, when it has one), and a failure track for each version that measured a
/// workload at all. In a fixed order, so a regression lists its workloads by name and metric.
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
            passed: (row.runs, row.host_ids),
            failed: (0, Vec::new()),
            failure: None,
        };
        tallies.insert((row.workload_id, row.version.clone()), tally);
        let fit = VersionFit::new(row.slope, row.sizes, row.complexity).held_to(row.expected);
        let history =
            History { track: Track::slope(row.workload_id), version: row.version, evidence: Evidence::Slope(fit) };
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
