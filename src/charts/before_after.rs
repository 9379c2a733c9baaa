//! The before/after chart of a regression's retrospective: time (or instructions, for a count
//! metric) against size on log-log axes, one line per version, so a steeper line is visibly a
//! steeper growth. Both axes carry values in the page's own formats (`64 KiB`, `12.3 ms`), every
//! line stays inside its box, and a version whose workload failed is a ✗ with what broke. Small
//! plain SVG, drawn here.

use super::{escape, shorten};
use crate::format;
use crate::model::SizeMedian;
use slopewatch_core::wire::{Metric, SizeUnit};
use std::fmt::Write;

const WIDTH: f64 = 360.0;
const HEIGHT: f64 = 240.0;
const PAD_LEFT: f64 = 58.0;
const PAD_RIGHT: f64 = 14.0;
const PAD_TOP: f64 = 20.0;
const PAD_BOTTOM: f64 = 58.0;
/// The share of each axis's span left empty at both ends, so no point sits on the box's edge.
const MARGIN: f64 = 0.06;
/// The least room between two size labels (`128 KiB` is about 38 pixels wide) and between two
/// value labels.
const X_GAP: f64 = 44.0;
const Y_GAP: f64 = 16.0;
/// Line colours for before, at, and after the regression.
const COLOURS: [&str; 3] = ["#1a7f37", "#c0262d", "#0b5cad"];
const MUTED: &str = "#5b6673";
const FAILED: &str = "#c0262d";

/// One line: a label (the version) and its median time (or count) by size; for a version whose
/// workload failed, what broke.
pub struct VersionLine<'a> {
    pub label: &'a str,
    pub sizes: &'a [SizeMedian],
    pub failed: Option<Failed>,
}

/// A version's failure as the chart marks it.
pub struct Failed {
    /// The size it failed at; none when it failed before any size ran.
    pub size: Option<u64>,
    /// What broke, in one line: the ✗'s text alternative, e.g. `wrong result at 32 KiB: got -1,
    /// expected 4681`.
    pub what: String,
}

/// A log-scaled axis from `lo` to `hi` (log10 of the values) onto pixels `from`..`to`.
struct Axis {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
}

impl Axis {
    /// The axis over `values` (log10), widened by `MARGIN` at both ends.
    fn over(values: impl Iterator<Item = f64>, from: f64, to: f64) -> Axis {
        let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let (lo, hi) = if hi - lo < 1e-9 { (lo - 0.5, hi + 0.5) } else { (lo, hi) };
        let pad = (hi - lo) * MARGIN;
        Axis { lo: lo - pad, hi: hi + pad, from, to }
    }

    fn at(&self, value: f64) -> f64 {
        self.from + (value.log10() - self.lo) / (self.hi - self.lo) * (self.to - self.from)
    }

    fn contains(&self, value: f64) -> bool {
        (self.lo..=self.hi).contains(&value.log10())
    }
}

/// An SVG chart of the given lines, of `metric`, sizes in `unit`; `None` when the lines have
/// fewer than two points between them.
pub fn before_after_chart(title: &str, metric: Metric, unit: SizeUnit, lines: &[VersionLine<'_>]) -> Option<String> {
    let points: Vec<&SizeMedian> = lines.iter().flat_map(drawn).collect();
    if points.len() < 2 {
        return None;
    }
    let failed_sizes = lines.iter().filter_map(|l| l.failed.as_ref()?.size).filter(|&s| s > 0);
    let sizes: Vec<f64> = points.iter().map(|p| p.size as f64).chain(failed_sizes.map(|s| s as f64)).collect();
    let (left, right, top, bottom) = (PAD_LEFT, WIDTH - PAD_RIGHT, PAD_TOP, HEIGHT - PAD_BOTTOM);
    let x = Axis::over(sizes.iter().map(|s| s.log10()), left, right);
    let y = Axis::over(points.iter().map(|p| p.median_ns.log10()), bottom, top);

    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart before-after" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}"><title>{}</title><desc>{}</desc>"#,
        escape(title),
        escape(title),
        escape(&description(metric, unit, lines))
    );
    let _ = write!(
        svg,
        r##"<rect x="{left}" y="{top}" width="{}" height="{}" fill="none" stroke="#dde3e9"/>"##,
        right - left,
        bottom - top
    );
    axes(&mut svg, &x, &y, &sizes, &points, metric, unit);
    for (i, line) in lines.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let pts: Vec<(f64, f64)> = drawn(line).map(|s| (x.at(s.size as f64), y.at(s.median_ns))).collect();
        if pts.len() > 1 {
            let path: Vec<String> = pts.iter().map(|(px, py)| format!("{px:.1},{py:.1}")).collect();
            let _ = write!(
                svg,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
                path.join(" ")
            );
        }
        for (px, py) in &pts {
            let _ = write!(svg, r#"<circle cx="{px:.1}" cy="{py:.1}" r="2.5" fill="{colour}"/>"#);
        }
        let mut legend = shorten(line.label, 14);
        if let Some(f) = &line.failed {
            // At the size it failed, or mid-chart when it failed before any size; half-way up,
            // since a failure has no time to plot.
            let fx = f.size.filter(|&s| s > 0 && x.contains(s as f64)).map_or((left + right) / 2.0, |s| x.at(s as f64));
            let fy = (top + bottom) / 2.0;
            let _ = write!(
                svg,
                r#"<g class="failed"><title>{}: ✗ {}</title><text x="{fx:.1}" y="{:.1}" font-size="18" font-weight="700" text-anchor="middle" fill="{FAILED}">✗</text></g>"#,
                escape(line.label),
                escape(&f.what),
                fy + 6.0
            );
            legend = format!("✗ {legend}");
        }
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" font-size="11" fill="{}">{}</text>"#,
            left + 100.0 * i as f64,
            HEIGHT - 6.0,
            if line.failed.is_some() { FAILED } else { colour },
            escape(&legend)
        );
    }
    svg.push_str("</svg>");
    Some(svg)
}

