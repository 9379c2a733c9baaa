//! Deciding, from version summaries alone, which workloads crossed the threshold at a version and
//! which regressions a version fixes. No database here: a summary pass (`intake`) reads what the
//! rules need from the store, asks them, and writes back what they decide, in its transaction.
//!
//! # Over, under or unsure
//! A version is judged by core's verdict (`slopewatch_core::verdict`) on its summary: its slope, the
//! median over its runs with the medians of their 95% intervals, by the noise rule (`[alerts]`'s
//! `min_sizes`, `min_r2` and `ci_margin`); its complexity class instead with `rule = "class"`, or
//! either with `"either"`. *Unsure* neither opens nor resolves a regression, so one disturbed fit
//! cannot do either: it waits for more runs.
//!
//! A workload *crosses* at a version when that version is over and the version before it (the
//! highest measured version below it in the same lineage) was not, or there was none, or was over
//! at a lower level only (O(n²) before, O(n³) now).
//!
//! # Failures
//! Whether a workload runs correctly is judged beside its slope, as a track of its own: at a
//! version it is **over** (failing) when every run of the version that measured it failed it,
//! **under** (passing) when none did, and *unsure* when some runs failed and some passed, so a
//! flaky host alone neither opens nor resolves anything. A version whose every run failed a
//! workload the version before passed opens a regression for that failure; one that passes it
//! again resolves it. A failed run's partial sizes never enter its version's slope, so a failure
//! never opens or resolves a slope regression.
//!
//! # Cost
//! On a counted measure a third track follows what a workload costs against the version before
//! (`rules::cost`); and a version that ran the previous version's very build opens nothing.

use crate::config::{AlertRule, Rules};
use crate::model::{Reason, Track};
use crate::model::{SizeMedian, Slope};
use slopewatch_core::complexity::{Class, Complexity};
use slopewatch_core::verdict::{Decision, Limits, NoiseRule, SlopeEvidence};
use slopewatch_core::version;
use slopewatch_core::wire::Failure;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

/// A workload's summary at one version, as the rules see it.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionFit {
    pub slope: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub r2: f64,
    pub sizes: Vec<SizeMedian>,
    /// The class of `sizes`' medians, if worked out.
    pub complexity: Option<Complexity>,
    /// The class the workload is held to instead of the threshold, when it has a contract.
    pub contract: Option<Class>,
    /// The workload's source at the version, and the one build its runs ran, where known.
    pub source: Option<String>,
    pub build: Option<String>,
    /// For a cost on times, the control lineage whose time `sizes` are taken over.
    pub control: Option<String>,
}

impl VersionFit {
    pub fn new(fit: Slope, sizes: Vec<SizeMedian>, complexity: Option<Complexity>) -> VersionFit {
        let Slope { slope, ci_low, ci_high, r2 } = fit;
        let (source, build, control) = (None, None, None);
        VersionFit { slope, ci_low, ci_high, r2, sizes, complexity, contract: None, source, build, control }
    }

    /// The same fit, measured on `source` and run as `build`.
    pub fn built(self, source: Option<String>, build: Option<String>) -> VersionFit {
        VersionFit { source, build, ..self }
    }

    /// The fit whose cost is judged: a count's own, or for a time its quotient by the control
    /// measured beside it (`sizes` of the workload's time over the control's), where it has one.
    pub fn cost(self, counted: bool, beside: Option<(&str, Vec<SizeMedian>)>) -> Option<VersionFit> {
        match (counted, beside) {
            (true, _) => Some(self),
            (false, Some((control, sizes))) => Some(VersionFit { sizes, control: Some(control.to_string()), ..self }),
            (false, None) => None,
        }
    }

    /// The same fit, held to `contract` when there is one.
    pub fn held_to(self, contract: Option<Class>) -> VersionFit {
        VersionFit { contract, ..self }
    }

    /// The slope with its interval and R², without the sizes.
    pub fn slope_fit(&self) -> Slope {
        Slope { slope: self.slope, ci_low: self.ci_low, ci_high: self.ci_high, r2: self.r2 }
    }
}

