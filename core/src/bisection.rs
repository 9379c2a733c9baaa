//! The bisection record an agent sends to `POST /api/v1/regressions/{id}/bisections`: which
//! candidate toolchain builds between a regression's last good and first bad version it measured,
//! what each measured, and where the growth first appears.
//!
//! Defined here so the agent and the server can never disagree about the format.

use crate::complexity::Class;
use crate::wire::{check_name, check_text, err, FieldError, Host};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use time::OffsetDateTime;
use uuid::Uuid;

/// Most candidates one bisection may list steps for.
pub const MAX_STEPS: usize = 64;
/// Most workloads one bisection may judge.
pub const MAX_BISECT_WORKLOADS: usize = 32;

/// One bisection, as the agent submits it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BisectionSubmission {
    /// Chosen by the agent; resubmitting the same id never stores the bisection twice.
    pub bisection_id: Uuid,
    /// The version of the agent that bisected.
    pub agent_version: String,
    /// When the bisection started, RFC 3339.
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    /// Seconds from the start to the answer, building and measuring included.
    pub seconds: f64,
    pub host: Host,
    /// The lineage the candidates belong to, e.g. `zig-cc-musl`.
    pub lineage: String,
    /// The workloads judged: a candidate is bad when any of them crosses the rule.
    pub workloads: Vec<String>,
    /// The rule: the slope above which a candidate is bad.
    pub max_slope: f64,
    /// And the most complex class allowed, when the class is judged too: a candidate whose class
    /// is named above it is bad.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_class: Option<Class>,
    /// The good end of the range, as given (`--good`, or the regression's last good version).
    pub good: String,
    /// The bad end of the range, as given.
    pub bad: String,
    /// How many candidates the range held, its ends included.
    pub candidates: u32,
    pub outcome: Outcome,
    /// The first candidate found bad; set when `outcome` is `found`.
    #[serde(default)]
    pub first_bad: Option<String>,
    /// The last candidate found good before it; set when `outcome` is `found`.
    #[serde(default)]
    pub last_good: Option<String>,
    /// Every candidate measured (or skipped), in the order it was measured.
    pub steps: Vec<Step>,
}

/// How a bisection ended.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The first bad candidate was found, next to a good one.
    Found,
    /// The good end measured bad: there is nothing to search.
    GoodIsBad,
    /// The bad end measured good: there is nothing to search.
    BadIsGood,
    /// Skipped candidates left the boundary between two that were not adjacent.
    Inconclusive,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Found => "found",
            Outcome::GoodIsBad => "good_is_bad",
            Outcome::BadIsGood => "bad_is_good",
            Outcome::Inconclusive => "inconclusive",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        [Outcome::Found, Outcome::GoodIsBad, Outcome::BadIsGood, Outcome::Inconclusive]
            .into_iter()
            .find(|o| o.as_str() == s)
    }
}

/// What one candidate was found to be.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepVerdict {
    Good,
    Bad,
    /// It could not be built or run, or stayed unsure when measured again: left out, like
    /// `git bisect skip`.
    Skipped,
}

impl StepVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            StepVerdict::Good => "good",
            StepVerdict::Bad => "bad",
            StepVerdict::Skipped => "skipped",
        }
    }

    pub fn parse(s: &str) -> Option<StepVerdict> {
        [StepVerdict::Good, StepVerdict::Bad, StepVerdict::Skipped].into_iter().find(|v| v.as_str() == s)
    }
}

/// One candidate measured.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The candidate's version, e.g. `0.16.0-dev.1234+abc`.
    pub version: String,
    pub verdict: StepVerdict,
    /// The steepest slope among the workloads judged; none when it was skipped before measuring.
    #[serde(default)]
    pub slope: Option<f64>,
    /// The workload that slope belongs to.
    #[serde(default)]
    pub workload: Option<String>,
    /// Seconds spent on this candidate, building included.
    pub seconds: f64,
    /// The run stored for this candidate, when the agent submitted it (`--submit`).
    #[serde(default)]
    pub run_id: Option<Uuid>,
    /// Why it was skipped, or what was unsure: one or a few lines.
    #[serde(default)]
    pub note: Option<String>,
}

