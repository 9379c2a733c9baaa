//! A regression's root causes as its page and its postmortem show them: each function that broke,
//! worst first, with its break in words, a link to its probe, the workloads that trace to it and
//! the artifacts that call it; then the workloads that trace to none.

use crate::links;
use crate::model::{CausedWorkload, RootCause, RootCauses, Via};
use slopewatch_core::workloads::Group;
use std::fmt::Write;

/// One cause on the page.
pub struct CauseView {
    pub function: String,
    /// `over_contract`, `wrong_result`, …: the page's class for it.
    pub kind: &'static str,
    /// "over its contract", "wrong result", …
    pub label: &'static str,
    /// The function broke, rather than a cost landing in it.
    pub broke: bool,
    pub sentence: String,
    /// The probe (or loop) that shows the break, and its series page.
    pub probe: Option<(String, String)>,
    pub workloads: Vec<CausedView>,
    /// "api-server (4 sites), worker (referenced)"; empty when no stored scan calls it.
    pub artifacts: String,
}

/// A workload under a cause, or unattributed, on the page.
pub struct CausedView {
    pub workload: String,
    pub url: String,
    /// "your team's", "probe", "loop", "97 % of the added cost", "partly, 32 %".
    pub note: String,
}

impl CausedView {
    fn new(w: &CausedWorkload, lineage: &str, public_url: Option<&str>) -> CausedView {
        let share = w.share.map(|s| format!("{:.0} %", s * 100.0));
        let how = match (w.via, share) {
            (Some(Via::Probe), _) => Some("probe".to_string()),
            (Some(Via::Loop), _) => Some("its loop".to_string()),
            (Some(Via::Profile), Some(s)) if w.partly => Some(format!("partly, {s} by its profile")),
            (Some(Via::Profile), Some(s)) => Some(format!("{s} by its profile")),
            _ => None,
        };
        let team = (w.group == Group::Team).then(|| "your team's".to_string());
        CausedView {
            workload: w.workload.clone(),
            url: links::absolute(public_url, &links::series(&w.workload, lineage, w.metric)),
            note: team.into_iter().chain(how).collect::<Vec<_>>().join(", "),
        }
    }
}

impl CauseView {
    fn new(c: &RootCause, lineage: &str, public_url: Option<&str>) -> CauseView {
        CauseView {
            function: c.function.clone(),
            kind: c.kind.as_str(),
            label: c.kind.label(),
            broke: c.kind.is_break(),
            sentence: c.sentence.clone(),
            probe: c.probe.clone().zip(c.probe_url.as_deref().map(|u| links::absolute(public_url, u))),
            workloads: c.workloads.iter().map(|w| CausedView::new(w, lineage, public_url)).collect(),
            artifacts: c.artifacts.join(", "),
        }
    }
}

/// The page's causes and the workloads that trace to none.
pub fn views(causes: &RootCauses, lineage: &str, public_url: Option<&str>) -> (Vec<CauseView>, Vec<CausedView>) {
    (
        causes.root_causes.iter().map(|c| CauseView::new(c, lineage, public_url)).collect(),
        causes.unattributed.iter().map(|w| CausedView::new(w, lineage, public_url)).collect(),
    )
}

/// The postmortem's section on the causes; `text` escapes what it quotes.
pub fn markdown(causes: &RootCauses, text: impl Fn(&str) -> String) -> String {
    if causes.is_empty() {
        return String::new();
    }
    let mut md = String::from("## Root causes\n\n");
    if let Some(headline) = causes.headline() {
        let _ = writeln!(md, "It {}.\n", text(&headline));
    }
    for c in &causes.root_causes {
        let _ = writeln!(md, "- {}", c.line(&text, &text));
    }
    if !causes.unattributed.is_empty() {
        let names: Vec<String> = causes.unattributed.iter().map(|w| text(&w.workload)).collect();
        let _ = writeln!(md, "- Traced to no cause: {}", names.join(", "));
    }
    md.push('\n');
    md
}
