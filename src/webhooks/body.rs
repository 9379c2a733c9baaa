//! A webhook's body: the event as JSON, or its summary as a Slack message, rendered one way for
//! every event. Bodies are rendered once, when the delivery rows are written, so every retry
//! sends the same bytes under the same delivery id.

use crate::config::{Webhook, WebhookFormat};
use crate::store::NewDelivery;
use serde::Serialize;

/// An event a webhook announces: its JSON body is the event itself, its Slack body a summary.
pub trait Body: Serialize {
    /// The event's name, e.g. `regression.opened`.
    fn event(&self) -> &'static str;

    /// The regression it is about.
    fn regression_id(&self) -> i64;

    /// The Slack message, as mrkdwn with what people and agents sent escaped.
    fn slack_text(&self) -> String;

    /// The body sent to a target of the given format.
    fn render(&self, format: WebhookFormat) -> String {
        match format {
            WebhookFormat::Json => serde_json::to_string(self).expect("events serialize"),
            WebhookFormat::Slack => {
                let text = self.slack_text();
                serde_json::json!({
                    "text": text,
                    "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}],
                })
                .to_string()
            }
        }
    }
}

/// A delivery of each event to each target, in that order, each rendered for its target.
pub fn deliveries<'t>(events: &[impl Body], targets: &'t [Webhook]) -> Vec<NewDelivery<'t>> {
    events
        .iter()
        .flat_map(|event| {
            targets.iter().map(move |target| NewDelivery {
                regression_id: event.regression_id(),
                event: event.event(),
                target: &target.name,
                body: event.render(target.format),
            })
        })
        .collect()
}

/// Text inside a code span: mrkdwn has no escape for a backtick there, so it becomes a modifier
/// grave accent (ˋ) that looks the same and cannot end the span.
pub(super) fn slack_code(s: &str) -> String {
    slack_escape(s).replace('`', "\u{2cb}")
}

/// Slack's mrkdwn treats `&`, `<` and `>` as control characters.
pub(super) fn slack_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
