//! Charts as pure functions from views to SVG text: no database and no clock inside, so they are
//! unit-tested here and the dashboard's are cached by a hash of their input.
//!
//! A chart drawn with plotters ends in `finish`, which gives it a `<title>`, a `<desc>` (its text
//! alternative) and invisible hover targets whose `<title>` gives each point's values when the SVG
//! is inlined in a page.

mod before_after;
mod cost_bars;
mod loglog;
mod slope;
mod trend;

pub use before_after::{before_after_chart, Failed, VersionLine};
pub use cost_bars::svg as cost_bars_svg;
pub use loglog::{loglog_chart, loglog_description};
pub use slope::{slope_chart, slope_description};
pub use trend::{trend_description, trend_svg};

use plotters::style::{FontFamily, RGBColor};
use std::fmt::Write;

/// Why a chart could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("nothing to draw: {0}")]
    Empty(&'static str),
    #[error("drawing the chart failed: {0}")]
    Draw(String),
}

impl<E: std::error::Error + Send + Sync> From<plotters::drawing::DrawingAreaErrorKind<E>> for ChartError {
    fn from(e: plotters::drawing::DrawingAreaErrorKind<E>) -> Self {
        ChartError::Draw(e.to_string())
    }
}

/// The page's font stack, so chart text matches the page around it.
const FONT: FontFamily<'static> = FontFamily::Name("system-ui, -apple-system, Segoe UI, Roboto, sans-serif");

const INK: RGBColor = RGBColor(0x1d, 0x23, 0x2b);
const MUTED: RGBColor = RGBColor(0x5b, 0x66, 0x73);
const GRID: RGBColor = RGBColor(0xe6, 0xea, 0xee);
const REFERENCE: RGBColor = RGBColor(0x8a, 0x94, 0x9e);
const ALERT: RGBColor = RGBColor(0xc0, 0x26, 0x2d);
const ALERT_ZONE: RGBColor = RGBColor(0xfd, 0xf0, 0xf0);
const LINEAR: RGBColor = RGBColor(0x1a, 0x7f, 0x37);
const WATCH: RGBColor = RGBColor(0x9a, 0x67, 0x00);
/// Line colours that stay apart for colour-blind readers (Okabe–Ito); markers differ too.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xb2),
    RGBColor(0xd5, 0x5e, 0x00),
    RGBColor(0x00, 0x9e, 0x73),
    RGBColor(0xcc, 0x79, 0xa7),
    RGBColor(0x56, 0xb4, 0xe9),
    RGBColor(0xe6, 0x9f, 0x00),
    RGBColor(0x00, 0x00, 0x00),
];

/// A point's values, shown on hover.
struct Hit {
    x: i32,
    y: i32,
    text: String,
}

/// The style sheet inside every chart, which highlights the point under the pointer. Pages allow
/// it by its hash in their Content-Security-Policy, as charts are inlined into them.
pub const HOVER_STYLE: &str = ".hit{fill:transparent;cursor:crosshair}.hit:hover{fill:rgba(29,35,43,.18)}";

/// Adds the title, the text alternative and the hover targets to plotters' SVG.
fn finish(mut svg: String, title: &str, desc: &str, hits: &[Hit]) -> String {
    let Some(open_end) = svg.find('>') else { return svg };
    let mut head = format!(
        " role=\"img\" aria-label=\"{}\"><title>{}</title><desc>{}</desc>",
        escape(title),
        escape(title),
        escape(desc)
    );
    head.push_str("<style>");
    head.push_str(HOVER_STYLE);
    head.push_str("</style>");
    svg.replace_range(open_end..=open_end, &head);
    let mut targets = String::from("<g class=\"hits\">");
    for hit in hits {
        let _ = write!(
            targets,
            "<circle class=\"hit\" cx=\"{}\" cy=\"{}\" r=\"9\"><title>{}</title></circle>",
            hit.x,
            hit.y,
            escape(&hit.text)
        );
    }
    targets.push_str("</g>");
    match svg.rfind("</svg>") {
        Some(close) => svg.insert_str(close, &targets),
        None => svg.push_str(&targets),
    }
    svg
}

/// Text made safe inside SVG/XML elements and attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Long version strings shortened for an axis label.
fn shorten(label: &str, max_chars: usize) -> String {
    if label.chars().count() <= max_chars {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(max_chars - 1).collect();
        s.push('…');
        s
    }
}

/// At most `max` of `items`, evenly spread, always keeping the first and the last.
fn thin<T: Copy>(items: &[T], max: usize) -> Vec<T> {
    if items.len() <= max || max < 2 {
        return items.to_vec();
    }
    let stride = (items.len() - 1).div_ceil(max - 1);
    let mut out: Vec<T> = items.iter().copied().step_by(stride).collect();
    if (items.len() - 1) % stride != 0 {
        out.push(items[items.len() - 1]);
    }
    out
}

#[cfg(test)]
mod test_support {
    /// The SVG's elements named `tag`, as their opening text.
    pub fn elements<'a>(svg: &'a str, tag: &str) -> Vec<&'a str> {
        let open = format!("<{tag}");
        svg.match_indices(&open)
            .filter(|(i, _)| svg[i + open.len()..].starts_with([' ', '>', '/']))
            .map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap_or(0) + 1])
            .collect()
    }

    /// The text of every `<text>` element, trimmed.
    pub fn texts(svg: &str) -> Vec<&str> {
        svg.split("<text").skip(1).map(|t| t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].trim()).collect()
    }

    /// Checks the SVG is one well-formed document: every opened element closed, in order.
    pub fn assert_well_formed(svg: &str) {
        let mut stack: Vec<String> = Vec::new();
        let mut rest = svg;
        while let Some(start) = rest.find('<') {
            let end = rest[start..].find('>').expect("unterminated tag") + start;
            let tag = &rest[start + 1..end];
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop().as_deref(), Some(name.trim()), "mismatched </{name}>");
            } else if !tag.ends_with('/') && !tag.starts_with('?') && !tag.starts_with('!') {
                stack.push(tag.split_whitespace().next().unwrap_or("").to_string());
            }
            rest = &rest[end + 1..];
        }
        assert!(stack.is_empty(), "unclosed elements: {stack:?}");
        assert!(!svg.contains("<script"), "no raw markup from data");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_the_ends_and_spreads_the_rest() {
        let all: Vec<usize> = (0..30).collect();
        let some = thin(&all, 8);
        assert!(some.len() <= 8, "{some:?}");
        assert_eq!((some[0], *some.last().unwrap()), (0, 29));
        assert_eq!(thin(&[1, 2, 3], 8), [1, 2, 3]);
    }

    #[test]
    fn finishing_adds_an_escaped_title_description_and_hover_targets() {
        let svg = "<svg width=\"10\" height=\"10\" xmlns=\"http://www.w3.org/2000/svg\"><line/></svg>".to_string();
        let hits = [Hit { x: 1, y: 2, text: "a<b & \"c\"".into() }];
        let out = finish(svg, "T <script>", "D & more", &hits);
        test_support::assert_well_formed(&out);
        assert!(out.contains("<title>T &lt;script&gt;</title>"));
        assert!(out.contains("<desc>D &amp; more</desc>"));
        assert!(out.contains("<title>a&lt;b &amp; &quot;c&quot;</title>"));
        assert!(out.contains("role=\"img\""));
        assert_eq!(shorten("0.17.0-dev.1234+abcdef", 10), "0.17.0-de…");
    }
}
