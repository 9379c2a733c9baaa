//! The `[alerts]` and `[[webhooks]]` sections of the config file, and what the running server
//! makes of them: the alert rules, the webhook targets and the retry pacing. Webhook targets come
//! only from here, so no API caller can make the server call a URL of its choosing.

use serde::Deserialize;
use slopewatch_core::verdict::{NoiseRule, DEFAULT_MAX_SLOPE};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// `[alerts]` as written in the config file.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct AlertsSection {
    /// What opens a regression: the slope threshold (`"slope"`), a step up of the complexity
    /// class (`"class"`), or either (`"either"`).
    pub rule: AlertRule,
    /// A version's slope above this is a regression (time ∝ size^k; 1 is linear, 2 quadratic).
    pub threshold: f64,
    /// Per-workload thresholds, overriding `threshold`: `[alerts.workloads] "name" = 1.3`.
    pub workloads: BTreeMap<String, f64>,
    /// Pages band a slope above this as worth watching, short of a regression; below every
    /// threshold.
    pub watch_from: f64,
    /// A slope is only trusted when the fit spans at least this many sizes.
    pub min_sizes: usize,
    /// A slope is only trusted when the log-log line explains at least this share of the variance.
    pub min_r2: f64,
    /// The 95% interval's lower bound must be above `threshold - ci_margin`: the data has to rule
    /// out growth well below the threshold, not merely put the point estimate above it.
    pub ci_margin: f64,
    /// The cost rule, on counted measures: a count that rises more than `cost_factor` times at
    /// the largest size two consecutive versions share, on the same source, opens a regression.
    pub cost: bool,
    /// How far a count may rise from one version to the next before the cost rule opens.
    pub cost_factor: f64,
    /// Per-workload cost factors, overriding `cost_factor`: `[alerts.cost_factors] "name" = 3.0`.
    pub cost_factors: BTreeMap<String, f64>,
    /// The cost rule on wall and CPU time too, judged by a workload's time over the control the
    /// agent measured beside it (`--control`); off by default, as a time moves with the host.
    pub cost_on_times: bool,
    /// A version whose workload ran the very build the version before ran (the same build hash)
    /// opens nothing for it: the code did not change. `false` judges it anyway.
    pub skip_unchanged_builds: bool,
    /// First retry after this many milliseconds; each further retry waits twice as long.
    pub retry_base_ms: u64,
    /// Longest wait between two attempts, in milliseconds.
    pub retry_max_ms: u64,
    /// A delivery is given up this many seconds after it was written.
    pub retry_for_secs: u64,
    /// How often the outbox is checked for due deliveries, in milliseconds.
    pub poll_ms: u64,
    /// How long one delivery attempt may take, in milliseconds.
    pub timeout_ms: u64,
}

impl Default for AlertsSection {
    fn default() -> Self {
        AlertsSection {
            rule: AlertRule::default(),
            threshold: DEFAULT_MAX_SLOPE,
            workloads: BTreeMap::new(),
            watch_from: DEFAULT_WATCH_FROM,
            min_sizes: NoiseRule::default().min_sizes,
            min_r2: NoiseRule::default().min_r2,
            ci_margin: NoiseRule::default().ci_margin,
            cost: true,
            cost_factor: 1.5,
            cost_factors: BTreeMap::new(),
            cost_on_times: false,
            skip_unchanged_builds: true,
            retry_base_ms: 5_000,
            retry_max_ms: 3_600_000,
            retry_for_secs: 24 * 3600,
            poll_ms: 1_000,
            timeout_ms: 10_000,
        }
    }
}

/// Where pages start to band a slope as worth watching, unless `[alerts] watch_from` says.
pub const DEFAULT_WATCH_FROM: f64 = 1.2;

/// What opens and resolves a regression (docs/alerts.md).
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum AlertRule {
    /// The slope against its threshold, with the noise rule.
    #[default]
    Slope,
    /// The complexity class: a step up into O(n²) or O(n³), or from O(n²) to O(n³).
    Class,
    /// Over when either rule says so; under when neither is over and one of them is under.
    Either,
}

/// How a webhook body is shaped.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum WebhookFormat {
    /// slopewatch's own JSON event.
    #[default]
    Json,
    /// A Slack incoming-webhook message.
    Slack,
}

impl WebhookFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookFormat::Json => "json",
            WebhookFormat::Slack => "slack",
        }
    }
}

/// One `[[webhooks]]` entry.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct WebhookSection {
    pub name: String,
    pub url: String,
    /// Key of the HMAC-SHA256 signature the receiver checks.
    pub secret: String,
    #[serde(default)]
    pub format: WebhookFormat,
}