/// How the runs of a version fared with a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcomes {
    /// Runs that measured it in full.
    pub passed: usize,
    /// Runs that failed it.
    pub failed: usize,
    /// Hosts it failed on, and hosts that measured it at all.
    pub failed_hosts: usize,
    pub hosts: usize,
    /// The latest failure, when there was one.
    pub failure: Option<Failure>,
}

impl Outcomes {
    /// The outcomes of runs that passed on `passed_hosts` and failed on `failed_hosts`.
    pub fn new(
        passed: usize,
        passed_hosts: &[i64],
        failed: usize,
        failed_hosts: &[i64],
        failure: Option<Failure>,
    ) -> Outcomes {
        let mut hosts: Vec<i64> = passed_hosts.iter().chain(failed_hosts).copied().collect();
        hosts.sort_unstable();
        hosts.dedup();
        Outcomes { passed, failed, failed_hosts: failed_hosts.len(), hosts: hosts.len(), failure }
    }
}

/// What a version shows of a track: the slope summary, how its runs fared, or the summary of a
/// counted workload whose cost is judged against another version's.
#[derive(Debug, Clone, PartialEq)]
pub enum Evidence {
    Slope(VersionFit),
    Outcomes(Outcomes),
    Cost(VersionFit),
}

impl Evidence {
    /// The version summary: a slope's, or a cost's.
    pub fn slope(&self) -> Option<&VersionFit> {
        match self {
            Evidence::Slope(fit) | Evidence::Cost(fit) => Some(fit),
            Evidence::Outcomes(_) => None,
        }
    }

    pub fn outcomes(&self) -> Option<&Outcomes> {
        match self {
            Evidence::Outcomes(o) => Some(o),
            Evidence::Slope(_) | Evidence::Cost(_) => None,
        }
    }

    /// The failure shown, for a failing version.
    pub fn failure(&self) -> Option<&Failure> {
        self.outcomes().and_then(|o| o.failure.as_ref())
    }

    /// The sizes measured, for time ratios: a slope summary's.
    pub fn sizes(&self) -> &[SizeMedian] {
        self.slope().map_or(&[], |f| f.sizes.as_slice())
    }
}

/// What the rules make of one version summary: core's, shared with the agent's gate.
pub use slopewatch_core::verdict::Verdict;

impl Rules {
    /// The threshold for a workload: its own if configured, else the global one.
    pub fn threshold_for(&self, workload: &str) -> f64 {
        self.per_workload.get(workload).copied().unwrap_or(self.threshold)
    }

    /// The verdict on a track at a version: over means failing for a failure track. A cost is
    /// judged only against another version's (`cost_verdict`): alone it is unsure.
    pub fn judge(&self, workload: &str, evidence: &Evidence) -> Verdict {
        match evidence {
            Evidence::Slope(fit) => self.verdict(workload, fit),
            Evidence::Cost(_) => Verdict::Unsure,
            Evidence::Outcomes(o) if o.failed > 0 && o.passed == 0 => Verdict::Over,
            Evidence::Outcomes(o) if o.failed == 0 && o.passed > 0 => Verdict::Under,
            Evidence::Outcomes(_) => Verdict::Unsure,
        }
    }

    pub fn verdict(&self, workload: &str, fit: &VersionFit) -> Verdict {
        self.decide(workload, fit).verdict()
    }

    /// What the workload's version summary is held to: its contract, or the configured rule's
    /// limits (`slope`: the threshold; `class`: O(n log n), so a step into O(n²) or O(n³) is over;
    /// `either`: both), under the configured noise rule.
    pub fn limits(&self, workload: &str, contract: Option<Class>) -> Limits {
        let slope = matches!(self.rule, AlertRule::Slope | AlertRule::Either).then(|| self.threshold_for(workload));
        let class = matches!(self.rule, AlertRule::Class | AlertRule::Either).then_some(Class::NLogN);
        Limits { noise: self.noise(), max_slope: slope, max_class: class, contract }
    }

    /// The decision on a version summary: core's verdict (the one the agent's gate reaches), with
    /// how far over it is, so that a step from O(n²) to O(n³) crosses again.
    pub fn decide(&self, workload: &str, fit: &VersionFit) -> Decision {
        let slope = SlopeEvidence {
            slope: fit.slope,
            ci_low: fit.ci_low,
            ci_high: fit.ci_high,
            r2: fit.r2,
            sizes: fit.sizes.len(),
        };
        self.limits(workload, fit.contract).judge(Some(&slope), fit.complexity.as_ref())
    }

