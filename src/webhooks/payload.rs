//! What the regression webhooks say (`regression.opened`, `.updated`, `.resolved`, and for a
//! finding `finding.opened` and `.resolved`): the event's JSON, and its summary as a Slack
//! message.

use super::body::{slack_code, slack_escape, Body};
use crate::analysis::ClassStep;
use crate::format;
use crate::rules::replay::MovedField;
use serde::Serialize;
use slopewatch_core::wire::{Failure, Metric, SizeUnit};

/// A regression was opened at a version.
pub const OPENED: &str = "regression.opened";
/// A later version brought every workload of a regression back under its threshold (and, for a
/// failure, passing again).
pub const RESOLVED: &str = "regression.resolved";
/// A workload was over its limit or contract at the first version its lineage measured: a
/// finding, with nothing to regress from. Announced once; if a version measured later shows an
/// earlier one held, the finding becomes a regression and `regression.opened` follows.
pub const FINDING_OPENED: &str = "finding.opened";
/// A later version brought every workload of a finding back under.
pub const FINDING_RESOLVED: &str = "finding.resolved";
/// A version measured out of order moved an announced regression: its first bad, last good or
/// fixed-in version, or its workloads. Announced once instead of a second `regression.opened`.
pub const UPDATED: &str = "regression.updated";

/// The JSON body of a webhook.
///
/// `version` is the version that caused the event and `previous_version` what it is compared
/// with: for `regression.opened` the bad version and the last good one, for
/// `regression.resolved` the fixing version and the bad one. `regression.updated` has the shape of
/// `regression.opened` as it stands now, plus `changes`: what moved, from what, to what.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    pub event: &'static str,
    pub regression_id: i64,
    /// The lineage as stored: its name, qualified with its architecture where that is not x86-64
    /// (`zig-cc-musl (aarch64)`).
    pub lineage: String,
    /// The architecture the lineage's binaries are built for: `x86_64`, `aarch64`, ….
    pub arch: String,
    pub version: String,
    pub previous_version: Option<String>,
    /// The version at which the regression appeared.
    pub regressed_version: String,
    /// The last version measured before it.
    pub last_good_version: Option<String>,
    /// The largest ratio among the workloads (of times, or of counts for a count metric), at their
    /// largest common size.
    pub magnitude: Option<f64>,
    pub workloads: Vec<EventWorkload>,
    pub links: EventLinks,
    /// What moved (`regression.updated`, and `regression.opened` for a finding that became a
    /// regression).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FieldChange>,
    /// What the control lineage says moved: the toolchain, the code, or the host or harness
    /// (docs/alerts.md, "Attribution"); absent when no control is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribution: Option<crate::model::control::ControlCheck>,
    /// The stored artifacts whose latest scan reaches a function the regression names (its
    /// contract probes' functions, or where its cost went), each in a sentence: "api-server
    /// reaches strspn (4 call sites: jsonTranslateTextToBlob, …), scanned at 0.16.0"
    /// (docs/exposure.md); on `regression.opened` and `finding.opened` only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    /// Its workloads under the functions that broke at its version, worst first, and those that
    /// trace to none (docs/alerts.md, "Root causes"); empty on the `.resolved` events.
    #[serde(flatten)]
    pub causes: crate::model::RootCauses,
}

impl<'a> From<&'a EventWorkload> for crate::causes::Member<'a> {
    fn from(w: &'a EventWorkload) -> crate::causes::Member<'a> {
        crate::causes::Member {
            workload: &w.name,
            metric: w.metric,
            reason: w.reason,
            failure: w.failure.as_ref(),
            contract: w.contract.as_ref(),
            class_before: w.class_before.as_deref(),
            class_after: w.class_after.as_deref(),
            unit: w.size_unit,
        }
    }
}

/// One field of a regression that moved, from what, to what.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    pub field: Field,
    pub from: Option<String>,
    pub to: Option<String>,
}

/// What moved of a regression: `version` (the first bad version), `previous_version` (the last
/// good one), `fixed_version`, `merged_into` (the regression it went into or left),
/// `workloads` (their names, comma-separated), or `root_causes` (the causes' functions,
/// comma-separated, when a workload that joined brought a new one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    Version,
    PreviousVersion,
    FixedVersion,
    MergedInto,
    Workloads,
    RootCauses,
}