/// When a workload's version slope counts as a regression.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    pub rule: AlertRule,
    pub threshold: f64,
    pub per_workload: BTreeMap<String, f64>,
    /// A slope above this, short of a regression, is banded as worth watching on pages.
    pub watch_from: f64,
    pub min_sizes: usize,
    pub min_r2: f64,
    pub ci_margin: f64,
    /// The cost rule's factors, `None` when it is off.
    pub cost: Option<CostRule>,
    /// Whether a version that ran the previous version's very build opens nothing.
    pub skip_unchanged_builds: bool,
    /// Whether the cost rule judges times too, over the control measured beside them.
    pub cost_on_times: bool,
}

/// How far a count may rise from one version to the next: a factor, and factors per workload.
#[derive(Debug, Clone, PartialEq)]
pub struct CostRule {
    pub factor: f64,
    pub per_workload: BTreeMap<String, f64>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules::from(&AlertsSection::default())
    }
}

impl From<&AlertsSection> for Rules {
    fn from(s: &AlertsSection) -> Self {
        Rules {
            rule: s.rule,
            threshold: s.threshold,
            per_workload: s.workloads.clone(),
            watch_from: s.watch_from,
            min_sizes: s.min_sizes,
            min_r2: s.min_r2,
            ci_margin: s.ci_margin,
            cost: s.cost.then(|| CostRule { factor: s.cost_factor, per_workload: s.cost_factors.clone() }),
            skip_unchanged_builds: s.skip_unchanged_builds,
            cost_on_times: s.cost_on_times,
        }
    }
}

/// How the outbox worker paces its attempts.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    pub base: Duration,
    pub max_delay: Duration,
    pub give_up_after: Duration,
    pub poll: Duration,
    pub timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::from(&AlertsSection::default())
    }
}

impl From<&AlertsSection> for RetryPolicy {
    fn from(s: &AlertsSection) -> Self {
        RetryPolicy {
            base: Duration::from_millis(s.retry_base_ms),
            max_delay: Duration::from_millis(s.retry_max_ms),
            give_up_after: Duration::from_secs(s.retry_for_secs),
            poll: Duration::from_millis(s.poll_ms),
            timeout: Duration::from_millis(s.timeout_ms),
        }
    }
}

/// A webhook target, checked at start-up.
#[derive(Clone, PartialEq)]
pub struct Webhook {
    pub name: String,
    pub url: url::Url,
    pub secret: String,
    pub format: WebhookFormat,
}

impl fmt::Debug for WebhookSection {
    /// Leaves the secret out, so config dumps in logs do not leak it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookSection").field("name", &self.name).field("url", &self.url).finish_non_exhaustive()
    }
}

impl fmt::Debug for Webhook {
    /// Leaves the secret out, so config dumps in logs do not leak it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Webhook")
            .field("name", &self.name)
            .field("url", &self.url.as_str())
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

/// Everything about alerting that the running server needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlertSettings {
    pub rules: Rules,
    pub webhooks: Vec<Webhook>,
    pub retry: RetryPolicy,
}