    /// Whether a workload over at `now` was over at `before` already, at least as far: a step from
    /// O(n²) to O(n³) crosses again.
    fn was_over(&self, workload: &str, before: &VersionFit, now: &VersionFit) -> bool {
        let before = self.decide(workload, before);
        before.verdict() == Verdict::Over && before.degrees() >= self.decide(workload, now).degrees()
    }

    /// Whether a track over at `now` was over at `before` already, at least as far (a class step
    /// from O(n²) to O(n³) crosses again; a failing version after a failing one does not).
    fn stays_over(&self, workload: &str, before: &Evidence, now: &Evidence) -> bool {
        match (before, now) {
            (Evidence::Slope(before), Evidence::Slope(now)) => self.was_over(workload, before, now),
            _ => self.judge(workload, before) == Verdict::Over,
        }
    }

    /// The noise rule as configured.
    pub fn noise(&self) -> NoiseRule {
        NoiseRule { min_sizes: self.min_sizes, min_r2: self.min_r2, ci_margin: self.ci_margin }
    }
}

/// A track of the run being stored, at the run's version.
#[derive(Debug, Clone)]
pub struct Current {
    pub track: Track,
    pub workload: String,
    pub evidence: Evidence,
}

/// A workload's membership in a regression of the lineage that is still open, or that was opened
/// at the run's version (repeated runs of that version must not alert again).
#[derive(Debug, Clone)]
pub struct Membership {
    pub regression_id: i64,
    pub version: String,
    pub open: bool,
    pub track: Track,
    pub fixed: bool,
}

/// Another version's summary of one track in the lineage.
#[derive(Debug, Clone)]
pub struct History {
    pub track: Track,
    pub version: String,
    pub evidence: Evidence,
}

/// A workload that crossed the threshold at the run's version.
#[derive(Debug, Clone)]
pub struct Crossing {
    pub track: Track,
    pub evidence: Evidence,
    /// The version before, and the track's summary there.
    pub previous: Option<(String, Evidence)>,
    /// An earlier open regression of the lineage that the workload joins instead, because it has
    /// not been under its threshold since that regression's version (it was unsure there).
    pub into: Option<i64>,
}

/// A workload that the run's version brings back under its threshold.
#[derive(Debug, Clone)]
pub struct Fix {
    pub regression_id: i64,
    pub track: Track,
    pub evidence: Evidence,
    /// The track's summary at the regression's (bad) version, to measure the fix against.
    pub bad: Option<Evidence>,
}

/// What storing the run changes.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub crossings: Vec<Crossing>,
    /// The regression already opened at this version that the crossings join, if any.
    pub join: Option<i64>,
    pub fixes: Vec<Fix>,
    /// Regressions whose every workload is now fixed.
    pub resolved: Vec<i64>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.crossings.is_empty() && self.fixes.is_empty()
    }

    /// Whether the plan opens a regression at its version: some crossing joins no regression.
    pub fn opens(&self) -> bool {
        self.join.is_none() && self.crossings.iter().any(|c| c.into.is_none())
    }

    /// The last good version of the regression the plan opens: the highest version measured
    /// before it.
    pub fn last_good_version(&self) -> Option<String> {
        self.crossings
            .iter()
            .filter(|c| c.into.is_none())
            .filter_map(|c| c.previous.as_ref().map(|(v, _)| v.clone()))
            .max_by(|a, b| version::compare(a, b))
    }
}