impl BisectionSubmission {
    /// Parses and validates a JSON body; the error names the first offending field.
    pub fn from_json(body: &[u8]) -> Result<BisectionSubmission, FieldError> {
        let b: BisectionSubmission = crate::wire::parse_json(body)?;
        b.validate()?;
        Ok(b)
    }

    /// Names what the bisection found, its id and timings aside (`bisection_id`, `started_at`,
    /// `seconds`, each step's `seconds` and `run_id`): the same search repeated, or resent under a
    /// new id, has the same key, and the server stores it once per regression.
    pub fn content_key(&self) -> String {
        let mut content = self.clone();
        content.bisection_id = Uuid::nil();
        content.started_at = OffsetDateTime::UNIX_EPOCH;
        content.seconds = 0.0;
        for step in &mut content.steps {
            step.seconds = 0.0;
            step.run_id = None;
        }
        let canonical = serde_json::to_vec(&content).expect("a submission always serializes");
        format!("sha256:{}", hex::encode(Sha256::digest(canonical)))
    }

    /// Checks every rule the server enforces, so the agent can refuse to send a bad record.
    pub fn validate(&self) -> Result<(), FieldError> {
        check_name("agent_version", &self.agent_version)?;
        self.host.validate()?;
        check_name("lineage", &self.lineage)?;
        check_name("good", &self.good)?;
        check_name("bad", &self.bad)?;
        if !(self.seconds.is_finite() && self.seconds >= 0.0) {
            return Err(err("seconds", "must be a non-negative number"));
        }
        if !(self.max_slope.is_finite() && self.max_slope > 0.0) {
            return Err(err("max_slope", "must be a positive number"));
        }
        if self.workloads.is_empty() || self.workloads.len() > MAX_BISECT_WORKLOADS {
            return Err(err("workloads", format!("must name 1 to {MAX_BISECT_WORKLOADS} workloads")));
        }
        for (i, w) in self.workloads.iter().enumerate() {
            check_name(&format!("workloads[{i}]"), w)?;
        }
        if self.steps.len() > MAX_STEPS {
            return Err(err("steps", format!("{} steps is more than the limit of {MAX_STEPS}", self.steps.len())));
        }
        if (self.steps.len() as u64) > u64::from(self.candidates) {
            return Err(err("candidates", "is smaller than the number of steps"));
        }
        let mut seen = HashSet::new();
        for (i, s) in self.steps.iter().enumerate() {
            let at = format!("steps[{i}]");
            check_name(&format!("{at}.version"), &s.version)?;
            if !seen.insert(s.version.as_str()) {
                return Err(err(format!("{at}.version"), format!("{:?} is measured twice", s.version)));
            }
            if !(s.seconds.is_finite() && s.seconds >= 0.0) {
                return Err(err(format!("{at}.seconds"), "must be a non-negative number"));
            }
            if s.slope.is_some_and(|k| !k.is_finite()) {
                return Err(err(format!("{at}.slope"), "must be a finite number"));
            }
            if let Some(w) = &s.workload {
                check_name(&format!("{at}.workload"), w)?;
            }
            if let Some(n) = &s.note {
                check_text(&format!("{at}.note"), n)?;
            }
            if s.verdict != StepVerdict::Skipped && s.slope.is_none() {
                return Err(err(format!("{at}.slope"), "a good or bad step needs the slope it was judged by"));
            }
        }
        let verdict_of = |v: &Option<String>| {
            v.as_ref().and_then(|v| self.steps.iter().find(|s| &s.version == v)).map(|s| s.verdict)
        };
        match self.outcome {
            Outcome::Found => {
                if verdict_of(&self.first_bad) != Some(StepVerdict::Bad) {
                    return Err(err("first_bad", "must name a step found bad"));
                }
                if verdict_of(&self.last_good) != Some(StepVerdict::Good) {
                    return Err(err("last_good", "must name a step found good"));
                }
            }
            _ => {
                if self.first_bad.is_some() || self.last_good.is_some() {
                    return Err(err("first_bad", "is set only when the outcome is found"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(version: &str, verdict: StepVerdict, slope: Option<f64>) -> Step {
        Step {
            version: version.into(),
            verdict,
            slope,
            workload: Some("strchr".into()),
            seconds: 1.5,
            run_id: None,
            note: None,
        }
    }

    fn found() -> BisectionSubmission {
        BisectionSubmission {
            bisection_id: Uuid::nil(),
            agent_version: "0.1.0".into(),
            started_at: OffsetDateTime::UNIX_EPOCH,
            seconds: 12.0,
            host: Host { name: "build-01".into(), cpu: String::new(), kernel: String::new(), arch: String::new() },
            lineage: "zig-cc-musl".into(),
            workloads: vec!["strchr".into()],
            max_slope: 1.5,
            max_class: None,
            good: "0.15.2".into(),
            bad: "0.16.0".into(),
            candidates: 32,
            outcome: Outcome::Found,
            first_bad: Some("0.16.0-dev.20".into()),
            last_good: Some("0.16.0-dev.19".into()),
            steps: vec![
                step("0.15.2", StepVerdict::Good, Some(1.0)),
                step("0.16.0", StepVerdict::Bad, Some(2.0)),
                step("0.16.0-dev.19", StepVerdict::Good, Some(1.01)),
                step("0.16.0-dev.20", StepVerdict::Bad, Some(1.98)),
                step("0.16.0-dev.7", StepVerdict::Skipped, None),
            ],
        }
    }

    #[test]
    fn a_found_bisection_round_trips() {
        let b = found();
        let json = serde_json::to_vec(&b).unwrap();
        assert_eq!(BisectionSubmission::from_json(&json).unwrap(), b);
    }

    #[test]
    fn the_content_key_ignores_ids_and_timings_and_nothing_else() {
        let b = found();
        let mut again = found();
        again.bisection_id = Uuid::from_u128(7);
        again.started_at = OffsetDateTime::UNIX_EPOCH + time::Duration::days(3);
        again.seconds = 99.0;
        again.steps[0].seconds = 8.0;
        again.steps[1].run_id = Some(Uuid::from_u128(9));
        assert_eq!(again.content_key(), b.content_key());
        let mut other = found();
        other.steps[2].slope = Some(1.02);
        assert_ne!(other.content_key(), b.content_key(), "a measured slope is content");
        other = found();
        other.host.name = "build-02".into();
        assert_ne!(other.content_key(), b.content_key(), "so is the host");
    }

    #[test]
    fn broken_records_name_the_field() {
        type Break = Box<dyn Fn(&mut BisectionSubmission)>;
        let cases: Vec<(Break, &str)> = vec![
            (Box::new(|b| b.first_bad = Some("0.16.0-dev.19".into())), "first_bad"),
            (Box::new(|b| b.last_good = None), "last_good"),
            (Box::new(|b| b.outcome = Outcome::GoodIsBad), "first_bad"),
            (Box::new(|b| b.steps[1].slope = None), "steps[1].slope"),
            (Box::new(|b| b.steps[2].version = "0.16.0".into()), "steps[2].version"),
            (Box::new(|b| b.max_slope = f64::NAN), "max_slope"),
            (Box::new(|b| b.workloads.clear()), "workloads"),
            (Box::new(|b| b.candidates = 2), "candidates"),
            (Box::new(|b| b.lineage = "a\nb".into()), "lineage"),
        ];
        for (breaks, field) in cases {
            let mut b = found();
            breaks(&mut b);
            assert_eq!(b.validate().unwrap_err().field, field, "{b:?}");
        }
        let e = BisectionSubmission::from_json(br#"{"bisection_id": 3}"#).unwrap_err();
        assert_eq!(e.field, "bisection_id", "{e}");
    }
}
