//! The webhook events a summary pass sends: built from what the rules decided and what the store
//! holds of a regression, as plain values. No database here.

use super::payload::{
    Event, EventLinks, EventWorkload, Field, FieldChange, FINDING_OPENED, FINDING_RESOLVED, OPENED, RESOLVED, UPDATED,
};
use crate::analysis::{class_step, ClassStep};
use crate::config::Rules;
use crate::model::{workload_label, Reason, ResolvedMember, SizeMedian, Track};
use crate::rules::evaluate::{time_ratio, VersionFit};
use crate::rules::replay::{Derived, Update};
use crate::{format, links};
use slopewatch_core::predict::step_sentence_in;
use slopewatch_core::wire::{Contract, Metric, SizeUnit};
use std::collections::HashMap;

/// A workload of the lineage as an event names it: its name, the metric of its series, and what
/// its sizes count.
#[derive(Debug, Clone, Copy)]
pub struct Named<'n> {
    pub name: &'n str,
    pub metric: Metric,
    pub unit: SizeUnit,
}

/// Where an event happened: the lineage and version whose summary the rules judged.
pub struct Scene<'a> {
    pub lineage: &'a str,
    pub version: &'a str,
    pub rules: &'a Rules,
    /// The server's public URL, to make links absolute.
    pub public_url: Option<&'a str>,
    /// The contracts of the lineage's workloads that have one, by workload id.
    pub contracts: &'a HashMap<i64, Contract>,
    /// The size of interest and unit of the lineage's workloads that have one, by workload id.
    pub interests: &'a HashMap<i64, (u64, SizeUnit)>,
}

impl Scene<'_> {
    fn series_url(&self, workload: &str, metric: Metric) -> String {
        links::absolute(self.public_url, &links::series(workload, self.lineage, metric))
    }

    /// The architecture of the lineage's series.
    fn arch(&self) -> String {
        slopewatch_core::arch::split_lineage(self.lineage).1.to_string()
    }

    fn links(&self, regression_id: i64) -> EventLinks {
        EventLinks { regression: links::absolute(self.public_url, &links::regression(regression_id)) }
    }

    /// What a workload is held to for `reason`: its slope threshold, or for a cost its factor.
    fn limit(&self, reason: Reason, workload: &str) -> f64 {
        match reason {
            Reason::Cost => self.rules.cost_factor_for(workload).unwrap_or(f64::INFINITY),
            Reason::Slope | Reason::Failure => self.rules.threshold_for(workload),
        }
    }
}

/// The event of a regression opened at the scene's version (`finding.opened` when it has no last
/// good version); `workload` gives each workload's name and metric by id.
pub fn opened<'n>(
    scene: &Scene<'_>,
    regression_id: i64,
    regression: &Derived,
    workload: impl Fn(i64) -> Named<'n>,
) -> Event {
    let event = if regression.previous_version.is_none() { FINDING_OPENED } else { OPENED };
    announce(scene, regression_id, regression, workload, event, Vec::new())
}

/// The event of an announced regression that a version measured out of order moved: the opened
/// event as the regression stands now, with what moved (`changes`). `opens` when those changes
/// gave a finding its first last good version ([`gives_a_good_end`]) and it was never announced
/// as a regression: it is then announced as `regression.opened`, with the changes.
pub fn updated<'n>(
    scene: &Scene<'_>,
    regression_id: i64,
    regression: &Derived,
    changes: Vec<FieldChange>,
    opens: bool,
    workload: impl Fn(i64) -> Named<'n>,
) -> Event {
    announce(scene, regression_id, regression, workload, if opens { OPENED } else { UPDATED }, changes)
}

/// Whether the changes give a finding a last good version: it becomes a regression.
pub fn gives_a_good_end(changes: &[FieldChange]) -> bool {
    changes.iter().any(|c| c.field == Field::PreviousVersion && c.from.is_none() && c.to.is_some())
}

/// What `regression.updated` says moved when a stored regression is brought in line with the
/// derived one it matched: its versions, and its workloads' names (with their metrics, unless
/// wall time) when some joined or left.
pub fn changes<'n>(u: &Update<'_>, workload: impl Fn(i64) -> Named<'n>) -> Vec<FieldChange> {
    let mut changes: Vec<FieldChange> =
        u.moved.iter().map(|m| FieldChange { field: m.field.into(), from: m.from.clone(), to: m.to.clone() }).collect();
    if !u.added.is_empty() || !u.removed.is_empty() {
        let before = names(u.kept().map(|m| m.track).chain(u.removed.iter().copied()), &workload);
        let after = names(u.derived.members.iter().map(|m| m.track), &workload);
        changes.push(FieldChange { field: Field::Workloads, from: Some(before), to: Some(after) });
    }
    changes
}