/// Whether history could change the plan: a workload over the threshold that no regression
/// covers yet, or a workload under it while an older regression of it is open; a cost over its
/// factor against `before` (the summaries of the version measured before, where the store read
/// them) that no regression covers yet, or any cost while an older regression of it is open.
/// Without any of these, the store skips reading the lineage's history.
pub fn needs_history(
    rules: &Rules,
    version: &str,
    current: &[Current],
    members: &[Membership],
    before: &[History],
) -> bool {
    current.iter().any(|c| match &c.evidence {
        Evidence::Cost(now) => {
            let covered = members.iter().any(|m| m.track == c.track && m.version == version);
            let rose = || cost_at(rules, version, c, now, None, before) == Verdict::Over;
            !covered && (open_before(members, c.track, version) || rose())
        }
        _ => match rules.judge(&c.workload, &c.evidence) {
            Verdict::Over => {
                !members.iter().any(|m| m.track == c.track && (m.version == version || (m.open && !m.fixed)))
            }
            Verdict::Under => open_before(members, c.track, version),
            Verdict::Unsure => false,
        },
    })
}

/// Whether a regression of `track` opened before `version` is open, and the track not fixed in it.
fn open_before(members: &[Membership], track: Track, version: &str) -> bool {
    members
        .iter()
        .any(|m| m.track == track && m.open && !m.fixed && version::compare(version, &m.version) == Ordering::Greater)
}

/// The summary of `track` at the highest version of `history` below `version`.
fn latest_before<'h>(history: &'h [History], track: Track, version: &str) -> Option<&'h History> {
    history
        .iter()
        .filter(|h| h.track == track && version::compare(&h.version, version) == Ordering::Less)
        .max_by(|a, b| version::compare(&a.version, &b.version))
}

/// Decides what the run's version changes, given every other version of its workloads.
pub fn plan(rules: &Rules, version: &str, current: &[Current], members: &[Membership], history: &[History]) -> Plan {
    let mut plan =
        Plan { join: members.iter().find(|m| m.version == version).map(|m| m.regression_id), ..Plan::default() };
    let mut fixed_now: HashSet<(i64, Track)> = HashSet::new();
    let mut crossing: Vec<(&Current, Option<&History>)> = Vec::new();
    for c in current {
        let open = members.iter().find(|m| m.track == c.track && m.open && !m.fixed);
        let verdict = match &c.evidence {
            Evidence::Cost(now) => cost_at(rules, version, c, now, open, history),
            _ => rules.judge(&c.workload, &c.evidence),
        };
        match (verdict, open) {
            (Verdict::Under, Some(m)) if version::compare(version, &m.version) == Ordering::Greater => {
                let bad =
                    history.iter().find(|h| h.track == c.track && h.version == m.version).map(|h| h.evidence.clone());
                fixed_now.insert((m.regression_id, c.track));
                plan.fixes.push(Fix {
                    regression_id: m.regression_id,
                    track: c.track,
                    evidence: c.evidence.clone(),
                    bad,
                });
            }
            (Verdict::Over, None) => {
                let seen_here = members.iter().any(|m| m.track == c.track && m.version == version);
                let prev = latest_before(history, c.track, version);
                let was_over = prev.is_some_and(|p| rules.stays_over(&c.workload, &p.evidence, &c.evidence));
                let unchanged = prev.is_some_and(|p| rules.unchanged_build(&p.evidence, &c.evidence));
                if !seen_here && !was_over && !unchanged {
                    crossing.push((c, prev));
                }
            }
            _ => {}
        }
    }
    let mut open_members: BTreeMap<i64, bool> = BTreeMap::new();
    for m in members.iter().filter(|m| m.open) {
        let done = m.fixed || fixed_now.contains(&(m.regression_id, m.track));
        *open_members.entry(m.regression_id).or_insert(true) &= done;
    }
    plan.resolved = open_members
        .into_iter()
        .filter(|&(id, all_fixed)| all_fixed && plan.fixes.iter().any(|f| f.regression_id == id))
        .map(|(id, _)| id)
        .collect();
    // A workload crossing where its earlier regression is resolved starts a regression of its
    // own rather than joining one that is over.
    let still_open: Vec<&Membership> = members.iter().filter(|m| !plan.resolved.contains(&m.regression_id)).collect();
    // A count that rose because its growth did is the slope's crossing, told once: the cost rule
    // is for what costs more at the same growth.
    let grew: HashSet<i64> =
        crossing.iter().filter(|(c, _)| c.track.reason == Reason::Slope).map(|(c, _)| c.track.workload_id).collect();
    crossing.retain(|(c, _)| c.track.reason != Reason::Cost || !grew.contains(&c.track.workload_id));
    for (c, prev) in crossing {
        plan.crossings.push(Crossing {
            track: c.track,
            evidence: c.evidence.clone(),
            previous: prev.map(|p| (p.version.clone(), p.evidence.clone())),
            // A cost is judged against the version before, never left unsure: it joins no older
            // regression.
            into: match c.evidence {
                Evidence::Cost(_) => None,
                _ => earlier_regression(rules, version, c, &still_open, history),
            },
        });
    }
    plan
}

