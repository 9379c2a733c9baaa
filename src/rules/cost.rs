//! The cost rule, and the rule that an unchanged build cannot regress.
//!
//! Growth is what the other rules judge, because a time moves with the host. A count does not: on
//! a counted measure (instructions) a workload whose count rises more than the cost factor (1.5×
//! by default, per workload in `[alerts.cost_factors]`) at the largest size two consecutive
//! versions share, built from the same source, regressed in what it costs even where its class
//! holds: a `memcpy` turned into a byte loop leaves every workload linear and makes each several
//! times dearer. It is back when its count is within the factor of its last good version's again.
//! A count that rose because its growth did is the slope's crossing alone, told once.
//! On wall and CPU time, which move with the host, the rule judges a workload's time over the
//! control measured beside it in the same invocation on the same host (`--control`), and only with
//! `[alerts] cost_on_times = true`: the control's own ratio between the two versions' runs divides
//! the host out. Without a control beside, or with that off, times are judged by growth alone.
//!
//! A workload whose version ran the very build its previous version ran (the same build hash: the
//! binary's code and the shared libraries it loaded) did not change, whatever its numbers did:
//! neither its slope nor its cost opens anything there (`[alerts] skip_unchanged_builds`).

use super::evaluate::{time_ratio, Evidence, Verdict, VersionFit};
use crate::config::Rules;

impl Rules {
    /// The cost factor of a workload: its own if configured, else the global one; `None` when
    /// the cost rule is off.
    pub fn cost_factor_for(&self, workload: &str) -> Option<f64> {
        let cost = self.cost.as_ref()?;
        Some(cost.per_workload.get(workload).copied().unwrap_or(cost.factor))
    }

    /// The cost of `now` against `reference`'s: over when its count at the largest size both
    /// measured is more than the workload's factor times higher, under when it is not, unsure
    /// where they cannot be compared (the rule is off, no size is shared, or the sources differ).
    pub fn cost_verdict(&self, workload: &str, reference: &VersionFit, now: &VersionFit) -> Verdict {
        let Some(factor) = self.cost_factor_for(workload) else { return Verdict::Unsure };
        if matches!((&reference.source, &now.source), (Some(a), Some(b)) if a != b) {
            return Verdict::Unsure;
        }
        // A time is judged only over its control, when that is asked for, and against the same one.
        if (now.control.is_some() && !self.cost_on_times) || reference.control != now.control {
            return Verdict::Unsure;
        }
        match time_ratio(&now.sizes, &reference.sizes) {
            Some((_, ratio)) if ratio > factor => Verdict::Over,
            Some(_) => Verdict::Under,
            None => Verdict::Unsure,
        }
    }

