//! Deciding, from version summaries alone, which workloads crossed the threshold at a version and
//! which regressions a version fixes. No database here: a summary pass (`intake`) reads what the
//! rules need from the store, asks them, and writes back what they decide, in its transaction.
//!
//! # The noise rule
//! A version's slope is the median over its runs, with the medians of their 95% intervals. It
//! counts as **over** the threshold `T` only when all of these hold:
//! - the slope is above `T`;
//! - the interval's lower bound is above `T - ci_margin` (0.2 by default), so the data rules out
//!   growth well below the threshold rather than merely putting the point estimate over it;
//! - R² is at least `min_r2` (0.9): a line that explains little of the variance is not a slope;
//! - the fit spans at least `min_sizes` sizes (4): three points fit almost any curve.
//!
//! It counts as **under** by the mirror rule: slope at most `T`, upper bound below
//! `T + ci_margin`, the same R² and number of sizes, so one disturbed fit cannot resolve a
//! regression either. Anything else is *unsure*: it neither opens nor resolves a regression, it
//! waits for more runs (the version's numbers are medians over its runs).
//! With `[alerts] rule = "class"` the version's complexity class decides instead (`classes`):
//! O(n²) and O(n³) are over, the simpler classes under, `unsure` neither; with `"either"` a
//! version is over when either rule says so, and under when neither does and one says under.
//!
//! A workload *crosses* at a version when that version is over and the version before it (the
//! highest measured version below it in the same lineage) was not, or there was none, or was over
//! at a lower level only (O(n²) before, O(n³) now).

use super::classes::{self, Standing};
use super::config::{AlertRule, Rules};
use crate::model::{SizeMedian, Slope};
use slopewatch_core::complexity::Complexity;
use slopewatch_core::version;
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
}

impl VersionFit {
    pub fn new(fit: Slope, sizes: Vec<SizeMedian>, complexity: Option<Complexity>) -> VersionFit {
        let Slope { slope, ci_low, ci_high, r2 } = fit;
        VersionFit { slope, ci_low, ci_high, r2, sizes, complexity }
    }

    /// The slope with its interval and R², without the sizes.
    pub fn slope_fit(&self) -> Slope {
        Slope { slope: self.slope, ci_low: self.ci_low, ci_high: self.ci_high, r2: self.r2 }
    }
}

/// What the rules make of one version summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Over,
    Under,
    Unsure,
}

impl Rules {
    /// The threshold for a workload: its own if configured, else the global one.
    pub fn threshold_for(&self, workload: &str) -> f64 {
        self.per_workload.get(workload).copied().unwrap_or(self.threshold)
    }

    pub fn verdict(&self, workload: &str, fit: &VersionFit) -> Verdict {
        self.standing(workload, fit).0
    }

    /// The verdict under the configured rule, with how far over it is: 0 unless over, 1 over the
    /// slope threshold or in O(n²), 2 in O(n³).
    fn standing(&self, workload: &str, fit: &VersionFit) -> (Verdict, u8) {
        let slope = self.slope_verdict(workload, fit);
        let class = classes::standing(fit.complexity.as_ref());
        let class_level = match class {
            Standing::Over(level) => level,
            _ => 0,
        };
        let (over, under) = match self.rule {
            AlertRule::Slope => (u8::from(slope == Verdict::Over), slope == Verdict::Under),
            AlertRule::Class => (class_level, class == Standing::Under),
            AlertRule::Either => {
                (class_level.max(u8::from(slope == Verdict::Over)), slope == Verdict::Under || class == Standing::Under)
            }
        };
        match (over, under) {
            (0, true) => (Verdict::Under, 0),
            (0, false) => (Verdict::Unsure, 0),
            (level, _) => (Verdict::Over, level),
        }
    }

    /// Whether a workload over at `now` was over at `before` already, at least as far: a step from
    /// O(n²) to O(n³) crosses again.
    fn was_over(&self, workload: &str, before: &VersionFit, now: &VersionFit) -> bool {
        let (verdict, level) = self.standing(workload, before);
        verdict == Verdict::Over && level >= self.standing(workload, now).1
    }

    /// The slope rule's verdict, with the noise rule.
    fn slope_verdict(&self, workload: &str, fit: &VersionFit) -> Verdict {
        let t = self.threshold_for(workload);
        let trusted = fit.sizes.len() >= self.min_sizes && fit.r2 >= self.min_r2;
        if trusted && fit.slope > t && fit.ci_low > t - self.ci_margin {
            Verdict::Over
        } else if trusted && fit.slope <= t && fit.ci_high < t + self.ci_margin {
            Verdict::Under
        } else {
            Verdict::Unsure
        }
    }
}