/// A cost track's verdict at `version`: with a regression of it `open` from an earlier version,
/// under once it is back within the factor of the last good version's cost; with none, over when
/// it rose past the factor from the version before (a build unchanged since does not rise).
/// Otherwise unsure: neither opens nor fixes anything.
fn cost_at(
    rules: &Rules,
    version: &str,
    c: &Current,
    now: &VersionFit,
    open: Option<&Membership>,
    history: &[History],
) -> Verdict {
    let against =
        |h: Option<&History>| h.and_then(|h| h.evidence.slope()).map(|h| rules.cost_verdict(&c.workload, h, now));
    match open {
        Some(m) if version::compare(version, &m.version) == Ordering::Greater => {
            match against(latest_before(history, c.track, &m.version)) {
                Some(Verdict::Under) => Verdict::Under,
                _ => Verdict::Unsure,
            }
        }
        Some(_) => Verdict::Unsure,
        None => match latest_before(history, c.track, version)
            .filter(|p| !rules.unchanged_build(&p.evidence, &c.evidence))
        {
            p @ Some(_) if against(p) == Some(Verdict::Over) => Verdict::Over,
            _ => Verdict::Unsure,
        },
    }
}

/// The latest open regression of the lineage, opened before `version`, since which the workload
/// has never been under its threshold: a workload that was unsure when its siblings crossed and
/// is over now regressed with them, not on its own.
fn earlier_regression(
    rules: &Rules,
    version: &str,
    c: &Current,
    members: &[&Membership],
    history: &[History],
) -> Option<i64> {
    let mut before: Vec<&History> = history
        .iter()
        .filter(|h| h.track == c.track && version::compare(&h.version, version) == Ordering::Less)
        .collect();
    before.sort_by(|a, b| version::compare(&b.version, &a.version));
    let onset = before
        .iter()
        .take_while(|h| rules.judge(&c.workload, &h.evidence) != Verdict::Under)
        .last()
        .map_or(version, |h| h.version.as_str());
    members
        .iter()
        .filter(|m| {
            m.open
                && version::compare(&m.version, onset) != Ordering::Less
                && version::compare(&m.version, version) == Ordering::Less
        })
        .max_by(|a, b| version::compare(&a.version, &b.version))
        .map(|m| m.regression_id)
}