/// The points of a line that a log scale can place.
fn drawn<'a>(line: &VersionLine<'a>) -> impl Iterator<Item = &'a SizeMedian> {
    line.sizes.iter().filter(|s| s.size > 0 && s.median_ns > 0.0)
}

/// Tick values and labels on both axes: sizes measured on x, round values on y, each in the
/// page's format.
fn axes(svg: &mut String, x: &Axis, y: &Axis, sizes: &[f64], points: &[&SizeMedian], metric: Metric, unit: SizeUnit) {
    for size in x_ticks(x, sizes) {
        let px = x.at(size as f64);
        let _ = write!(
            svg,
            r##"<line x1="{px:.1}" y1="{}" x2="{px:.1}" y2="{}" stroke="#8a949e"/><text class="x-tick" x="{px:.1}" y="{}" font-size="10" text-anchor="middle" fill="{MUTED}">{}</text>"##,
            y.from,
            y.from + 4.0,
            y.from + 15.0,
            escape(&format::size_short(size, unit))
        );
    }
    let what = if metric.is_count() { "instructions" } else { "time" };
    let _ = write!(
        svg,
        r#"<text x="{}" y="{}" font-size="10" text-anchor="middle" fill="{MUTED}">size, {unit} (log)</text>"#,
        (x.from + x.to) / 2.0,
        y.from + 29.0
    );
    let _ = write!(svg, r#"<text x="4" y="{}" font-size="10" fill="{MUTED}">{what} (log)</text>"#, y.to - 8.0);
    let values: Vec<f64> = points.iter().map(|p| p.median_ns).collect();
    for v in y_ticks(y, &values) {
        let py = y.at(v);
        let _ = write!(
            svg,
            r##"<line x1="{}" y1="{py:.1}" x2="{}" y2="{py:.1}" stroke="#8a949e"/><text class="y-tick" x="{}" y="{:.1}" font-size="10" text-anchor="end" fill="{MUTED}">{}</text>"##,
            x.from - 4.0,
            x.from,
            x.from - 6.0,
            py + 3.5,
            escape(&format::short_value(metric, v))
        );
    }
}

/// The sizes measured, from the largest down, each `X_GAP` pixels or more left of the last one
/// kept: the largest size, where a ratio is taken, is always labelled, and no labels overlap.
fn x_ticks(x: &Axis, sizes: &[f64]) -> Vec<u64> {
    let mut measured: Vec<u64> = sizes.iter().map(|&s| s as u64).collect();
    measured.sort_unstable();
    measured.dedup();
    let mut kept: Vec<u64> = Vec::new();
    for &size in measured.iter().rev() {
        if kept.last().is_none_or(|&k| x.at(k as f64) - x.at(size as f64) >= X_GAP) {
            kept.push(size);
        }
    }
    kept.reverse();
    kept
}

/// Round values inside the axis: the finest of 1, 2 and 5 × 10ⁿ, every power of ten, every
/// second, third or fourth whose labels stay `Y_GAP` pixels apart; the smallest and largest
/// values measured when no such set has two values inside.
fn y_ticks(y: &Axis, values: &[f64]) -> Vec<f64> {
    let exponents = y.lo.floor() as i32..=y.hi.ceil() as i32;
    let inside = |ticks: Vec<f64>| -> Vec<f64> { ticks.into_iter().filter(|v| y.contains(*v)).collect() };
    let mut sets = vec![inside(exponents.clone().flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e))).collect())];
    for step in 1..=4 {
        sets.push(inside(exponents.clone().filter(|e| e.rem_euclid(step) == 0).map(|e| 10f64.powi(e)).collect()));
    }
    let apart = |ticks: &Vec<f64>| ticks.windows(2).all(|w| (y.at(w[0]) - y.at(w[1])).abs() >= Y_GAP);
    if let Some(ticks) = sets.into_iter().find(|t| t.len() >= 2 && apart(t)) {
        return ticks;
    }
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if hi > lo && (y.at(lo) - y.at(hi)).abs() >= Y_GAP {
        vec![lo, hi]
    } else {
        vec![hi]
    }
}

