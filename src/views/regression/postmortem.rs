//! `Export as Markdown`: a regression's postmortem document, with its timeline, numbers, alert
//! deliveries, links and the team's notes.

use crate::model::{workload_label, RegressionDetail, RegressionStatus, RegressionWorkload};
use std::fmt::Write;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

fn when(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).unwrap_or_default()
}

fn num(v: Option<f64>, digits: usize) -> String {
    v.filter(|v| v.is_finite()).map_or_else(|| "–".to_string(), |v| format!("{v:.digits$}"))
}

/// Text people and agents sent (names, titles, timeline details), made inert: Markdown
/// punctuation is backslash-escaped so it cannot format, link or start a block, HTML is written
/// as entities (a renderer that passes HTML through shows it as text), and line breaks become
/// spaces so nothing starts a line of its own.
pub(crate) fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            // Text never starts a line here, so what only matters there (`#`, `-`, `1.`) is left.
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A link target: control characters, spaces and angle brackets percent-encoded, so the URL
/// stays one `<…>` destination on one line whatever was stored.
pub(crate) fn destination(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        if c.is_control() || c.is_whitespace() || c == '<' || c == '>' {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A note is Markdown, kept as such inside a quote block (so it cannot open sections of the
/// document), with its HTML written as entities.
fn quoted(body: &str) -> String {
    body.trim_end()
        .lines()
        .map(|line| {
            let line = line.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
            if line.is_empty() {
                ">".to_string()
            } else {
                format!("> {line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Table cells cannot hold line breaks; `|` is escaped with the rest.
fn cell(s: &str) -> String {
    text(s)
}

/// One line of a regression's timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Moment {
    pub at: OffsetDateTime,
    pub what: String,
    pub actor: Option<String>,
}

/// The timeline: the stored events (first run of the bad version, opened, joined, acknowledged,
/// fixing version seen, resolved, links) with each alert's first successful delivery and each
/// bisection recorded, in order.
pub fn timeline(d: &RegressionDetail) -> Vec<Moment> {
    let mut moments: Vec<Moment> =
        d.events.iter().map(|e| Moment { at: e.at, what: e.detail.clone(), actor: e.actor.clone() }).collect();
    for dd in &d.deliveries {
        if let Some(at) = dd.delivery.delivered_at {
            let what = format!("Alert {} sent to {}", dd.delivery.event, dd.delivery.target);
            moments.push(Moment { at, what, actor: None });
        }
    }
    for b in &d.bisections {
        let what = format!("Bisection on {}: {}", b.host.name, b.summary());
        moments.push(Moment { at: b.received_at, what, actor: None });
    }
    moments.sort_by_key(|m| m.at);
    moments
}

/// The "Bisection" section: each bisection's outcome, range and rule, and its steps in version
/// order with the order they were measured in.
fn bisections(md: &mut String, d: &RegressionDetail) {
    if d.bisections.is_empty() {
        return;
    }
    md.push_str("\n## Bisection\n");
    for b in &d.bisections {
        let _ = writeln!(md, "\n{}.\n", text(&crate::format::sentence(&b.summary())));
        let _ = writeln!(md, "- Range: {} → {}, {} candidates", text(&b.good), text(&b.bad), b.candidates);
        if let (Some(bad), Some(good)) = (&b.first_bad, &b.last_good) {
            let _ = writeln!(md, "- First bad: {}, last good: {}", text(bad), text(good));
        }
        let _ = writeln!(md, "- Rule: {}", text(&b.rule()));
        let _ = writeln!(
            md,
            "- Measured on {} by agent {}, started {}, {:.0} s\n",
            text(&b.host.name),
            text(&b.agent_version),
            when(b.started_at),
            b.seconds
        );
        md.push_str("| Version | Verdict | Slope | Workload | Seconds | # | Note |\n");
        md.push_str("|---|---|---:|---|---:|---:|---|\n");
        for s in &b.steps {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {:.1} | {} | {} |",
                cell(&s.version),
                s.verdict.as_str(),
                num(s.slope, 2),
                cell(s.workload.as_deref().unwrap_or("–")),
                s.seconds,
                s.position,
                cell(s.note.as_deref().unwrap_or("")),
            );
        }
    }
}

/// The postmortem of one regression as a Markdown document.
pub fn export(d: &RegressionDetail) -> String {
    let r = &d.regression;
    let status = RegressionStatus::label_of(&r.status);
    let mut md = String::new();
    let kind = r.kind();
    let _ = writeln!(md, "# {} #{}: {} {}\n", kind.title(), r.id, text(&r.lineage), text(&r.version));
    let _ = writeln!(md, "- Status: {status}");
    let _ = writeln!(md, "- Toolchain lineage: {}", text(&r.lineage));
    let _ = writeln!(md, "- {}", text(&d.arch.sentence()));
    match &r.previous_version {
        Some(good) => {
            let _ = writeln!(md, "- Last good version: {}", text(good));
            let _ = writeln!(md, "- First bad version: {}", text(&r.version));
        }
        None => {
            let _ = writeln!(md, "- Over at {}, the first version measured: nothing to bisect", text(&r.version));
        }
    }
    let _ = writeln!(md, "- Fixed in: {}", text(r.fixed_version.as_deref().unwrap_or("not yet")));
    let magnitude = r.magnitude.map_or_else(|| "–".to_string(), crate::format::factor);
    let _ = writeln!(md, "- Magnitude: {magnitude} the time (or count) at the largest common size\n");

    md.push_str(&super::causes::markdown(&d.causes, text));
    if let Some(a) = &d.attribution {
        md.push_str(&crate::views::control::markdown(a, text));
    }
    if !d.where_cost_went.is_empty() {
        md.push_str("## Where the cost went\n\n");
        for w in &d.where_cost_went {
            let against = w.good_version.as_deref().map_or_else(
                || format!("{} alone: no profile of the last good version", w.bad_version),
                |good| format!("{} against {good}", w.bad_version),
            );
            let _ = writeln!(md, "- {}: {} ({})", text(&w.workload), text(&w.sentence()), text(&against));
        }
        md.push('\n');
    }
    if !d.artifacts.is_empty() {
        md.push_str(&crate::views::exposures::reaches_markdown(&d.artifacts, text));
    }
    md.push_str("## Timeline\n\n");
    for m in timeline(d) {
        let by = m.actor.map(|a| format!(" ({})", text(&a))).unwrap_or_default();
        let _ = writeln!(md, "- {}: {}{by}", when(m.at), text(&m.what));
    }

    md.push_str("\n## Numbers\n\n");
    md.push_str(
        "| Workload | Class before | Class after | Slope before | Slope | 95% CI | R² | Ratio | At size | Fixed slope | Measure |\n",
    );
    md.push_str("|---|---|---|---:|---:|---|---:|---:|---:|---:|---|\n");
    for w in d.workloads.iter().filter(|w| !w.is_failure()) {
        let class = |c: &Option<String>| c.as_deref().and_then(crate::format::class_label_of_text).unwrap_or("–");
        let ci = match (w.ci_low, w.ci_high) {
            (Some(low), Some(high)) => format!("{low:.2}–{high:.2}"),
            _ => "–".to_string(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {ci} | {} | {} | {} | {} | {} |",
            cell(&w.workload),
            class(&w.class_before),
            class(&w.class_after),
            num(w.previous_slope, 2),
            num(w.slope, 2),
            num(w.r2, 3),
            w.time_ratio.map_or_else(|| "–".to_string(), crate::format::factor),
            w.ratio_size_text().unwrap_or_else(|| "–".to_string()),
            num(w.fixed_slope, 2),
            w.metric.label(),
        );
    }
    let failures: Vec<&RegressionWorkload> = d.workloads.iter().filter(|w| w.is_failure()).collect();
    if !failures.is_empty() {
        md.push_str("\n## Failures\n\n");
        for w in failures {
            let what = w.failure_summary().unwrap_or_else(|| "failed".to_string());
            let fixed = w.fixed_version.as_ref().map(|v| format!("; passes again at {}", text(v))).unwrap_or_default();
            let _ = writeln!(md, "- {}: {}{fixed}", text(&workload_label(&w.workload, w.metric)), text(&what));
            if let Some(detail) = w.failure.as_ref().map(|f| f.detail.as_str()).filter(|d| !d.trim().is_empty()) {
                md.push('\n');
                for line in detail.lines() {
                    let _ = writeln!(md, "    {line}");
                }
                md.push('\n');
            }
        }
    }

    bisections(&mut md, d);

    if !d.deliveries.is_empty() {
        md.push_str("\n## Alerts\n\n");
        for dd in &d.deliveries {
            let del = &dd.delivery;
            let _ = writeln!(
                md,
                "- {} to {}: {} after {} attempt(s){}",
                text(&del.event),
                text(&del.target),
                del.status,
                del.attempts,
                del.delivered_at.map(|t| format!(", delivered {}", when(t))).unwrap_or_default()
            );
        }
    }

    if !d.links.is_empty() {
        md.push_str("\n## Links\n\n");
        for l in &d.links {
            let _ = writeln!(md, "- [{}](<{}>)", text(&l.title), destination(&l.url));
        }
    }

    md.push_str("\n## Notes\n");
    if d.notes.is_empty() {
        md.push_str("\nNo notes.\n");
    }
    for n in &d.notes {
        let _ = writeln!(md, "\n### {} by {}\n\n{}", when(n.at), text(&n.author), quoted(&n.body));
    }
    md
}
