//! Where the cost went, drawn: a row per function, its own instructions at the last good version
//! (green) and at the first bad one (red) as bars on one scale, worst added first, so the function
//! that took the cost stands out at a glance. Small plain SVG, drawn here; no script.

use super::{escape, shorten};
use crate::format;
use slopewatch_core::profile::CostShift;
use std::fmt::Write;

const WIDTH: f64 = 560.0;
const ROW: f64 = 26.0;
const LABEL: f64 = 180.0;
const VALUE: f64 = 70.0;
const PAD: f64 = 8.0;
const BEFORE: &str = "#1a7f37";
const AFTER: &str = "#c0262d";

/// The bars of `shift`, titled for screen readers with `title`.
pub fn svg(shift: &CostShift, title: &str) -> String {
    let rows = &shift.functions;
    let height = PAD * 2.0 + ROW * rows.len() as f64 + 18.0;
    let most = rows.iter().flat_map(|f| [f.before, f.after]).flatten().max().unwrap_or(1).max(1) as f64;
    let span = WIDTH - LABEL - VALUE - PAD * 2.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"sw-cost-bars\" role=\"img\" viewBox=\"0 0 {WIDTH} {height}\" \
         width=\"{WIDTH}\" height=\"{height}\"><title>{}</title>",
        escape(title)
    );
    for (i, f) in rows.iter().enumerate() {
        let y = PAD + ROW * i as f64;
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"12\">{}</text>",
            LABEL - 6.0,
            y + 15.0,
            escape(&shorten(&f.name, 26))
        );
        for (k, (value, colour)) in [(f.before, BEFORE), (f.after, AFTER)].into_iter().enumerate() {
            let Some(v) = value else { continue };
            let w = (v as f64 / most * span).max(1.0);
            let _ = write!(
                svg,
                "<rect x=\"{LABEL}\" y=\"{}\" width=\"{w:.1}\" height=\"10\" fill=\"{colour}\"><title>{}</title></rect>",
                y + 2.0 + 11.0 * k as f64,
                escape(&format!("{}: {} instructions", if k == 0 { "before" } else { "after" }, format::count(v as f64)))
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>",
            WIDTH - VALUE,
            y + 15.0,
            escape(&f.after.map_or_else(|| "–".into(), |v| format::count(v as f64)))
        );
    }
    let legend_y = height - 6.0;
    let _ = write!(
        svg,
        "<rect x=\"{LABEL}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{BEFORE}\"/><text x=\"{}\" y=\"{legend_y}\" font-size=\"11\">last good</text>\
         <rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{AFTER}\"/><text x=\"{}\" y=\"{legend_y}\" font-size=\"11\">first bad</text></svg>",
        legend_y - 9.0,
        LABEL + 14.0,
        LABEL + 90.0,
        legend_y - 9.0,
        LABEL + 104.0
    );
    svg
}
