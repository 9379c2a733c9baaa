//! What a toolchain version's changes add from beyond the two versions: the regression or finding
//! that holds each workload (one the rules opened at the version is never read as unchanged), and
//! each workload's slope across its lineage's versions.

use super::changes::{sort, Change, Changes, Held, SeriesState, TrendSlope};
use super::{Alerting, Band};
use crate::format;
use crate::links;
use crate::model::{RegressionKind, RegressionRow, RegressionWorkload};
use crate::store::SlopeRow;
use slopewatch_core::version;
use std::cmp::Ordering;

impl Changes {
    /// Marks each workload held by a regression or finding opened at the later version, or by a
    /// finding opened at an earlier version of its lineage that the later one has not brought
    /// back under, of `regressions` (as `Store::version_regressions` reads them).
    pub fn hold(&mut self, regressions: &[(RegressionRow, Vec<RegressionWorkload>)]) {
        let after = &self.after;
        let before_after = |v: &str| version::compare(v, &after.version) == Ordering::Less;
        for (r, members) in regressions.iter().filter(|(r, _)| r.lineage == after.lineage) {
            let finding = r.kind() == RegressionKind::Finding;
            if r.version != after.version && !(finding && before_after(&r.version)) {
                continue;
            }
            // A member fixed at or before the later version no longer holds it.
            let held = members.iter().filter(|m| {
                r.version == after.version
                    || m.fixed_version.as_deref().is_none_or(|f| !before_after(f) && *f != after.version)
            });
            for m in held {
                let found = self.rows.iter_mut().find(|row| row.workload == m.workload && row.metric == m.metric);
                if let Some(row) = found {
                    // What the rules opened here is a change against the version before, whatever
                    // the comparison above made of it.
                    if r.version == after.version && !finding && row.change == Change::Unchanged {
                        row.change = match m.reason.as_str() {
                            "cost" => Change::Costlier,
                            "failure" => Change::Fails,
                            _ => Change::Steeper,
                        };
                        let slope = |s: &Option<SeriesState>| s.as_ref()?.summary.as_ref().map(|s| s.slope);
                        if let (Some(b), Some(a)) = (slope(&row.before), slope(&row.after)) {
                            row.change_text = format!("k {} → {}", format::slope(b), format::slope(a));
                        }
                    }
                    row.finding = finding;
                    let url = links::regression(r.id);
                    row.held_by = Some(Held { id: r.id, kind: r.kind(), status: r.status.clone(), url });
                }
            }
        }
        sort(&mut self.rows);
    }

    /// Gives each row its slope at every one of `versions` (the later version's lineage's, in
    /// version order) from that lineage's slope history.
    pub fn trends(&mut self, history: &[SlopeRow], versions: &[String]) {
        for row in &mut self.rows {
            let slopes: Vec<&SlopeRow> =
                history.iter().filter(|h| h.workload == row.workload && h.metric == row.metric).collect();
            let alerting = Alerting::of(&self.rules, &row.workload);
            row.trend = versions
                .iter()
                .map(|v| {
                    let at = slopes.iter().find(|h| &h.version == v);
                    TrendSlope {
                        version: v.clone(),
                        slope: at.map(|h| h.slope),
                        over: at.is_some_and(|h| alerting.band(&h.evidence, h.complexity.as_ref()) == Band::Regression),
                    }
                })
                .collect();
        }
    }
}
