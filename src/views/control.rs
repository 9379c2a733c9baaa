//! A regression's attribution by the control lineages, as its page, its JSON and its postmortem
//! show it: worked out on read from the stored summaries and the control's runs, so control runs
//! that arrive after the regression opened bring it up to date (without a second alert: the
//! webhook carries the attribution as it stood when it was sent).

use crate::config::Config;
use crate::model::control::ControlCheck;
use crate::model::workload_label;
use crate::rules::control::check;
use crate::store::Store;

/// Regression `id`'s attribution, or `None` when no control is configured (or the regression has
/// no summaries to give it a period).
pub async fn of(store: &Store, id: i64, config: &Config) -> Result<Option<ControlCheck>, sqlx::Error> {
    if config.controls.is_empty() {
        return Ok(None);
    }
    let Some((regressed, runs)) = store.control_evidence(id, &config.controls).await? else { return Ok(None) };
    let rules = &config.alerts.rules;
    Ok(Some(check(&regressed, &config.controls, &runs, rules)))
}

/// An attribution as a regression's page shows it.
pub struct ControlCheckView {
    /// `toolchain`, `code`, `host_or_harness` or `unknown`, for the page's class.
    pub verdict: &'static str,
    /// "the toolchain", "the code", …
    pub label: &'static str,
    pub sentence: String,
    /// The period and hosts its control runs were measured in and on.
    pub basis: String,
    /// Each workload's own, when there are several.
    pub workloads: Vec<(String, &'static str, String)>,
}

impl ControlCheckView {
    pub fn new(a: &ControlCheck) -> ControlCheckView {
        let hosts = if a.hosts.is_empty() { "no host".to_string() } else { a.hosts.join(", ") };
        ControlCheckView {
            verdict: a.verdict.as_str(),
            label: a.verdict.label(),
            sentence: crate::format::sentence(&a.sentence),
            basis: format!(
                "Control runs of {} measured from {} to {} (the last good version's first run to the first bad \
                 version's latest run), on {hosts}.",
                a.control.as_deref().unwrap_or("no control"),
                crate::format::timestamp(a.from),
                crate::format::timestamp(a.to),
            ),
            workloads: if a.workloads.len() > 1 {
                a.workloads
                    .iter()
                    .map(|w| (workload_label(&w.workload, w.metric), w.verdict.label(), w.sentence.clone()))
                    .collect()
            } else {
                Vec::new()
            },
        }
    }
}

/// The postmortem's "Attribution" section; `text` escapes what it quotes for Markdown.
pub fn markdown(a: &ControlCheck, text: impl Fn(&str) -> String) -> String {
    let view = ControlCheckView::new(a);
    let mut md = format!("## Attribution\n\n**Who moved: {}.** {}.\n\n", view.label, text(&view.sentence));
    for (workload, label, sentence) in &view.workloads {
        md.push_str(&format!("- {}, {label}: {}\n", text(workload), text(sentence)));
    }
    if !view.workloads.is_empty() {
        md.push('\n');
    }
    md.push_str(&format!("{}\n\n", text(&view.basis)));
    md
}
