//! A workload's slope across its lineage's versions as a small line beside its row: the alert
//! level dashed, the versions compared marked, and the slopes in words as its text alternative.
//! Plain SVG drawn here, small enough to sit inline in a table cell.

use super::escape;
use crate::format;
use crate::views::TrendSlope;
use std::fmt::Write;

const WIDTH: f64 = 132.0;
const HEIGHT: f64 = 34.0;
const PAD_X: f64 = 5.0;
const PAD_Y: f64 = 5.0;

/// The trend in words, for readers who cannot see it: "k 1.00 at 0.14.1, 1.01 at 0.15.2, 2.01 at
/// 0.16.0; no slope at 0.13.0".
pub fn trend_description(points: &[TrendSlope]) -> String {
    let measured: Vec<String> =
        points.iter().filter_map(|p| Some(format!("{} at {}", format::slope(p.slope?), p.version))).collect();
    let missing: Vec<&str> = points.iter().filter(|p| p.slope.is_none()).map(|p| p.version.as_str()).collect();
    let mut text =
        if measured.is_empty() { "no slope at any version".to_string() } else { format!("k {}", measured.join(", ")) };
    if !measured.is_empty() && !missing.is_empty() {
        text.push_str(&format!("; no slope at {}", missing.join(", ")));
    }
    text
}

/// The trend of one workload's slope over `points` (in version order), titled `title`, the
/// versions of `marked` drawn larger, the alert level dashed at the workload's `threshold`; `None`
/// when no version has a slope.
pub fn trend_svg(title: &str, points: &[TrendSlope], marked: &[&str], threshold: f64) -> Option<String> {
    let slopes: Vec<f64> = points.iter().filter_map(|p| p.slope).collect();
    if slopes.is_empty() {
        return None;
    }
    // Always show the alert level and linear growth, so lines of different rows compare by eye.
    let low = slopes.iter().copied().fold(0.8, f64::min);
    let high = slopes.iter().copied().fold(threshold + 0.7, f64::max);
    let n = points.len().max(2) as f64;
    let x = |i: usize| PAD_X + i as f64 * (WIDTH - 2.0 * PAD_X) / (n - 1.0);
    let y = |k: f64| HEIGHT - PAD_Y - (k - low) / (high - low) * (HEIGHT - 2.0 * PAD_Y);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="trend" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{}"><title>{}</title><desc>{}</desc>"#,
        escape(title),
        escape(title),
        escape(&trend_description(points))
    );
    let alert = y(threshold);
    let _ = write!(
        svg,
        r##"<line x1="0" y1="{alert:.1}" x2="{WIDTH}" y2="{alert:.1}" stroke="#c0262d" stroke-width="1" stroke-dasharray="3 2"/>"##
    );
    let drawn: Vec<String> =
        points.iter().enumerate().filter_map(|(i, p)| Some(format!("{:.1},{:.1}", x(i), y(p.slope?)))).collect();
    let _ =
        write!(svg, r##"<polyline fill="none" stroke="#0072b2" stroke-width="1.5" points="{}"/>"##, drawn.join(" "));
    for (i, p) in points.iter().enumerate() {
        let Some(k) = p.slope else { continue };
        let (r, fill) = match (marked.contains(&p.version.as_str()), p.over) {
            (true, true) => (3.5, "#c0262d"),
            (true, false) => (3.5, "#1d232b"),
            (false, _) => (1.8, "#0072b2"),
        };
        let _ = write!(
            svg,
            r#"<circle cx="{:.1}" cy="{:.1}" r="{r}" fill="{fill}"><title>{} k {}</title></circle>"#,
            x(i),
            y(k),
            escape(&p.version),
            format::slope(k)
        );
    }
    svg.push_str("</svg>");
    Some(svg)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_well_formed, elements};
    use super::*;

    fn point(version: &str, slope: Option<f64>) -> TrendSlope {
        TrendSlope { version: version.into(), slope, over: slope.is_some_and(|k| k > 2.0) }
    }

    #[test]
    fn a_trend_draws_the_slopes_marks_the_versions_compared_and_says_it_in_words() {
        let points = [
            point("0.14.1", Some(1.0)),
            point("<0.15>", Some(1.01)),
            point("0.16.0", Some(2.01)),
            point("0.17.0", None),
        ];
        let svg = trend_svg("strchr across zig-cc-musl", &points, &["<0.15>", "0.16.0"], 1.3).unwrap();
        assert_well_formed(&svg);
        assert_eq!(elements(&svg, "polyline").len(), 1);
        assert_eq!(elements(&svg, "circle").len(), 3, "one dot per slope");
        assert_eq!(svg.matches("r=\"3.5\"").count(), 2, "the versions compared stand out");
        assert!(svg.contains("&lt;0.15&gt;") && !svg.contains("<0.15>"), "names are escaped");
        let desc = trend_description(&points);
        assert_eq!(desc, "k 1.00 at 0.14.1, 1.01 at <0.15>, 2.01 at 0.16.0; no slope at 0.17.0");
        assert!(svg.contains("<desc>k 1.00 at 0.14.1, 1.01 at &lt;0.15&gt;"), "{svg}");
        assert!(trend_svg("t", &[point("1", None)], &["1"], 1.3).is_none());
        assert_eq!(trend_description(&[point("1", None)]), "no slope at any version");
    }
}