/// Time at `after` over time at `before`, at the largest size both measured.
pub fn time_ratio(after: &[SizeMedian], before: &[SizeMedian]) -> Option<(u64, f64)> {
    after
        .iter()
        .rev()
        .find_map(|a| before.iter().find(|b| b.size == a.size).map(|b| (a.size, a.median_ns / b.median_ns)))
        .filter(|(_, r)| r.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(slope: f64, half_width: f64, r2: f64, sizes: usize) -> VersionFit {
        VersionFit {
            slope,
            ci_low: slope - half_width,
            ci_high: slope + half_width,
            r2,
            sizes: (0..sizes)
                .map(|i| SizeMedian { size: 1024 << i, median_ns: (1024u64 << i) as f64, runs: 1 })
                .collect(),
            complexity: None,
            contract: None,
            source: None,
            build: None,
            control: None,
        }
    }

    #[test]
    fn only_confident_well_measured_slopes_are_over() {
        let rules = Rules::default();
        assert_eq!(rules.verdict("w", &fit(2.0, 0.05, 0.999, 8)), Verdict::Over);
        assert_eq!(rules.verdict("w", &fit(1.6, 0.6, 0.95, 8)), Verdict::Unsure, "wide interval");
        assert_eq!(rules.verdict("w", &fit(2.0, 0.05, 0.6, 8)), Verdict::Unsure, "poor R²");
        assert_eq!(rules.verdict("w", &fit(2.0, 0.05, 0.999, 3)), Verdict::Unsure, "three sizes");
        assert_eq!(rules.verdict("w", &fit(1.0, 0.05, 0.999, 8)), Verdict::Under);
        let strict = Rules { per_workload: [("w".to_string(), 1.3)].into(), ..Rules::default() };
        assert_eq!(strict.verdict("w", &fit(1.4, 0.02, 0.999, 8)), Verdict::Over);
        assert_eq!(strict.verdict("v", &fit(1.4, 0.02, 0.999, 8)), Verdict::Under);
    }

    fn current(id: i64, f: VersionFit) -> Current {
        Current { track: Track::slope(id), workload: format!("w{id}"), evidence: Evidence::Slope(f) }
    }

    #[test]
    fn workloads_crossing_together_make_one_plan_and_a_version_already_over_does_not_cross() {
        let rules = Rules::default();
        let history = vec![
            History {
                track: Track::slope(1),
                version: "0.15.0".into(),
                evidence: Evidence::Slope(fit(1.0, 0.02, 0.999, 8)),
            },
            History {
                track: Track::slope(2),
                version: "0.15.0".into(),
                evidence: Evidence::Slope(fit(2.0, 0.02, 0.999, 8)),
            },
        ];
        let now = [current(1, fit(2.0, 0.02, 0.999, 8)), current(2, fit(2.0, 0.02, 0.999, 8))];
        let p = plan(&rules, "0.16.0", &now, &[], &history);
        assert_eq!(p.crossings.len(), 1, "workload 2 was already over at 0.15.0");
        assert_eq!(p.crossings[0].previous.as_ref().unwrap().0, "0.15.0");
        assert!(p.join.is_none());
    }

    #[test]
    fn a_workload_unsure_when_its_siblings_crossed_joins_their_regression_later() {
        let rules = Rules::default();
        let history = vec![
            History {
                track: Track::slope(1),
                version: "1.3.0".into(),
                evidence: Evidence::Slope(fit(1.0, 0.02, 0.999, 8)),
            },
            History {
                track: Track::slope(1),
                version: "1.4.0".into(),
                evidence: Evidence::Slope(fit(1.9, 0.9, 0.95, 8)),
            },
        ];
        let members = [Membership {
            regression_id: 4,
            version: "1.4.0".into(),
            open: true,
            track: Track::slope(2),
            fixed: false,
        }];
        let p = plan(&rules, "1.5.0", &[current(1, fit(2.0, 0.02, 0.999, 8))], &members, &history);
        assert_eq!(p.crossings.len(), 1);
        assert_eq!(p.crossings[0].into, Some(4));
        let fresh = [History {
            track: Track::slope(1),
            version: "1.4.0".into(),
            evidence: Evidence::Slope(fit(1.0, 0.02, 0.999, 8)),
        }];
        let p = plan(&rules, "1.5.0", &[current(1, fit(2.0, 0.02, 0.999, 8))], &members, &fresh);
        assert_eq!(p.crossings[0].into, None, "under at 1.4.0: a new regression at 1.5.0");
    }

    #[test]
    fn a_workload_crossing_where_its_regression_resolves_opens_one_of_its_own() {
        let rules = Rules::default();
        let members = [Membership {
            regression_id: 4,
            version: "1.3.0".into(),
            open: true,
            track: Track::slope(1),
            fixed: false,
        }];
        // Workload 2 was unsure since before 1.3.0, so it would join #4, but #4 resolves here.
        let history = [History {
            track: Track::slope(2),
            version: "1.3.0".into(),
            evidence: Evidence::Slope(fit(1.9, 0.9, 0.95, 8)),
        }];
        let now = [current(1, fit(1.0, 0.02, 0.999, 8)), current(2, fit(2.0, 0.02, 0.999, 8))];
        let p = plan(&rules, "1.4.0", &now, &members, &history);
        assert_eq!(p.resolved, vec![4]);
        assert_eq!(p.crossings.len(), 1);
        assert_eq!(p.crossings[0].into, None, "it opens a regression at 1.4.0");
        assert!(p.opens());
    }

    #[test]
    fn a_fix_resolves_only_when_every_workload_is_back_under() {
        let rules = Rules::default();
        let members = [
            Membership { regression_id: 7, version: "0.16.0".into(), open: true, track: Track::slope(1), fixed: false },
            Membership { regression_id: 7, version: "0.16.0".into(), open: true, track: Track::slope(2), fixed: false },
        ];
        let p = plan(&rules, "0.17.0", &[current(1, fit(1.0, 0.02, 0.999, 8))], &members, &[]);
        assert_eq!(p.fixes.len(), 1);
        assert!(p.resolved.is_empty());
        let both = [current(1, fit(1.0, 0.02, 0.999, 8)), current(2, fit(1.0, 0.02, 0.999, 8))];
        assert_eq!(plan(&rules, "0.17.0", &both, &members, &[]).resolved, vec![7]);
        assert!(plan(&rules, "0.15.0", &both, &members, &[]).fixes.is_empty(), "an older version fixes nothing");
    }

    fn outcomes(passed: usize, failed: usize) -> Evidence {
        Evidence::Outcomes(Outcomes { passed, failed, failed_hosts: failed.min(1), hosts: 1, failure: None })
    }

    fn failing(id: i64, passed: usize, failed: usize) -> Current {
        Current { track: Track::failure(id), workload: format!("w{id}"), evidence: outcomes(passed, failed) }
    }

    #[test]
    fn a_version_fails_a_workload_only_when_every_run_failed_it() {
        let rules = Rules::default();
        assert_eq!(rules.judge("w", &outcomes(0, 2)), Verdict::Over);
        assert_eq!(rules.judge("w", &outcomes(3, 0)), Verdict::Under);
        assert_eq!(rules.judge("w", &outcomes(2, 1)), Verdict::Unsure, "a flaky host alone decides nothing");
    }

    #[test]
    fn a_failure_after_a_pass_opens_and_a_later_pass_resolves_it_while_a_slope_regression_stays_apart() {
        let rules = Rules::default();
        let history = [History { track: Track::failure(1), version: "0.15.0".into(), evidence: outcomes(1, 0) }];
        let p = plan(&rules, "0.16.0", &[failing(1, 0, 1), current(1, fit(1.0, 0.02, 0.999, 8))], &[], &history);
        assert_eq!(p.crossings.len(), 1);
        assert_eq!(p.crossings[0].track, Track::failure(1));
        assert!(p.opens());
        let members = [Membership {
            regression_id: 3,
            version: "0.16.0".into(),
            open: true,
            track: Track::failure(1),
            fixed: false,
        }];
        let mixed = plan(&rules, "0.17.0", &[failing(1, 1, 1)], &members, &history);
        assert!(mixed.is_empty(), "failing on one host of two neither fixes nor opens");
        let fixed = plan(&rules, "0.17.0", &[failing(1, 2, 0)], &members, &history);
        assert_eq!(fixed.resolved, vec![3]);
        let slope_only = plan(&rules, "0.17.0", &[current(1, fit(1.0, 0.02, 0.999, 8))], &members, &history);
        assert!(slope_only.is_empty(), "a good slope does not fix a failure");
    }

    /// `fit` with a named class (unsure for `None`) whose exponent interval starts at `low`.
    fn classed(slope: f64, class: Option<slopewatch_core::complexity::Class>, low: f64) -> VersionFit {
        use slopewatch_core::complexity::Class;
        let complexity = Complexity {
            class,
            best: class.unwrap_or(Class::Linear),
            weight: 0.9,
            runner_up: Class::NLogN,
            runner_up_weight: 0.1,
            exponent: Some(low + 0.05),
            exponent_ci_low: Some(low),
            exponent_ci_high: Some(low + 0.1),
            step: None,
        };
        VersionFit { complexity: Some(complexity), ..fit(slope, 0.02, 0.999, 8) }
    }

    #[test]
    fn the_class_rule_opens_on_a_step_up_and_never_on_unsure() {
        use slopewatch_core::complexity::Class;
        let rules = Rules { rule: AlertRule::Class, ..Rules::default() };
        let linear = || History {
            track: Track::slope(1),
            version: "1.0.0".into(),
            evidence: Evidence::Slope(classed(1.0, Some(Class::Linear), 0.9)),
        };
        // A slope under the threshold does not hide a quadratic class.
        let p = plan(&rules, "1.1.0", &[current(1, classed(1.2, Some(Class::Quadratic), 1.8))], &[], &[linear()]);
        assert_eq!(p.crossings.len(), 1);
        assert!(p.opens());
        // Unsure, or a quadratic class whose exponent does not rule out linear growth, opens nothing.
        for unsure in [classed(2.0, None, 1.8), classed(2.0, Some(Class::Quadratic), 0.7)] {
            assert!(plan(&rules, "1.1.0", &[current(1, unsure)], &[], &[linear()]).is_empty());
        }
        // n log n is under: no step.
        assert!(
            plan(&rules, "1.1.0", &[current(1, classed(1.1, Some(Class::NLogN), 1.0))], &[], &[linear()]).is_empty()
        );
        // O(n²) to O(n³) steps up again, O(n³) to O(n³) does not.
        let quadratic = History {
            track: Track::slope(1),
            version: "1.0.0".into(),
            evidence: Evidence::Slope(classed(2.0, Some(Class::Quadratic), 1.9)),
        };
        let cubic = |low| current(1, classed(3.0, Some(Class::Cubic), low));
        assert_eq!(plan(&rules, "1.1.0", &[cubic(2.9)], &[], std::slice::from_ref(&quadratic)).crossings.len(), 1);
        assert!(plan(&rules, "1.1.0", &[cubic(1.9)], &[], &[quadratic]).is_empty(), "not shown to be above 2");
        let was_cubic = History {
            track: Track::slope(1),
            version: "1.0.0".into(),
            evidence: Evidence::Slope(classed(3.0, Some(Class::Cubic), 2.9)),
        };
        assert!(plan(&rules, "1.1.0", &[cubic(2.9)], &[], &[was_cubic]).is_empty());
        // An unsure class does not resolve an open regression; a linear one does.
        let members = [Membership {
            regression_id: 3,
            version: "1.0.0".into(),
            open: true,
            track: Track::slope(1),
            fixed: false,
        }];
        assert!(plan(&rules, "1.1.0", &[current(1, classed(1.0, None, 0.9))], &members, &[]).fixes.is_empty());
        let p = plan(&rules, "1.1.0", &[current(1, classed(1.0, Some(Class::Linear), 0.9))], &members, &[]);
        assert_eq!(p.resolved, vec![3]);
    }

    #[test]
    fn either_rule_is_over_when_one_is_and_under_when_none_is_over_and_one_is_under() {
        use slopewatch_core::complexity::Class;
        let either = Rules { rule: AlertRule::Either, ..Rules::default() };
        let slope = Rules::default();
        let hidden = classed(1.2, Some(Class::Quadratic), 1.8);
        assert_eq!((either.verdict("w", &hidden), slope.verdict("w", &hidden)), (Verdict::Over, Verdict::Under));
        let steep_but_linear_class = classed(1.9, Some(Class::Linear), 0.9);
        assert_eq!(either.verdict("w", &steep_but_linear_class), Verdict::Over, "the slope is over");
        assert_eq!(either.verdict("w", &classed(1.0, None, 0.9)), Verdict::Under, "the slope says under");
        let wide = VersionFit { ci_high: 1.9, ..classed(1.3, Some(Class::Linear), 0.9) };
        assert_eq!((either.verdict("w", &wide), slope.verdict("w", &wide)), (Verdict::Under, Verdict::Unsure));
        assert_eq!(either.verdict("w", &VersionFit { ci_high: 1.9, ..classed(1.3, None, 0.9) }), Verdict::Unsure);
    }

    #[test]
    fn the_time_ratio_is_taken_at_the_largest_common_size() {
        let s = |size, ns| SizeMedian { size, median_ns: ns, runs: 1 };
        let after = [s(1, 1.0), s(2, 8.0), s(4, 64.0)];
        let before = [s(1, 1.0), s(2, 2.0)];
        assert_eq!(time_ratio(&after, &before), Some((2, 4.0)));
        assert_eq!(time_ratio(&after, &[]), None);
    }
}