impl Field {
    /// How the field reads in a message.
    fn label(self) -> &'static str {
        match self {
            Field::Version => "first bad",
            Field::PreviousVersion => "last good",
            Field::FixedVersion => "fixed in",
            Field::MergedInto => "merged_into",
            Field::Workloads => "workloads",
            Field::RootCauses => "root causes",
        }
    }
}

impl From<MovedField> for Field {
    fn from(field: MovedField) -> Field {
        match field {
            MovedField::Version => Field::Version,
            MovedField::PreviousVersion => Field::PreviousVersion,
            MovedField::FixedVersion => Field::FixedVersion,
            MovedField::MergedInto => Field::MergedInto,
        }
    }
}

/// One workload of the event's regression, there for its `slope` or for a `failure`. A failure
/// has no slope at the version it failed: `slope`, `ci_low` and `ci_high` are null, and `failure`
/// says what broke (the version's latest failure, as the agent reported it).
#[derive(Debug, Clone, Serialize)]
pub struct EventWorkload {
    pub name: String,
    /// The metric of the series it was found on: `wall`, `cpu`, `instructions-perf` or
    /// `instructions-valgrind`. Its slopes and ratios are of that metric.
    #[serde(rename = "measure")]
    pub metric: Metric,
    /// `slope` or `failure`.
    pub reason: &'static str,
    pub threshold: f64,
    pub slope: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    pub previous_slope: Option<f64>,
    /// Time (or count, for a count metric) at `version` over that at `previous_version`, at the
    /// largest size both measured.
    pub time_ratio: Option<f64>,
    pub ratio_size: Option<i64>,
    /// What the workload's sizes count (`bytes`, `records`, `items`, `iterations`): the unit of
    /// `ratio_size` and of a failure's `size`.
    pub size_unit: SizeUnit,
    /// The complexity class at `previous_version` and at `version` (`"n"`, `"n^2"`, … or
    /// `"unsure"`); `null` where that version has no summary or no class.
    pub class_before: Option<String>,
    pub class_after: Option<String>,
    /// Whether the evidence shows the step from `class_before` to `class_after`: both named,
    /// different, and each version's medians ruling out the other's class. False where the two
    /// are the same, either is unsure or missing, or the step is within the noise.
    pub class_changed: bool,
    /// That step, for the Slack text: written out within the noise too, and said so.
    #[serde(skip)]
    pub class_step: Option<ClassStep>,
    /// For a workload held to a contract, what its break means and costs a caller, e.g.
    /// "strcspn now reads the whole remaining string: cost ∝ remaining^1.00, O(1) at 0.15.2. A
    /// loop that calls it once per token over n bytes is O(n²)."
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contract_break: Option<String>,
    /// The contract it is held to, for its root cause's words.
    #[serde(skip)]
    pub contract: Option<slopewatch_core::wire::Contract>,
    /// What the workload costs at its size of interest at `version`, against `previous_version`,
    /// predicted from each version's fit with its 95% prediction interval, e.g. "at 40,000
    /// records: ≈ 5.4 min [4.6 min, 6.3 min] here, predicted past the 20,000 records measured; ≈
    /// 40 ms at 0.15.2, about 8,100×".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_size_of_interest: Option<String>,
    /// Where the cost went, from the versions' profiles: "99.6 % of the added instructions are in
    /// strspn (called from …); strspn broke its O(1) contract at 0.16.0" (docs/profiles.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub where_cost_went: Option<String>,
    pub series_url: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct EventLinks {
    pub regression: String,
}

impl Event {
    /// What the regression is about: slopes, failures, costs, or several of them.
    fn what(&self) -> &'static str {
        let all = |reason: &str| self.workloads.iter().all(|w| w.reason == reason);
        if all("slope") {
            "Slope regression"
        } else if all("failure") {
            "Failure"
        } else if all("cost") {
            "Cost regression"
        } else {
            "Regression"
        }
    }
}

