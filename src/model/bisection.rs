//! A bisection as it is stored and shown on its regression: the range searched, the rule, each
//! candidate measured, and where the growth first appears; and how its outcome reads in words.

use serde::Serialize;
use slopewatch_core::bisection::{BisectionSubmission, Outcome, Step, StepVerdict};
use slopewatch_core::complexity::Class;
use slopewatch_core::wire::Host;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// A bisection recorded on a regression.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Bisection {
    pub bisection_id: Uuid,
    pub regression_id: i64,
    pub agent_version: String,
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    /// When the server stored it.
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    /// Seconds from the start to the answer, building and measuring included.
    pub seconds: f64,
    pub host: Host,
    pub lineage: String,
    /// The workloads judged: a candidate is bad when any of them crosses `max_slope`.
    pub workloads: Vec<String>,
    pub max_slope: f64,
    /// The most complex class allowed, when the class was judged too.
    #[schema(value_type = Option<String>)]
    pub max_class: Option<Class>,
    /// The ends of the range, as given.
    pub good: String,
    pub bad: String,
    /// How many candidates the range held, its ends included.
    pub candidates: i64,
    pub outcome: Outcome,
    pub first_bad: Option<String>,
    pub last_good: Option<String>,
    /// Every candidate measured or skipped, in version order (dev builds between their releases);
    /// `position` keeps the order they were measured in.
    pub steps: Vec<BisectionStep>,
}

/// One candidate of a bisection.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BisectionStep {
    /// The order it was measured in, from 1.
    pub position: i32,
    pub version: String,
    pub verdict: StepVerdict,
    /// The steepest slope among the workloads judged; null when skipped before measuring.
    pub slope: Option<f64>,
    pub workload: Option<String>,
    pub seconds: f64,
    /// The run the agent stored for this candidate, if it sent one.
    pub run_id: Option<Uuid>,
    /// Whether that run is stored on this server, so its page can be opened.
    pub run_stored: bool,
    pub note: Option<String>,
}

