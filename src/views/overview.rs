//! The overview's model: each workload's slope or failure at every lineage's latest version, and
//! the open regressions listed beside it.

use super::Band;
use crate::store::{FailureRow, SlopeRow};
use serde::Serialize;
use slopewatch_core::version::sort_versions;
use slopewatch_core::wire::{FailureKind, SizeUnit};
use std::collections::BTreeMap;
use time::OffsetDateTime;

/// The overview: a row per workload, a column per lineage at its latest version.
#[derive(Debug, Clone, Default)]
pub struct Overview {
    pub lineages: Vec<String>,
    pub rows: Vec<OverviewRow>,
}

#[derive(Debug, Clone)]
pub struct OverviewRow {
    pub workload: String,
    pub size_unit: SizeUnit,
    /// One cell per lineage, in the order of `Overview::lineages`; `None` where never measured.
    pub cells: Vec<Option<OverviewCell>>,
}

#[derive(Debug, Clone)]
pub struct OverviewCell {
    pub lineage: String,
    pub version: String,
    /// The latest version's slope over the runs that passed; `None` when every run failed.
    pub slope: Option<f64>,
    pub band: Option<Band>,
    /// The complexity class at the latest version, `O(n²)` or `unsure`.
    pub complexity_class: Option<&'static str>,
    pub versions: usize,
    /// Where runs of the latest version failed the workload.
    pub failure: Option<CellFailure>,
}

/// How many of a version's runs failed a workload, and how (the latest failure's kind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellFailure {
    pub kind: FailureKind,
    pub failed_runs: i64,
    pub runs: i64,
}

impl CellFailure {
    /// "failed in 1 of 3 runs".
    pub fn marker(&self) -> String {
        let runs = if self.runs == 1 { "run" } else { "runs" };
        format!("failed in {} of {} {runs}", self.failed_runs, self.runs)
    }
}

impl OverviewCell {
    /// The cell's CSS class: its band, or `failed`.
    pub fn class(&self) -> &'static str {
        self.band.map_or("failed", Band::name)
    }
}

/// A series whose latest version is over the threshold.
#[derive(Debug, Clone, Serialize)]
pub struct OpenRegression {
    /// The stored regression this belongs to, with the team's notes.
    pub id: Option<i64>,
    pub workload: String,
    pub lineage: String,
    /// The version where the slope went over the threshold and stayed.
    pub first_bad_version: String,
    /// The version just before it, if there is one.
    pub last_good_version: Option<String>,
    pub latest_version: String,
    pub latest_slope: f64,
    pub good_slope: Option<f64>,
    /// For a workload there for a failure, what broke, e.g. `wrong result at 65536`.
    pub failure: Option<String>,
}

/// Groups the slope history (version-ordered within each workload and lineage) into series.
fn group(history: &[SlopeRow]) -> BTreeMap<(&str, &str), Vec<&SlopeRow>> {
    let mut series: BTreeMap<(&str, &str), Vec<&SlopeRow>> = BTreeMap::new();
    for row in history {
        series.entry((&row.workload, &row.lineage)).or_default().push(row);
    }
    series
}

/// A version of a series on the overview: its slope where runs passed, its failures.
struct OverviewVersion<'a> {
    version: &'a str,
    size_unit: SizeUnit,
    first_seen: OffsetDateTime,
    slope: Option<f64>,
    class: Option<Option<slopewatch_core::complexity::Class>>,
    failure: Option<&'a FailureRow>,
}

impl Overview {
    /// The matrix from the slope history and the versions where workloads failed, which may
    /// have no slope at all (every run failed).
    pub fn from_history(history: &[SlopeRow], failures: &[FailureRow]) -> Overview {
        let mut series: BTreeMap<(&str, &str), Vec<OverviewVersion>> = BTreeMap::new();
        for row in history {
            series.entry((&row.workload, &row.lineage)).or_default().push(OverviewVersion {
                version: &row.version,
                size_unit: row.size_unit,
                first_seen: row.first_seen,
                slope: Some(row.slope),
                class: row.class,
                failure: None,
            });
        }
        for f in failures {
            let versions = series.entry((&f.workload, &f.lineage)).or_default();
            match versions.iter_mut().find(|v| v.version == f.version) {
                Some(v) => v.failure = Some(f),
                None => versions.push(OverviewVersion {
                    version: &f.version,
                    size_unit: f.size_unit,
                    first_seen: f.first_seen,
                    slope: None,
                    class: None,
                    failure: Some(f),
                }),
            }
        }
        let mut lineages: Vec<String> = series.keys().map(|(_, l)| l.to_string()).collect();
        lineages.sort();
        lineages.dedup();
        let mut rows: Vec<OverviewRow> = Vec::new();
        for ((workload, lineage), versions) in &mut series {
            sort_versions(versions, |v| v.version, |v| v.first_seen);
            let latest = versions.last().expect("a series has a version");
            if rows.last().is_none_or(|r| r.workload != *workload) {
                rows.push(OverviewRow {
                    workload: workload.to_string(),
                    size_unit: latest.size_unit,
                    cells: vec![None; lineages.len()],
                });
            }
            let column = lineages.iter().position(|l| l.as_str() == *lineage).expect("lineage listed");
            let failure = latest.failure.and_then(|f| {
                let kind = FailureKind::parse(&f.kind)?;
                let failed_runs = i64::from(f.failed_runs);
                Some(CellFailure { kind, failed_runs, runs: failed_runs + i64::from(f.passed_runs) })
            });
            rows.last_mut().expect("row pushed").cells[column] = Some(OverviewCell {
                lineage: lineage.to_string(),
                version: latest.version.to_string(),
                slope: latest.slope,
                band: latest.slope.map(Band::of),
                complexity_class: latest.class.map(crate::format::label),
                versions: versions.len(),
                failure,
            });
        }
        Overview { lineages, rows }
    }
}

/// The stored open regressions, one line per workload, with each series' latest version from
/// the history; worst first.
pub fn open_regressions(
    stored: &[(crate::model::RegressionRow, Vec<crate::model::RegressionWorkload>)],
    history: &[SlopeRow],
) -> Vec<OpenRegression> {
    let series = group(history);
    let mut open: Vec<OpenRegression> = stored
        .iter()
        .flat_map(|(r, members)| members.iter().map(move |m| (r, m)))
        .map(|(r, m)| {
            let latest = series.get(&(m.workload.as_str(), r.lineage.as_str())).and_then(|v| v.last());
            OpenRegression {
                id: Some(r.id),
                workload: m.workload.clone(),
                lineage: r.lineage.clone(),
                first_bad_version: r.version.clone(),
                last_good_version: r.previous_version.clone(),
                latest_version: latest.map_or_else(|| r.version.clone(), |l| l.version.clone()),
                latest_slope: latest.map_or(m.slope.unwrap_or(f64::NAN), |l| l.slope),
                good_slope: m.previous_slope,
                failure: m.failure.as_ref().filter(|_| m.reason == "failure").map(|f| f.summary()),
            }
        })
        .collect();
    open.sort_by(|a, b| b.latest_slope.total_cmp(&a.latest_slope));
    open
}