impl Body for Event {
    fn event(&self) -> &'static str {
        self.event
    }

    fn regression_id(&self) -> i64 {
        self.regression_id
    }

    fn slack_text(&self) -> String {
        let what = self.what();
        let headline = match self.event {
            FINDING_OPENED => format!(
                ":mag: *Finding in {} {}*: over at the first version measured",
                slack_escape(&self.lineage),
                slack_escape(&self.version)
            ),
            FINDING_RESOLVED => format!(
                ":white_check_mark: *Fixed in {} {}*: the finding of {} is resolved",
                slack_escape(&self.lineage),
                slack_escape(&self.version),
                slack_escape(&self.regressed_version)
            ),
            OPENED => format!(
                ":rotating_light: *{what} in {} {}*{}",
                slack_escape(&self.lineage),
                slack_escape(&self.version),
                self.previous_version.as_ref().map(|v| format!(" (after {})", slack_escape(v))).unwrap_or_default()
            ),
            UPDATED => {
                let moved: Vec<String> = self
                    .changes
                    .iter()
                    .map(|c| {
                        let shown = |v: &Option<String>| slack_escape(v.as_deref().unwrap_or("none"));
                        format!("{} {} → {}", c.field.label(), shown(&c.from), shown(&c.to))
                    })
                    .collect();
                format!(
                    ":pencil2: *{what} in {} {} updated*: {}",
                    slack_escape(&self.lineage),
                    slack_escape(&self.version),
                    moved.join("; ")
                )
            }
            _ => format!(
                ":white_check_mark: *Fixed in {} {}*: the regression of {} is resolved",
                slack_escape(&self.lineage),
                slack_escape(&self.version),
                slack_escape(&self.regressed_version)
            ),
        };
        let mut lines = vec![headline];
        let code = |s: &str| format!("`{}`", slack_code(s));
        for c in &self.causes.root_causes {
            lines.push(format!("• {}", c.line(code, slack_escape)));
        }
        let unattributed = |w: &&EventWorkload| {
            self.causes.is_empty() || self.causes.unattributed.iter().any(|u| u.workload == w.name)
        };
        if !self.causes.is_empty() && self.workloads.iter().any(|w| unattributed(&w)) {
            lines.push("Traced to no cause:".to_string());
        }
        lines.extend(self.workloads.iter().filter(unattributed).map(workload_line));
        if let Some(a) = &self.attribution {
            lines.push(format!(":scales: {}", slack_escape(&format::sentence(&a.sentence))));
        }
        if !self.artifacts.is_empty() {
            lines.push(format!(":package: Artifacts that reach it: {}", slack_escape(&self.artifacts.join("; "))));
        }
        let what = if matches!(self.event, FINDING_OPENED | FINDING_RESOLVED) { "finding" } else { "regression" };
        lines.push(format!("<{}|Open the {what}>", slack_escape(&self.links.regression)));
        lines.join("\n")
    }
}