    /// Whether `now` ran the very build `before` ran, and the rule that such a version opens
    /// nothing is on.
    pub fn unchanged_build(&self, before: &Evidence, now: &Evidence) -> bool {
        let build = |e: &Evidence| e.slope().and_then(|f| f.build.clone());
        self.skip_unchanged_builds && build(now).is_some() && build(before) == build(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CostRule;
    use crate::model::{SizeMedian, Track};
    use crate::rules::evaluate::{plan, Current, History, Membership};

    /// A linear count, `per_byte` instructions a byte, at sizes doubling from 1 KiB, built from
    /// `source` as `build`.
    fn counted(per_byte: f64, source: &str, build: &str) -> VersionFit {
        let sizes = (0..6)
            .map(|i| SizeMedian { size: 1024 << i, median_ns: per_byte * (1024u64 << i) as f64, runs: 1 })
            .collect();
        VersionFit {
            slope: 1.0,
            ci_low: 0.98,
            ci_high: 1.02,
            r2: 0.999,
            sizes,
            complexity: None,
            contract: None,
            source: Some(source.into()),
            build: Some(build.into()),
            control: None,
        }
    }

    fn history(version: &str, fit: VersionFit) -> Vec<History> {
        vec![
            History { track: Track::cost(1), version: version.into(), evidence: Evidence::Cost(fit.clone()) },
            History { track: Track::slope(1), version: version.into(), evidence: Evidence::Slope(fit) },
        ]
    }

    fn now(fit: VersionFit) -> Vec<Current> {
        vec![
            Current { track: Track::cost(1), workload: "memcpy".into(), evidence: Evidence::Cost(fit.clone()) },
            Current { track: Track::slope(1), workload: "memcpy".into(), evidence: Evidence::Slope(fit) },
        ]
    }

    #[test]
    fn a_count_that_rises_past_the_factor_opens_a_cost_regression_and_the_slope_rule_stays_silent() {
        let rules = Rules::default();
        let p = plan(&rules, "2.0.0", &now(counted(4.2, "s", "b2")), &[], &history("1.0.0", counted(1.0, "s", "b1")));
        assert_eq!(p.crossings.len(), 1, "{p:?}");
        assert_eq!(p.crossings[0].track, Track::cost(1));
        assert_eq!(p.crossings[0].previous.as_ref().unwrap().0, "1.0.0");
        assert!(p.opens());
        assert_eq!(p.last_good_version().as_deref(), Some("1.0.0"));
        // Within the factor, on another source, or with the rule off: nothing.
        let within = counted(1.4, "s", "b2");
        assert!(plan(&rules, "2.0.0", &now(within), &[], &history("1.0.0", counted(1.0, "s", "b1"))).is_empty());
        let other_source = counted(4.2, "t", "b2");
        assert!(plan(&rules, "2.0.0", &now(other_source), &[], &history("1.0.0", counted(1.0, "s", "b1"))).is_empty());
        let off = Rules { cost: None, ..Rules::default() };
        assert!(plan(&off, "2.0.0", &now(counted(4.2, "s", "b2")), &[], &history("1.0.0", counted(1.0, "s", "b1")))
            .is_empty());
        // A workload's own factor holds over the global one.
        let lenient = Rules {
            cost: Some(CostRule { factor: 1.5, per_workload: [("memcpy".to_string(), 5.0)].into() }),
            ..Rules::default()
        };
        assert!(plan(
            &lenient,
            "2.0.0",
            &now(counted(4.2, "s", "b2")),
            &[],
            &history("1.0.0", counted(1.0, "s", "b1"))
        )
        .is_empty());
    }

    #[test]
    fn an_unchanged_build_opens_nothing_unless_the_rule_is_off() {
        // A slope over the threshold at a version that ran the build before it: the host's doing.
        let steep = VersionFit { slope: 2.0, ci_low: 1.98, ci_high: 2.02, ..counted(4.2, "s", "b1") };
        let before = history("1.0.0", counted(1.0, "s", "b1"));
        let rules = Rules::default();
        assert!(plan(&rules, "1.0.1", &now(steep.clone()), &[], &before).is_empty());
        let judged = Rules { skip_unchanged_builds: false, ..Rules::default() };
        let p = plan(&judged, "1.0.1", &now(steep.clone()), &[], &before);
        let tracks: Vec<Track> = p.crossings.iter().map(|c| c.track).collect();
        assert_eq!(tracks, [Track::slope(1)], "the count rose with the growth: the slope's crossing alone");
        // A build unknown at either version is judged.
        let unknown = VersionFit { build: None, ..steep };
        assert_eq!(plan(&rules, "1.0.1", &now(unknown), &[], &before).crossings.len(), 1);
    }

    #[test]
    fn a_cost_regression_resolves_once_the_count_is_back_within_the_factor_of_the_last_good_one() {
        let rules = Rules::default();
        let mut history = history("1.0.0", counted(1.0, "s", "b1"));
        history.extend(self::history("2.0.0", counted(4.2, "s", "b2")));
        let members =
            [Membership { regression_id: 9, version: "2.0.0".into(), open: true, track: Track::cost(1), fixed: false }];
        // Cheaper than 2.0.0 but still 3× the last good version: not back.
        assert!(plan(&rules, "3.0.0", &now(counted(3.0, "s", "b3")), &members, &history).is_empty());
        let p = plan(&rules, "3.0.0", &now(counted(1.1, "s", "b3")), &members, &history);
        assert_eq!(p.fixes.len(), 1);
        assert_eq!(p.resolved, vec![9]);
    }

    #[test]
    fn the_history_is_read_only_when_a_cost_rose_against_the_version_before_or_one_is_open() {
        use crate::rules::evaluate::needs_history;
        let rules = Rules::default();
        let cost_only = |f: VersionFit| {
            vec![Current { track: Track::cost(1), workload: "memcpy".into(), evidence: Evidence::Cost(f) }]
        };
        let before = history("1.0.0", counted(1.0, "s", "b1"));
        assert!(needs_history(&rules, "2.0.0", &cost_only(counted(4.2, "s", "b2")), &[], &before));
        assert!(!needs_history(&rules, "2.0.0", &cost_only(counted(1.2, "s", "b2")), &[], &before));
        assert!(!needs_history(&rules, "2.0.0", &cost_only(counted(4.2, "s", "b1")), &[], &before), "same build");
        let open =
            [Membership { regression_id: 1, version: "1.0.0".into(), open: true, track: Track::cost(1), fixed: false }];
        assert!(needs_history(&rules, "2.0.0", &cost_only(counted(1.0, "s", "b2")), &open, &[]));
    }
}
