//! The `regression.bisected` webhook: a bisection recorded on a regression, as JSON or as a Slack
//! message. Rendered once, when its delivery rows are written.

use super::body::{slack_escape, Body};
use super::payload::EventLinks;
use crate::links;
use crate::model::Bisection;
use serde::Serialize;
use slopewatch_core::bisection::Outcome;
use uuid::Uuid;

/// A bisection was recorded on a regression.
pub const BISECTED: &str = "regression.bisected";

/// The JSON body of `regression.bisected`.
#[derive(Debug, Clone, Serialize)]
pub struct BisectedEvent {
    pub event: &'static str,
    pub regression_id: i64,
    pub lineage: String,
    /// The architecture the lineage's binaries are built for: `x86_64`, `aarch64`, ….
    pub arch: String,
    /// The regression's first bad and last good versions.
    pub regressed_version: String,
    pub last_good_version: Option<String>,
    pub bisection: BisectionFacts,
    pub links: EventLinks,
}

/// What the bisection found, in brief; the regression's page has every step.
#[derive(Debug, Clone, Serialize)]
pub struct BisectionFacts {
    pub bisection_id: Uuid,
    pub outcome: Outcome,
    pub first_bad: Option<String>,
    pub last_good: Option<String>,
    /// The range searched, as given, and how many candidates it held.
    pub good: String,
    pub bad: String,
    pub candidates: i64,
    /// Candidates measured or skipped, and of those skipped.
    pub steps: usize,
    pub skipped: usize,
    pub seconds: f64,
    pub workloads: Vec<String>,
    pub max_slope: f64,
    /// The class limit, when the class was judged too: `n`, `n^2`, ….
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_class: Option<slopewatch_core::complexity::Class>,
    pub host: String,
    /// The outcome in words, as the regression's timeline says it.
    pub summary: String,
}

impl BisectedEvent {
    /// The event of `bisection` recorded on a regression of `lineage` between `last_good` and
    /// `regressed`.
    pub fn new(
        bisection: &Bisection,
        regressed_version: &str,
        last_good_version: Option<&str>,
        public_url: Option<&str>,
    ) -> BisectedEvent {
        BisectedEvent {
            event: BISECTED,
            regression_id: bisection.regression_id,
            lineage: bisection.lineage.clone(),
            arch: slopewatch_core::arch::split_lineage(&bisection.lineage).1.to_string(),
            regressed_version: regressed_version.to_string(),
            last_good_version: last_good_version.map(str::to_string),
            bisection: BisectionFacts {
                bisection_id: bisection.bisection_id,
                outcome: bisection.outcome,
                first_bad: bisection.first_bad.clone(),
                last_good: bisection.last_good.clone(),
                good: bisection.good.clone(),
                bad: bisection.bad.clone(),
                candidates: bisection.candidates,
                steps: bisection.steps.len(),
                skipped: bisection.skipped(),
                seconds: bisection.seconds,
                workloads: bisection.workloads.clone(),
                max_slope: bisection.max_slope,
                max_class: bisection.max_class,
                host: bisection.host.name.clone(),
                summary: bisection.summary(),
            },
            links: EventLinks { regression: links::absolute(public_url, &links::regression(bisection.regression_id)) },
        }
    }
}

impl Body for BisectedEvent {
    fn event(&self) -> &'static str {
        self.event
    }

    fn regression_id(&self) -> i64 {
        self.regression_id
    }

    fn slack_text(&self) -> String {
        let b = &self.bisection;
        let headline = format!(
            ":mag: *Regression #{} in {} {} bisected*",
            self.regression_id,
            slack_escape(&self.lineage),
            slack_escape(&self.regressed_version)
        );
        let found = match (b.outcome, &b.first_bad) {
            (Outcome::Found, Some(first_bad)) => {
                let last_good =
                    b.last_good.as_ref().map(|v| format!(", last good {}", slack_escape(v))).unwrap_or_default();
                format!("bisected to {} in {} steps ({:.0} s){last_good}", slack_escape(first_bad), b.steps, b.seconds)
            }
            _ => slack_escape(&b.summary),
        };
        let class = b.max_class.map(|c| format!(" and class {}", c.label())).unwrap_or_default();
        let range = format!(
            "{} candidates from {} to {}, judged by {} at slope {:.2}{class}",
            b.candidates,
            slack_escape(&b.good),
            slack_escape(&b.bad),
            slack_escape(&b.workloads.join(", ")),
            b.max_slope
        );
        let link = format!("<{}|Open the regression>", slack_escape(&self.links.regression));
        [headline, found, range, link].join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::WebhookFormat;
    use crate::model::BisectionStep;
    use slopewatch_core::bisection::StepVerdict;
    use slopewatch_core::wire::Host;
    use time::OffsetDateTime;

    fn bisection() -> Bisection {
        let step = |position, version: &str, verdict| BisectionStep {
            position,
            version: version.into(),
            verdict,
            slope: Some(1.0),
            workload: None,
            seconds: 2.0,
            run_id: None,
            run_stored: false,
            note: None,
        };
        Bisection {
            bisection_id: Uuid::nil(),
            regression_id: 4,
            agent_version: "0.1.0".into(),
            started_at: OffsetDateTime::UNIX_EPOCH,
            received_at: OffsetDateTime::UNIX_EPOCH,
            seconds: 40.6,
            host: Host { name: "build-01".into(), cpu: String::new(), kernel: String::new(), arch: String::new() },
            lineage: "zig<cc>".into(),
            workloads: vec!["strchr".into()],
            max_slope: 1.5,
            max_class: None,
            good: "0.15.2".into(),
            bad: "0.16.0".into(),
            candidates: 12,
            outcome: Outcome::Found,
            first_bad: Some("0.16.0-dev.7+a&b".into()),
            last_good: Some("0.16.0-dev.6".into()),
            steps: vec![step(1, "0.16.0-dev.6", StepVerdict::Good), step(2, "0.16.0-dev.7+a&b", StepVerdict::Bad)],
        }
    }

    #[test]
    fn slack_says_where_the_bisection_landed_escaped() {
        let e = BisectedEvent::new(&bisection(), "0.16.0", Some("0.15.2"), Some("https://sw.example"));
        let body: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Slack)).unwrap();
        let text = body["text"].as_str().unwrap();
        assert!(text.starts_with(":mag: *Regression #4 in zig&lt;cc&gt; 0.16.0 bisected*"), "{text}");
        assert!(
            text.contains("\nbisected to 0.16.0-dev.7+a&amp;b in 2 steps (41 s), last good 0.16.0-dev.6\n"),
            "{text}"
        );
        assert!(text.ends_with("<https://sw.example/regressions/4|Open the regression>"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Json)).unwrap();
        assert_eq!(json["event"], BISECTED);
        assert_eq!(json["bisection"]["first_bad"], "0.16.0-dev.7+a&b");
        assert_eq!(
            (json["bisection"]["steps"].as_u64(), json["bisection"]["outcome"].as_str()),
            (Some(2), Some("found"))
        );
    }
}
