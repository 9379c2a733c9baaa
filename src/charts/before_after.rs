//! The before/after chart of a regression's retrospective: time (or instructions, for a count
//! metric) against size on log-log axes, one line per version, so a steeper line is visibly a
//! steeper growth.

use super::escape;
use crate::model::SizeMedian;
use slopewatch_core::wire::Metric;
use std::fmt::Write;

const WIDTH: f64 = 360.0;
const HEIGHT: f64 = 220.0;
const PAD_LEFT: f64 = 56.0;
const PAD_RIGHT: f64 = 12.0;
const PAD_TOP: f64 = 12.0;
const PAD_BOTTOM: f64 = 40.0;
/// Line colours for before, at, and after the regression.
const COLOURS: [&str; 3] = ["#1a7f37", "#c0262d", "#0b5cad"];

/// One line: a label (the version) and its median time (or count) by size.
pub struct VersionLine<'a> {
    pub label: &'a str,
    pub sizes: &'a [SizeMedian],
}

/// An SVG chart of the given lines, of `metric`; `None` when no line has two points to draw.
pub fn before_after_chart(title: &str, metric: Metric, lines: &[VersionLine<'_>]) -> Option<String> {
    let points: Vec<(f64, f64)> = lines
        .iter()
        .flat_map(|l| l.sizes.iter())
        .filter(|s| s.size > 0 && s.median_ns > 0.0)
        .map(|s| ((s.size as f64).log10(), s.median_ns.log10()))
        .collect();
    if points.len() < 2 {
        return None;
    }
    let (x0, x1) = bounds(points.iter().map(|p| p.0));
    let (y0, y1) = bounds(points.iter().map(|p| p.1));
    let sx = |x: f64| PAD_LEFT + (x - x0) / (x1 - x0) * (WIDTH - PAD_LEFT - PAD_RIGHT);
    let sy = |y: f64| HEIGHT - PAD_BOTTOM - (y - y0) / (y1 - y0) * (HEIGHT - PAD_TOP - PAD_BOTTOM);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}">"#,
        escape(title)
    );
    let _ = write!(
        svg,
        r##"<rect x="{PAD_LEFT}" y="{PAD_TOP}" width="{}" height="{}" fill="none" stroke="#dde3e9"/>"##,
        WIDTH - PAD_LEFT - PAD_RIGHT,
        HEIGHT - PAD_TOP - PAD_BOTTOM
    );
    let _ = write!(
        svg,
        r##"<text x="{PAD_LEFT}" y="{}" font-size="10" fill="#5b6673">size {} … {} (log)</text>"##,
        HEIGHT - PAD_BOTTOM + 14.0,
        human(10f64.powf(x0)),
        human(10f64.powf(x1))
    );
    let what = if metric.is_count() { "instructions" } else { "time" };
    let _ = write!(svg, r##"<text x="4" y="{}" font-size="10" fill="#5b6673">{what} (log)</text>"##, PAD_TOP + 10.0);
    for (i, line) in lines.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let pts: Vec<String> = line
            .sizes
            .iter()
            .filter(|s| s.size > 0 && s.median_ns > 0.0)
            .map(|s| format!("{:.1},{:.1}", sx((s.size as f64).log10()), sy(s.median_ns.log10())))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let _ = write!(svg, r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#, pts.join(" "));
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" font-size="11" fill="{colour}">{}</text>"#,
            PAD_LEFT + 90.0 * i as f64,
            HEIGHT - 6.0,
            escape(line.label)
        );
    }
    svg.push_str("</svg>");
    Some(svg)
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if hi - lo < 1e-9 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    }
}

fn human(v: f64) -> String {
    match v {
        v if v >= 1024.0 * 1024.0 => format!("{:.0}Mi", v / (1024.0 * 1024.0)),
        v if v >= 1024.0 => format!("{:.0}Ki", v / 1024.0),
        v => format!("{v:.0}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_draws_one_line_per_version_and_escapes_labels() {
        let s = |size, ns| SizeMedian { size, median_ns: ns, runs: 1 };
        let before = [s(1024, 1.0), s(2048, 2.0), s(4096, 4.0)];
        let after = [s(1024, 1.0), s(2048, 4.0), s(4096, 16.0)];
        let lines = [VersionLine { label: "0.15.0", sizes: &before }, VersionLine { label: "<b>", sizes: &after }];
        let svg = before_after_chart("w", Metric::Wall, &lines).unwrap();
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("&lt;b&gt;") && !svg.contains("<b>"));
        assert!(svg.contains(">time (log)<"));
        assert!(before_after_chart("w", Metric::Wall, &[VersionLine { label: "x", sizes: &[] }]).is_none());
        let counted = before_after_chart("w", Metric::InstructionsValgrind, &lines).unwrap();
        assert!(counted.contains(">instructions (log)<"), "{counted}");
    }
}