/// A workload of the run being stored, at the run's version.
#[derive(Debug, Clone)]
pub struct Current {
    pub workload_id: i64,
    pub workload: String,
    pub fit: VersionFit,
}

/// A workload's membership in a regression of the lineage that is still open, or that was opened
/// at the run's version (repeated runs of that version must not alert again).
#[derive(Debug, Clone)]
pub struct Membership {
    pub regression_id: i64,
    pub version: String,
    pub open: bool,
    pub workload_id: i64,
    pub fixed: bool,
}

/// Another version's summary of one workload in the lineage.
#[derive(Debug, Clone)]
pub struct History {
    pub workload_id: i64,
    pub version: String,
    pub fit: VersionFit,
}

/// A workload that crossed the threshold at the run's version.
#[derive(Debug, Clone)]
pub struct Crossing {
    pub workload_id: i64,
    pub fit: VersionFit,
    /// The version before, and the workload's summary there.
    pub previous: Option<(String, VersionFit)>,
    /// An earlier open regression of the lineage that the workload joins instead, because it has
    /// not been under its threshold since that regression's version (it was unsure there).
    pub into: Option<i64>,
}

/// A workload that the run's version brings back under its threshold.
#[derive(Debug, Clone)]
pub struct Fix {
    pub regression_id: i64,
    pub workload_id: i64,
    pub fit: VersionFit,
    /// The workload's summary at the regression's (bad) version, to measure the fix against.
    pub bad: Option<VersionFit>,
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
/// covers yet, or a workload under it while an older regression of it is open. Without either,
/// the store skips reading the lineage's history.
pub fn needs_history(rules: &Rules, version: &str, current: &[Current], members: &[Membership]) -> bool {
    current.iter().any(|c| match rules.verdict(&c.workload, &c.fit) {
        Verdict::Over => {
            !members.iter().any(|m| m.workload_id == c.workload_id && (m.version == version || (m.open && !m.fixed)))
        }
        Verdict::Under => members.iter().any(|m| {
            m.workload_id == c.workload_id
                && m.open
                && !m.fixed
                && version::compare(version, &m.version) == Ordering::Greater
        }),
        Verdict::Unsure => false,
    })
}

/// Decides what the run's version changes, given every other version of its workloads.
pub fn plan(rules: &Rules, version: &str, current: &[Current], members: &[Membership], history: &[History]) -> Plan {
    let mut plan =
        Plan { join: members.iter().find(|m| m.version == version).map(|m| m.regression_id), ..Plan::default() };
    let previous = |workload_id: i64| {
        history
            .iter()
            .filter(|h| h.workload_id == workload_id && version::compare(&h.version, version) == Ordering::Less)
            .max_by(|a, b| version::compare(&a.version, &b.version))
    };
    let mut fixed_now: HashSet<(i64, i64)> = HashSet::new();
    let mut crossing: Vec<(&Current, Option<&History>)> = Vec::new();
    for c in current {
        let verdict = rules.verdict(&c.workload, &c.fit);
        let open = members.iter().find(|m| m.workload_id == c.workload_id && m.open && !m.fixed);
        match (verdict, open) {
            (Verdict::Under, Some(m)) if version::compare(version, &m.version) == Ordering::Greater => {
                let bad = history
                    .iter()
                    .find(|h| h.workload_id == c.workload_id && h.version == m.version)
                    .map(|h| h.fit.clone());
                fixed_now.insert((m.regression_id, c.workload_id));
                plan.fixes.push(Fix {
                    regression_id: m.regression_id,
                    workload_id: c.workload_id,
                    fit: c.fit.clone(),
                    bad,
                });
            }
            (Verdict::Over, None) => {
                let seen_here = members.iter().any(|m| m.workload_id == c.workload_id && m.version == version);
                let prev = previous(c.workload_id);
                let was_over = prev.is_some_and(|p| rules.was_over(&c.workload, &p.fit, &c.fit));
                if !seen_here && !was_over {
                    crossing.push((c, prev));
                }
            }
            _ => {}
        }
    }
    let mut open_members: BTreeMap<i64, bool> = BTreeMap::new();
    for m in members.iter().filter(|m| m.open) {
        let done = m.fixed || fixed_now.contains(&(m.regression_id, m.workload_id));
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
    for (c, prev) in crossing {
        plan.crossings.push(Crossing {
            workload_id: c.workload_id,
            fit: c.fit.clone(),
            previous: prev.map(|p| (p.version.clone(), p.fit.clone())),
            into: earlier_regression(rules, version, c, &still_open, history),
        });
    }
    plan
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
        .filter(|h| h.workload_id == c.workload_id && version::compare(&h.version, version) == Ordering::Less)
        .collect();
    before.sort_by(|a, b| version::compare(&b.version, &a.version));
    let onset = before
        .iter()
        .take_while(|h| rules.verdict(&c.workload, &h.fit) != Verdict::Under)
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
        Current { workload_id: id, workload: format!("w{id}"), fit: f }
    }

    #[test]
    fn workloads_crossing_together_make_one_plan_and_a_version_already_over_does_not_cross() {
        let rules = Rules::default();
        let history = vec![
            History { workload_id: 1, version: "0.15.0".into(), fit: fit(1.0, 0.02, 0.999, 8) },
            History { workload_id: 2, version: "0.15.0".into(), fit: fit(2.0, 0.02, 0.999, 8) },
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
            History { workload_id: 1, version: "1.3.0".into(), fit: fit(1.0, 0.02, 0.999, 8) },
            History { workload_id: 1, version: "1.4.0".into(), fit: fit(1.9, 0.9, 0.95, 8) },
        ];
        let members =
            [Membership { regression_id: 4, version: "1.4.0".into(), open: true, workload_id: 2, fixed: false }];
        let p = plan(&rules, "1.5.0", &[current(1, fit(2.0, 0.02, 0.999, 8))], &members, &history);
        assert_eq!(p.crossings.len(), 1);
        assert_eq!(p.crossings[0].into, Some(4));
        let fresh = [History { workload_id: 1, version: "1.4.0".into(), fit: fit(1.0, 0.02, 0.999, 8) }];
        let p = plan(&rules, "1.5.0", &[current(1, fit(2.0, 0.02, 0.999, 8))], &members, &fresh);
        assert_eq!(p.crossings[0].into, None, "under at 1.4.0: a new regression at 1.5.0");
    }

    #[test]
    fn a_workload_crossing_where_its_regression_resolves_opens_one_of_its_own() {
        let rules = Rules::default();
        let members =
            [Membership { regression_id: 4, version: "1.3.0".into(), open: true, workload_id: 1, fixed: false }];
        // Workload 2 was unsure since before 1.3.0, so it would join #4, but #4 resolves here.
        let history = [History { workload_id: 2, version: "1.3.0".into(), fit: fit(1.9, 0.9, 0.95, 8) }];
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
            Membership { regression_id: 7, version: "0.16.0".into(), open: true, workload_id: 1, fixed: false },
            Membership { regression_id: 7, version: "0.16.0".into(), open: true, workload_id: 2, fixed: false },
        ];
        let p = plan(&rules, "0.17.0", &[current(1, fit(1.0, 0.02, 0.999, 8))], &members, &[]);
        assert_eq!(p.fixes.len(), 1);
        assert!(p.resolved.is_empty());
        let both = [current(1, fit(1.0, 0.02, 0.999, 8)), current(2, fit(1.0, 0.02, 0.999, 8))];
        assert_eq!(plan(&rules, "0.17.0", &both, &members, &[]).resolved, vec![7]);
        assert!(plan(&rules, "0.15.0", &both, &members, &[]).fixes.is_empty(), "an older version fixes nothing");
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
        };
        VersionFit { complexity: Some(complexity), ..fit(slope, 0.02, 0.999, 8) }
    }

    #[test]
    fn the_class_rule_opens_on_a_step_up_and_never_on_unsure() {
        use slopewatch_core::complexity::Class;
        let rules = Rules { rule: AlertRule::Class, ..Rules::default() };
        let linear =
            || History { workload_id: 1, version: "1.0.0".into(), fit: classed(1.0, Some(Class::Linear), 0.9) };
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
        let quadratic =
            History { workload_id: 1, version: "1.0.0".into(), fit: classed(2.0, Some(Class::Quadratic), 1.9) };
        let cubic = |low| current(1, classed(3.0, Some(Class::Cubic), low));
        assert_eq!(plan(&rules, "1.1.0", &[cubic(2.9)], &[], std::slice::from_ref(&quadratic)).crossings.len(), 1);
        assert!(plan(&rules, "1.1.0", &[cubic(1.9)], &[], &[quadratic]).is_empty(), "not shown to be above 2");
        let was_cubic = History { workload_id: 1, version: "1.0.0".into(), fit: classed(3.0, Some(Class::Cubic), 2.9) };
        assert!(plan(&rules, "1.1.0", &[cubic(2.9)], &[], &[was_cubic]).is_empty());
        // An unsure class does not resolve an open regression; a linear one does.
        let members =
            [Membership { regression_id: 3, version: "1.0.0".into(), open: true, workload_id: 1, fixed: false }];
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