/// One workload's line of a Slack message: its slope or failure, ratio, class step and what its
/// contract, profile and size of interest say.
fn workload_line(w: &EventWorkload) -> String {
    let name = slack_code(&w.name);
    let name = match w.metric {
        Metric::Wall => format!("`{name}`"),
        metric => format!("`{name}` ({})", metric.label()),
    };
    let cost = (w.reason == "cost").then(|| {
        let at = w.ratio_size.and_then(|s| u64::try_from(s).ok());
        let (before, after) = (w.class_before.as_deref(), w.class_after.as_deref());
        let labels = (before.and_then(format::class_label_of_text), after.and_then(format::class_label_of_text));
        w.time_ratio.zip(at).map(|(r, size)| format::cost_change(r, size, w.size_unit, labels.0, labels.1))
    });
    if let Some(cost) = cost {
        let what = cost.unwrap_or_else(|| "cost".into());
        return format!("• {name}: {} (factor {})", slack_escape(&what), format::factor(w.threshold));
    }
    let mut line = match (&w.failure, w.slope, w.ci_low, w.ci_high) {
        (Some(f), ..) => {
            let detail = f.detail.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
            let detail: String = detail.chars().take(200).collect();
            let detail = if detail.is_empty() { String::new() } else { format!(" — {}", slack_escape(&detail)) };
            format!("• {name}: ✗ {}{detail}", slack_escape(&format::failure(f, w.size_unit)))
        }
        (None, Some(slope), Some(low), Some(high)) => {
            format!("• {name}: slope {slope:.2} (95% CI {low:.2}–{high:.2}, threshold {:.2})", w.threshold)
        }
        (None, ..) if w.reason == "failure" => format!("• {name}: runs correctly again"),
        (None, ..) => format!("• {name}"),
    };
    if let Some(prev) = w.previous_slope {
        line.push_str(&format!(", was {prev:.2}"));
    }
    if let (Some(r), Some(size)) = (w.time_ratio, w.ratio_size.and_then(|s| u64::try_from(s).ok())) {
        let what = if w.metric.is_count() { "instructions" } else { "time" };
        line.push_str(&format!("; {} the {what} at {}", format::factor(r), format::size(size, w.size_unit)));
    }
    let step = w.class_step.map(|s| s.text());
    if let Some(step) = step.or_else(|| format::class_step_of_text(w.class_before.as_deref(), w.class_after.as_deref()))
    {
        line.push_str(&format!("; {step}"));
    }
    if let Some(sentence) = &w.contract_break {
        line.push_str(&format!("\n    {}", slack_escape(sentence)));
    }
    if let Some(went) = &w.where_cost_went {
        line.push_str(&format!("\n    {}", slack_escape(&format::sentence(went))));
    }
    if let Some(cost) = &w.at_size_of_interest {
        line.push_str(&format!("\n    {}", slack_escape(&format::sentence(cost))));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::WebhookFormat;
    use slopewatch_core::complexity::Class;

    fn event() -> Event {
        Event {
            event: OPENED,
            regression_id: 3,
            lineage: "zig-cc-musl".into(),
            arch: "x86_64".into(),
            version: "0.16.0".into(),
            previous_version: Some("0.15.0".into()),
            regressed_version: "0.16.0".into(),
            last_good_version: Some("0.15.0".into()),
            magnitude: Some(9.5),
            workloads: vec![EventWorkload {
                name: "strchr<scan>".into(),
                metric: Metric::Wall,
                reason: "slope",
                threshold: 1.5,
                slope: Some(2.01),
                ci_low: Some(1.98),
                ci_high: Some(2.04),
                failure: None,
                previous_slope: Some(1.0),
                time_ratio: Some(9.5),
                ratio_size: Some(1 << 20),
                size_unit: SizeUnit::Bytes,
                class_before: Some("n".into()),
                class_after: Some("n^2".into()),
                class_changed: true,
                class_step: Some(ClassStep { from: Class::Linear, to: Class::Quadratic, shown: true }),
                contract_break: None,
                contract: None,
                at_size_of_interest: None,
                where_cost_went: None,
                series_url: "https://sw.example/series/strchr/zig-cc-musl".into(),
            }],
            links: EventLinks { regression: "https://sw.example/regressions/3".into() },
            changes: Vec::new(),
            attribution: None,
            artifacts: Vec::new(),
            causes: Default::default(),
        }
    }

    #[test]
    fn slack_messages_are_valid_and_escaped() {
        let body: serde_json::Value = serde_json::from_str(&event().render(WebhookFormat::Slack)).unwrap();
        let text = body["text"].as_str().unwrap();
        assert!(text.contains("zig-cc-musl 0.16.0") && text.contains("(after 0.15.0)"), "{text}");
        assert!(text.contains("strchr&lt;scan&gt;") && !text.contains("<scan>"), "{text}");
        assert!(text.contains("<https://sw.example/regressions/3|Open the regression>"));
        assert!(text.contains("; O(n) → O(n²)"), "{text}");
        assert_eq!(body["blocks"][0]["text"]["type"], "mrkdwn");
        let json: serde_json::Value = serde_json::from_str(&event().render(WebhookFormat::Json)).unwrap();
        assert_eq!(
            (&json["workloads"][0]["class_before"], &json["workloads"][0]["class_after"]),
            (&"n".into(), &"n^2".into())
        );
        assert_eq!(json["workloads"][0]["class_changed"], true);
    }

    #[test]
    fn a_cost_regression_is_named_so_with_its_factor_and_size() {
        let mut e = event();
        let w = &mut e.workloads[0];
        (w.reason, w.metric, w.threshold, w.time_ratio) = ("cost", Metric::InstructionsValgrind, 1.5, Some(4.2));
        (w.class_after, w.class_changed, w.class_step) = (Some("n".into()), false, None);
        let slack: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Slack)).unwrap();
        let text = slack["text"].as_str().unwrap();
        assert!(text.contains("*Cost regression in zig-cc-musl 0.16.0*"), "{text}");
        assert!(text.contains(": cost 4.20× at 1 MiB, O(n) both (factor 1.50×)"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Json)).unwrap();
        assert_eq!(
            (&json["workloads"][0]["reason"], &json["workloads"][0]["time_ratio"]),
            (&"cost".into(), &4.2.into())
        );
    }

    #[test]
    fn a_class_step_within_the_noise_is_said_so_and_not_marked_changed() {
        let mut e = event();
        e.workloads[0].class_after = Some("n log n".into());
        e.workloads[0].class_changed = false;
        e.workloads[0].class_step = Some(ClassStep { from: Class::Linear, to: Class::NLogN, shown: false });
        let slack: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Slack)).unwrap();
        let text = slack["text"].as_str().unwrap();
        assert!(text.contains("; O(n) → O(n log n), within the noise"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Json)).unwrap();
        assert_eq!(json["workloads"][0]["class_changed"], false, "{json}");
        assert!(json["workloads"][0].get("class_step").is_none(), "{json}");
    }

    #[test]
    fn each_workload_says_which_metric_it_was_found_on() {
        let mut e = event();
        e.workloads[0].metric = Metric::InstructionsValgrind;
        let json: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Json)).unwrap();
        assert_eq!(json["workloads"][0]["measure"], "instructions-valgrind", "{json}");
        let slack: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Slack)).unwrap();
        let text = slack["text"].as_str().unwrap();
        assert!(text.contains("`strchr&lt;scan&gt;` (instructions (Valgrind)): slope 2.01"), "{text}");
        assert!(text.contains("9.50× the instructions at 1 MiB"), "{text}");
        let wall: serde_json::Value = serde_json::from_str(&event().render(WebhookFormat::Json)).unwrap();
        assert_eq!(wall["workloads"][0]["measure"], "wall");
    }

    #[test]
    fn a_backtick_in_a_name_cannot_end_its_code_span() {
        let mut e = event();
        e.workloads[0].name = "scan` *bold* <!channel>".into();
        let body: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Slack)).unwrap();
        let text = body["text"].as_str().unwrap();
        let line = text.lines().find(|l| l.starts_with('•')).unwrap();
        assert_eq!(line.matches('`').count(), 2, "one code span: {line}");
        assert!(line.starts_with("• `scan\u{2cb} *bold* &lt;!channel&gt;`:"), "{line}");
    }

    #[test]
    fn a_failure_carries_its_kind_and_detail_in_json_and_escaped_in_slack() {
        let mut e = event();
        let failure: Failure = serde_json::from_value(serde_json::json!({
            "kind": "wrong_result", "size": 65536, "got": "-1", "expected": "9362",
            "detail": "wrong result: <b>-1</b> hits & more\nsecond line"
        }))
        .unwrap();
        e.workloads[0] = EventWorkload {
            reason: "failure",
            slope: None,
            ci_low: None,
            ci_high: None,
            failure: Some(failure),
            previous_slope: Some(1.0),
            time_ratio: None,
            ratio_size: None,
            ..e.workloads[0].clone()
        };
        let json: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Json)).unwrap();
        assert_eq!(json["workloads"][0]["reason"], "failure");
        assert_eq!(json["workloads"][0]["failure"]["kind"], "wrong_result");
        assert!(json["workloads"][0]["slope"].is_null());
        let slack: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Slack)).unwrap();
        let text = slack["text"].as_str().unwrap();
        assert!(text.starts_with(":rotating_light: *Failure in zig-cc-musl 0.16.0*"), "{text}");
        assert!(
            text.contains(
                "✗ wrong result at 64 KiB: got -1, expected 9362 — wrong result: &lt;b&gt;-1&lt;/b&gt; hits &amp; more"
            ),
            "{text}"
        );
        assert!(!text.contains("second line"), "one line of detail: {text}");
    }

    #[test]
    fn an_update_says_what_moved_in_json_and_slack() {
        let mut e = event();
        e.event = UPDATED;
        e.changes = vec![FieldChange { field: Field::Version, from: Some("0.17.1".into()), to: Some("0.16.0".into()) }];
        let json: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Json)).unwrap();
        assert_eq!(json["changes"], serde_json::json!([{"field": "version", "from": "0.17.1", "to": "0.16.0"}]));
        let slack: serde_json::Value = serde_json::from_str(&e.render(WebhookFormat::Slack)).unwrap();
        let text = slack["text"].as_str().unwrap();
        assert!(
            text.starts_with(":pencil2: *Slope regression in zig-cc-musl 0.16.0 updated*: first bad 0.17.1 → 0.16.0"),
            "{text}"
        );
        let opened: serde_json::Value = serde_json::from_str(&event().render(WebhookFormat::Json)).unwrap();
        assert!(opened.get("changes").is_none(), "other events carry no changes");
    }
}