/// The chart in words: each version's line from its smallest to its largest size, or what broke.
fn description(metric: Metric, unit: SizeUnit, lines: &[VersionLine<'_>]) -> String {
    let parts: Vec<String> = lines
        .iter()
        .map(|l| {
            let mut part = match (l.sizes.first(), l.sizes.last()) {
                (Some(a), Some(b)) if l.sizes.len() > 1 => format!(
                    "{}: {} at {} to {} at {}",
                    l.label,
                    format::value(metric, a.median_ns),
                    format::size(a.size, unit),
                    format::value(metric, b.median_ns),
                    format::size(b.size, unit)
                ),
                _ => format!("{}: not measured", l.label),
            };
            if let Some(f) = &l.failed {
                part = format!("{}: ✗ {}", l.label, f.what);
            }
            part
        })
        .collect();
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_well_formed, elements, texts};
    use super::*;

    fn s(size: u64, ns: f64) -> SizeMedian {
        SizeMedian { size, median_ns: ns, runs: 1 }
    }

    #[test]
    fn a_chart_draws_one_line_per_version_and_escapes_labels() {
        let before = [s(1024, 1.0), s(2048, 2.0), s(4096, 4.0)];
        let after = [s(1024, 1.0), s(2048, 4.0), s(4096, 16.0)];
        let lines = [
            VersionLine { label: "0.15.0", sizes: &before, failed: None },
            VersionLine { label: "<b>", sizes: &after, failed: None },
        ];
        let svg = before_after_chart("w", Metric::Wall, SizeUnit::Bytes, &lines).unwrap();
        assert_well_formed(&svg);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("&lt;b&gt;") && !svg.contains("<b>"));
        assert!(svg.contains(">time (log)<"));
        let empty = [VersionLine { label: "x", sizes: &[], failed: None }];
        assert!(before_after_chart("w", Metric::Wall, SizeUnit::Bytes, &empty).is_none());
        let counted = before_after_chart("w", Metric::InstructionsValgrind, SizeUnit::Bytes, &lines).unwrap();
        assert!(counted.contains(">instructions (log)<"), "{counted}");
    }

    #[test]
    fn both_axes_carry_values_in_the_pages_formats() {
        let before = [s(32 << 10, 2.0e5), s(64 << 10, 4.0e5), s(128 << 10, 8.0e5)];
        let after = [s(32 << 10, 2.0e5), s(64 << 10, 8.0e5), s(128 << 10, 3.2e6)];
        let lines = [
            VersionLine { label: "0.15.2", sizes: &before, failed: None },
            VersionLine { label: "0.16.0", sizes: &after, failed: None },
        ];
        let svg = before_after_chart("strchr", Metric::Wall, SizeUnit::Bytes, &lines).unwrap();
        let labels = texts(&svg);
        for size in ["32 KiB", "64 KiB", "128 KiB"] {
            assert!(labels.contains(&size), "{size} on the size axis: {labels:?}");
        }
        assert!(labels.contains(&"500 µs") && labels.contains(&"1 ms") && labels.contains(&"2 ms"), "{labels:?}");
        assert!(!svg.contains("131072"), "no raw size: {svg}");
        assert!(labels.contains(&"size, bytes (log)"), "{labels:?}");
        let records = [s(1000, 1e6), s(2000, 2e6), s(40_000, 4e7)];
        let lines = [VersionLine { label: "a", sizes: &records, failed: None }];
        let svg = before_after_chart("sqlite", Metric::Wall, SizeUnit::Records, &lines).unwrap();
        assert!(texts(&svg).contains(&"40k"), "{svg}");
    }

    #[test]
    fn every_point_stays_inside_the_box() {
        // A steep line over a wide range: its top point once sat on the box's edge.
        let before = [s(1 << 10, 1e3), s(1 << 14, 1.6e4), s(1 << 18, 2.6e5)];
        let after = [s(1 << 10, 1e3), s(1 << 14, 2.6e5), s(1 << 18, 6.9e7)];
        let lines = [
            VersionLine { label: "0.15.2", sizes: &before, failed: None },
            VersionLine { label: "0.16.0", sizes: &after, failed: None },
        ];
        let svg = before_after_chart("w", Metric::Wall, SizeUnit::Bytes, &lines).unwrap();
        let attr = |el: &str, name: &str| -> f64 {
            let at = el.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            el[at..at + el[at..].find('"').unwrap()].parse().unwrap()
        };
        let rect = elements(&svg, "rect")[0];
        let (x0, y0) = (attr(rect, "x"), attr(rect, "y"));
        let (x1, y1) = (x0 + attr(rect, "width"), y0 + attr(rect, "height"));
        let circles = elements(&svg, "circle");
        assert_eq!(circles.len(), 6);
        for c in circles {
            let (cx, cy) = (attr(c, "cx"), attr(c, "cy"));
            assert!(cx - 2.5 > x0 && cx + 2.5 < x1 && cy - 2.5 > y0 && cy + 2.5 < y1, "{c} inside {rect}");
        }
    }

    #[test]
    fn axis_labels_never_overlap_and_the_largest_size_is_labelled() {
        // Eight doublings and six decades: too many to label every one.
        let before: Vec<SizeMedian> = (0..8).map(|i| s(1024 << i, 3.0 * f64::from(1024 << i))).collect();
        let after: Vec<SizeMedian> = (0..8).map(|i| s(1024 << i, 0.1 * f64::from(1024 << i).powi(2))).collect();
        let lines = [
            VersionLine { label: "0.15.2", sizes: &before, failed: None },
            VersionLine { label: "0.16.0", sizes: &after, failed: None },
        ];
        let svg = before_after_chart("w", Metric::Wall, SizeUnit::Bytes, &lines).unwrap();
        let labels = |class: &str, axis: &str| -> Vec<f64> {
            elements(&svg, "text")
                .into_iter()
                .filter(|t| t.contains(&format!("class=\"{class}\"")))
                .map(|t| {
                    let at = t.find(&format!(" {axis}=\"")).unwrap() + 4;
                    t[at..at + t[at..].find('"').unwrap()].parse().unwrap()
                })
                .collect()
        };
        let xs = labels("x-tick", "x");
        let ys = labels("y-tick", "y");
        assert!(xs.len() >= 3 && ys.len() >= 3, "{svg}");
        assert!(xs.windows(2).all(|w| w[1] - w[0] >= X_GAP), "{xs:?}");
        assert!(ys.windows(2).all(|w| (w[1] - w[0]).abs() >= Y_GAP), "{ys:?}");
        assert!(texts(&svg).contains(&"128 KiB"), "{svg}");
        assert!(texts(&svg).contains(&"1 s") && texts(&svg).contains(&"1 ms"), "{svg}");
    }

    #[test]
    fn a_failed_version_is_a_cross_with_what_broke() {
        let before = [s(8 << 10, 1e4), s(16 << 10, 2e4), s(32 << 10, 4e4)];
        let what = "wrong result at 32 KiB: got -1, expected <4681>".to_string();
        let lines = [
            VersionLine { label: "0.15.2", sizes: &before, failed: None },
            VersionLine { label: "0.16.0", sizes: &[], failed: Some(Failed { size: Some(32 << 10), what }) },
        ];
        let svg = before_after_chart("strtol", Metric::Wall, SizeUnit::Bytes, &lines).unwrap();
        assert_well_formed(&svg);
        assert_eq!(svg.matches("<polyline").count(), 1, "only the version that ran has a line");
        assert!(texts(&svg).contains(&"✗"), "{svg}");
        assert!(
            svg.contains("<title>0.16.0: ✗ wrong result at 32 KiB: got -1, expected &lt;4681&gt;</title>"),
            "{svg}"
        );
        assert!(texts(&svg).contains(&"✗ 0.16.0"), "the legend says it failed: {svg}");
        assert!(svg.contains("<desc>0.15.2: 10 µs at 8 KiB to 40 µs at 32 KiB; 0.16.0: ✗ wrong result"), "{svg}");
    }
}