impl AlertSettings {
    /// Checks the file's sections and turns them into settings; errors name the offending key.
    pub fn from_file(alerts: &AlertsSection, webhooks: &[WebhookSection]) -> anyhow::Result<AlertSettings> {
        let valid_threshold = |t: f64| t.is_finite() && t > 0.0;
        if !valid_threshold(alerts.threshold) {
            anyhow::bail!("[alerts] threshold must be a positive number");
        }
        if let Some((name, _)) = alerts.workloads.iter().find(|(_, t)| !valid_threshold(**t)) {
            anyhow::bail!("[alerts.workloads] {name:?} must be a positive number");
        }
        let lowest = alerts.workloads.values().copied().fold(alerts.threshold, f64::min);
        if !alerts.watch_from.is_finite() || alerts.watch_from >= lowest {
            anyhow::bail!("[alerts] watch_from must be a number below every threshold (the lowest is {lowest})");
        }
        let valid_factor = |f: f64| f.is_finite() && f > 1.0;
        if !valid_factor(alerts.cost_factor) {
            anyhow::bail!("[alerts] cost_factor must be a number above 1");
        }
        if let Some((name, _)) = alerts.cost_factors.iter().find(|(_, f)| !valid_factor(**f)) {
            anyhow::bail!("[alerts.cost_factors] {name:?} must be a number above 1");
        }
        if alerts.min_sizes < 3 {
            anyhow::bail!("[alerts] min_sizes must be at least 3: a fit needs three sizes");
        }
        if !(0.0..=1.0).contains(&alerts.min_r2) {
            anyhow::bail!("[alerts] min_r2 must be between 0 and 1");
        }
        if !alerts.ci_margin.is_finite() || alerts.ci_margin < 0.0 {
            anyhow::bail!("[alerts] ci_margin must be zero or positive");
        }
        if alerts.retry_base_ms == 0 || alerts.poll_ms == 0 || alerts.timeout_ms == 0 {
            anyhow::bail!("[alerts] retry_base_ms, poll_ms and timeout_ms must be positive");
        }
        let mut targets: Vec<Webhook> = Vec::with_capacity(webhooks.len());
        for (i, w) in webhooks.iter().enumerate() {
            let name = w.name.trim();
            if name.is_empty() || name.len() > 64 || name.chars().any(char::is_control) {
                anyhow::bail!("[[webhooks]] #{} name must be 1 to 64 printable characters", i + 1);
            }
            if targets.iter().any(|t| t.name == name) {
                anyhow::bail!("[[webhooks]] name {name:?} is used twice");
            }
            let url = url::Url::parse(&w.url).map_err(|e| anyhow::anyhow!("[[webhooks]] {name:?} url: {e}"))?;
            if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
                anyhow::bail!("[[webhooks]] {name:?} url must be an http or https URL");
            }
            if w.secret.len() < 16 {
                anyhow::bail!("[[webhooks]] {name:?} secret must be at least 16 characters");
            }
            targets.push(Webhook { name: name.to_string(), url, secret: w.secret.clone(), format: w.format });
        }
        Ok(AlertSettings { rules: Rules::from(alerts), webhooks: targets, retry: RetryPolicy::from(alerts) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(toml_text: &str) -> (AlertsSection, Vec<WebhookSection>) {
        #[derive(Deserialize)]
        struct File {
            #[serde(default)]
            alerts: AlertsSection,
            #[serde(default)]
            webhooks: Vec<WebhookSection>,
        }
        let f: File = toml::from_str(toml_text).unwrap();
        (f.alerts, f.webhooks)
    }

    #[test]
    fn thresholds_and_targets_are_read_from_the_file() {
        let (a, w) = section(
            r#"
            [alerts]
            rule = "either"
            threshold = 1.4
            [alerts.workloads]
            "strchr-scan" = 1.3
            [[webhooks]]
            name = "ops"
            url = "https://hooks.example.com/x"
            secret = "0123456789abcdef"
            format = "slack"
            "#,
        );
        let s = AlertSettings::from_file(&a, &w).unwrap();
        assert_eq!(s.rules.threshold, 1.4);
        assert_eq!(s.rules.rule, AlertRule::Either);
        assert_eq!(Rules::default().rule, AlertRule::Slope, "the slope rule unless another is chosen");
        assert_eq!(s.rules.per_workload["strchr-scan"], 1.3);
        assert_eq!(s.webhooks[0].format, WebhookFormat::Slack);
        assert!(!format!("{s:?}").contains("0123456789abcdef"), "secrets stay out of Debug");
    }

    #[test]
    fn watch_from_must_be_below_every_threshold() {
        let (a, w) = section("[alerts]\nwatch_from = 1.25\n[alerts.workloads]\nstrcspn = 2.5\n");
        assert_eq!(AlertSettings::from_file(&a, &w).unwrap().rules.watch_from, 1.25);
        let (a, w) = section("[alerts]\nthreshold = 1.3\nwatch_from = 1.3\n");
        let e = AlertSettings::from_file(&a, &w).unwrap_err().to_string();
        assert!(e.contains("[alerts] watch_from") && e.contains("1.3"), "{e}");
        let (a, w) = section("[alerts]\n[alerts.workloads]\nstrchr = 1.1\n");
        assert!(AlertSettings::from_file(&a, &w).unwrap_err().to_string().contains("watch_from"));
    }

    #[test]
    fn webhook_targets_must_be_http_urls_with_real_secrets() {
        let bad = [
            ("file:///etc/passwd", "0123456789abcdef"),
            ("not a url", "0123456789abcdef"),
            ("https://hooks.example.com/x", "short"),
        ];
        for (url, secret) in bad {
            let w = WebhookSection {
                name: "t".into(),
                url: url.into(),
                secret: secret.into(),
                format: WebhookFormat::Json,
            };
            assert!(AlertSettings::from_file(&AlertsSection::default(), &[w]).is_err(), "{url} {secret}");
        }
    }
}