impl Bisection {
    /// A bisection as an agent submitted it, recorded on `regression_id` at `received_at`, before
    /// the store knows which of its steps' runs it holds.
    pub fn submitted(regression_id: i64, b: &BisectionSubmission, received_at: OffsetDateTime) -> Bisection {
        let steps = b
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| BisectionStep {
                position: i as i32 + 1,
                version: s.version.clone(),
                verdict: s.verdict,
                slope: s.slope,
                workload: s.workload.clone(),
                seconds: s.seconds,
                run_id: s.run_id,
                run_stored: false,
                note: s.note.clone(),
            })
            .collect();
        let mut bisection = Bisection {
            bisection_id: b.bisection_id,
            regression_id,
            agent_version: b.agent_version.clone(),
            started_at: b.started_at,
            received_at,
            seconds: b.seconds,
            host: b.host.clone(),
            lineage: b.lineage.clone(),
            workloads: b.workloads.clone(),
            max_slope: b.max_slope,
            max_class: b.max_class,
            good: b.good.clone(),
            bad: b.bad.clone(),
            candidates: i64::from(b.candidates),
            outcome: b.outcome,
            first_bad: b.first_bad.clone(),
            last_good: b.last_good.clone(),
            steps,
        };
        bisection.sort_steps();
        bisection
    }

    /// What made a candidate bad: "bad when strchr or strcspn has a slope above 1.5", and "or a
    /// class above O(n)" when the class was judged too.
    pub fn rule(&self) -> String {
        let class = self.max_class.map(|c| format!(" or a class above {}", c.label())).unwrap_or_default();
        format!("bad when {} has a slope above {}{class}", self.workloads.join(" or "), self.max_slope)
    }

    /// The record as the agent submitted it: the steps in the order they were measured.
    pub fn submission(&self) -> BisectionSubmission {
        let mut steps = self.steps.clone();
        steps.sort_by_key(|s| s.position);
        BisectionSubmission {
            bisection_id: self.bisection_id,
            agent_version: self.agent_version.clone(),
            started_at: self.started_at,
            seconds: self.seconds,
            host: self.host.clone(),
            lineage: self.lineage.clone(),
            workloads: self.workloads.clone(),
            max_slope: self.max_slope,
            max_class: self.max_class,
            good: self.good.clone(),
            bad: self.bad.clone(),
            candidates: u32::try_from(self.candidates).unwrap_or(u32::MAX),
            outcome: self.outcome,
            first_bad: self.first_bad.clone(),
            last_good: self.last_good.clone(),
            steps: steps
                .into_iter()
                .map(|s| Step {
                    version: s.version,
                    verdict: s.verdict,
                    slope: s.slope,
                    workload: s.workload,
                    seconds: s.seconds,
                    run_id: s.run_id,
                    note: s.note,
                })
                .collect(),
        }
    }

    /// Sorts the steps by version, dev builds between their releases; versions that do not parse
    /// follow in measuring order.
    pub fn sort_steps(&mut self) {
        slopewatch_core::version::sort_versions(&mut self.steps, |s| &s.version, |s| s.position);
    }

    /// The outcome in words: "bisected to 0.16.0-dev.1234+abc in 7 steps, 41 s", or why there was
    /// nothing to search.
    pub fn summary(&self) -> String {
        let steps = match self.steps.len() {
            1 => "1 step".to_string(),
            n => format!("{n} steps"),
        };
        let seconds = format!("{:.0} s", self.seconds);
        match (self.outcome, &self.first_bad) {
            (Outcome::Found, Some(first_bad)) => format!("bisected to {first_bad} in {steps}, {seconds}"),
            (Outcome::GoodIsBad, _) | (Outcome::Found, None) => {
                format!("the good end {} measured bad: nothing to search ({steps}, {seconds})", self.good)
            }
            (Outcome::BadIsGood, _) => {
                format!("the bad end {} measured good: nothing to search ({steps}, {seconds})", self.bad)
            }
            (Outcome::Inconclusive, _) => format!(
                "bisection inconclusive: skipped builds hide the first bad one between {} and {} ({steps}, {seconds})",
                self.good, self.bad
            ),
        }
    }

    /// How many steps were skipped.
    pub fn skipped(&self) -> usize {
        self.steps.iter().filter(|s| s.verdict == StepVerdict::Skipped).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(position: i32, version: &str) -> BisectionStep {
        BisectionStep {
            position,
            version: version.into(),
            verdict: StepVerdict::Good,
            slope: Some(1.0),
            workload: None,
            seconds: 1.0,
            run_id: None,
            run_stored: false,
            note: None,
        }
    }

    fn bisection(outcome: Outcome, first_bad: Option<&str>) -> Bisection {
        Bisection {
            bisection_id: Uuid::nil(),
            regression_id: 1,
            agent_version: "0.1.0".into(),
            started_at: OffsetDateTime::UNIX_EPOCH,
            received_at: OffsetDateTime::UNIX_EPOCH,
            seconds: 41.2,
            host: Host { name: "b".into(), cpu: String::new(), kernel: String::new(), arch: String::new() },
            lineage: "zig-cc-musl".into(),
            workloads: vec!["strchr".into()],
            max_slope: 1.5,
            max_class: None,
            good: "0.15.2".into(),
            bad: "0.16.0".into(),
            candidates: 9,
            outcome,
            first_bad: first_bad.map(Into::into),
            last_good: None,
            steps: vec![
                step(1, "0.16.0"),
                step(2, "0.15.2"),
                step(3, "0.16.0-dev.1234+abc"),
                step(4, "0.16.0-dev.99+f"),
                step(5, "0.15.10"),
            ],
        }
    }

    #[test]
    fn steps_sort_by_version_with_dev_builds_between_their_releases() {
        let mut b = bisection(Outcome::Found, Some("0.16.0-dev.1234+abc"));
        b.sort_steps();
        let order: Vec<(i32, &str)> = b.steps.iter().map(|s| (s.position, s.version.as_str())).collect();
        assert_eq!(
            order,
            [(2, "0.15.2"), (5, "0.15.10"), (4, "0.16.0-dev.99+f"), (3, "0.16.0-dev.1234+abc"), (1, "0.16.0")]
        );
    }

    #[test]
    fn every_outcome_reads_in_words() {
        assert_eq!(
            bisection(Outcome::Found, Some("0.16.0-dev.1234+abc")).summary(),
            "bisected to 0.16.0-dev.1234+abc in 5 steps, 41 s"
        );
        assert!(bisection(Outcome::GoodIsBad, None).summary().starts_with("the good end 0.15.2 measured bad"));
        assert!(bisection(Outcome::BadIsGood, None).summary().starts_with("the bad end 0.16.0 measured good"));
        assert!(bisection(Outcome::Inconclusive, None).summary().starts_with("bisection inconclusive"));
    }

    #[test]
    fn the_rule_names_the_class_limit_when_the_class_was_judged() {
        let mut b = bisection(Outcome::Found, Some("0.16.0"));
        assert_eq!(b.rule(), format!("bad when {} has a slope above 1.5", b.workloads.join(" or ")));
        b.max_class = Some(Class::Linear);
        assert!(b.rule().ends_with("has a slope above 1.5 or a class above O(n)"), "{}", b.rule());
        let stored = Bisection::submitted(b.regression_id, &b.submission(), b.received_at);
        assert_eq!(stored.max_class, Some(Class::Linear), "the limit survives the record's round trip");
    }
}