/// The tracks' workloads as labels, sorted, each once.
fn names<'n>(tracks: impl Iterator<Item = Track>, workload: &impl Fn(i64) -> Named<'n>) -> String {
    let mut names: Vec<String> = tracks
        .map(|t| {
            let w = workload(t.workload_id);
            workload_label(w.name, w.metric)
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    names.join(", ")
}

fn announce<'n>(
    scene: &Scene<'_>,
    regression_id: i64,
    regression: &Derived,
    workload: impl Fn(i64) -> Named<'n>,
    event: &'static str,
    changes: Vec<FieldChange>,
) -> Event {
    let last_good = regression.previous_version.clone();
    let workloads = regression
        .members
        .iter()
        .map(|m| {
            let id = m.track.workload_id;
            let Named { name, metric, unit } = workload(id);
            let fit = m.evidence.slope();
            let previous = m.previous.as_ref().and_then(|(_, p)| p.slope());
            let ratio = m.previous.as_ref().and_then(|(_, p)| time_ratio(m.evidence.sizes(), p.sizes()));
            let step = previous.zip(fit).and_then(|(p, f)| step_between(p, f, metric));
            EventWorkload {
                name: name.to_string(),
                metric,
                reason: m.track.reason.as_str(),
                threshold: scene.limit(m.track.reason, name),
                slope: fit.map(|f| f.slope),
                ci_low: fit.map(|f| f.ci_low),
                ci_high: fit.map(|f| f.ci_high),
                failure: m.evidence.failure().cloned(),
                previous_slope: previous.map(|p| p.slope),
                time_ratio: ratio.map(|r| r.1),
                ratio_size: ratio.map(|r| r.0 as i64),
                size_unit: unit,
                class_before: previous.and_then(|p| format::class_text(p.complexity.as_ref())),
                class_after: fit.and_then(|f| format::class_text(f.complexity.as_ref())),
                class_changed: step.is_some_and(|s| s.shown),
                class_step: step,
                contract: scene.contracts.get(&id).cloned(),
                contract_break: fit.filter(|_| m.track.reason == Reason::Slope).zip(scene.contracts.get(&id)).map(
                    |(f, c)| {
                        let exponent = f.complexity.as_ref().and_then(|c| c.exponent);
                        format::contract_break(c, exponent, last_good.as_deref())
                    },
                ),
                at_size_of_interest: scene.interests.get(&id).and_then(|&(at, unit)| {
                    let bad = SizeMedian::predict(m.evidence.sizes(), at)?;
                    let good = m.previous.as_ref().and_then(|(v, p)| Some((SizeMedian::predict(p.sizes(), at)?, v)));
                    Some(step_sentence_in(&bad, good.as_ref().map(|(p, v)| (p, v.as_str())), unit, metric))
                }),
                where_cost_went: None,
                series_url: scene.series_url(name, metric),
            }
        })
        .collect::<Vec<_>>();
    Event {
        event,
        regression_id,
        lineage: scene.lineage.to_string(),
        arch: scene.arch(),
        version: scene.version.to_string(),
        previous_version: last_good.clone(),
        regressed_version: scene.version.to_string(),
        last_good_version: last_good,
        magnitude: workloads.iter().filter_map(|w| w.time_ratio).reduce(f64::max),
        workloads,
        links: scene.links(regression_id),
        changes,
        attribution: None,
        artifacts: Vec::new(),
        causes: Default::default(),
    }
}

/// The event of a regression the scene's version resolved; `sizes_at_fix` gives, by workload
/// id, the size at which each fix's ratio was measured, and `fit` a workload's summary (by id) at
/// a version of the lineage, with its medians and complexity.
pub fn resolved<'c>(
    scene: &Scene<'_>,
    regression_id: i64,
    members: Vec<ResolvedMember>,
    sizes_at_fix: &HashMap<i64, i64>,
    fit: impl Fn(i64, &str) -> Option<&'c VersionFit>,
) -> Event {
    let regressed = members.first().map(|m| m.version.clone()).unwrap_or_default();
    let last_good = members.first().and_then(|m| m.previous_version.clone());
    let magnitude = members.first().and_then(|m| m.magnitude);
    let workloads = members
        .into_iter()
        .map(|m| {
            let (bad, fixed) = (fit(m.workload_id, &m.version), fit(m.workload_id, scene.version));
            let reason = Reason::parse(&m.reason).unwrap_or(Reason::Slope);
            let step = bad.zip(fixed).and_then(|(b, f)| step_between(b, f, m.metric));
            EventWorkload {
                threshold: scene.limit(reason, &m.name),
                metric: m.metric,
                reason: reason.as_str(),
                slope: m.fixed_slope,
                ci_low: m.fixed_ci_low,
                ci_high: m.fixed_ci_high,
                failure: None,
                previous_slope: m.slope,
                time_ratio: m.fixed_ratio,
                ratio_size: sizes_at_fix.get(&m.workload_id).copied(),
                size_unit: m.size_unit,
                class_before: format::class_text(bad.and_then(|f| f.complexity.as_ref())),
                class_after: format::class_text(fixed.and_then(|f| f.complexity.as_ref())),
                class_changed: step.is_some_and(|s| s.shown),
                class_step: step,
                contract_break: None,
                contract: None,
                at_size_of_interest: None,
                where_cost_went: None,
                series_url: scene.series_url(&m.name, m.metric),
                name: m.name,
            }
        })
        .collect();
    Event {
        event: if last_good.is_none() { FINDING_RESOLVED } else { RESOLVED },
        regression_id,
        lineage: scene.lineage.to_string(),
        arch: scene.arch(),
        version: scene.version.to_string(),
        previous_version: Some(regressed.clone()),
        regressed_version: regressed,
        last_good_version: last_good,
        magnitude,
        workloads,
        links: scene.links(regression_id),
        changes: Vec::new(),
        attribution: None,
        artifacts: Vec::new(),
        causes: Default::default(),
    }
}

/// The class step between two versions' fits of a workload's series of `metric`, as the version
/// page judges it (`analysis::class_step`).
fn step_between(before: &VersionFit, after: &VersionFit, metric: Metric) -> Option<ClassStep> {
    class_step(&before.sizes, before.complexity.as_ref(), &after.sizes, after.complexity.as_ref(), metric)
}
