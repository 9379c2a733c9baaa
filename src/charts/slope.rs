//! Slope across versions: one point per version with its 95% interval, the alert threshold,
//! the linear and quadratic reference levels, and the version that went over the threshold marked.

use super::*;
use crate::format;
use crate::views::{failed_in, Band, SeriesView};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const SIZE: (u32, u32) = (960, 420);
/// Version labels that fit side by side on the x axis.
const MAX_X_LABELS: usize = 12;

/// Draws the series' slope across versions.
pub fn slope_chart(series: &SeriesView) -> Result<String, ChartError> {
    let versions = &series.versions;
    if versions.is_empty() {
        return Err(ChartError::Empty("the series has no versions"));
    }
    let n = versions.len();
    let threshold = series.alerting.threshold;
    let marked = series.first_over_threshold();
    let low = series.measured().map(|(_, v)| v.ci_low.min(v.slope)).fold(f64::INFINITY, f64::min);
    let high = series.measured().map(|(_, v)| v.ci_high.max(v.slope)).fold(f64::NEG_INFINITY, f64::max);
    let (y_lo, y_hi) = ((low - 0.15).min(0.6), (high + 0.15).max(2.4));
    // Failed versions are marked along the top, above any slope.
    let fail_y = y_hi - (y_hi - y_lo) * 0.05;
    let x_range = -0.6..(n as f64 - 0.4);

    let title = format!("Slope across versions: {} · {} ({})", series.workload, series.lineage, series.metric.label());
    let mut hits = Vec::with_capacity(n);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&title, (FONT, 20).into_font().color(&INK))
            .margin(14)
            .margin_right(24)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x_range.clone(), y_lo..y_hi)?;
        chart
            .plotting_area()
            .draw(&Rectangle::new([(x_range.start, threshold), (x_range.end, y_hi)], ALERT_ZONE.filled()))?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID.stroke_width(1))
            .axis_style(MUTED.stroke_width(1))
            .label_style((FONT, 15).into_font().color(&MUTED))
            .axis_desc_style((FONT, 15).into_font().color(&INK))
            .x_desc(format!("{} version", series.lineage))
            .y_desc(if series.metric.is_count() {
                "slope k  (instructions ∝ size^k)"
            } else {
                "slope k  (time ∝ size^k)"
            })
            // Ticks fall on whole numbers (versions) as long as there are no more than versions.
            .x_labels(n.min(MAX_X_LABELS))
            .y_labels(8)
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() > 1e-6 || i < 0.0 {
                    return String::new();
                }
                versions.get(i as usize).map(|v| shorten(&v.version, 11)).unwrap_or_default()
            })
            .y_label_formatter(&|y| format!("{y:.1}"))
            .draw()?;

        let label_style = (FONT, 14).into_font();
        let alert_label = format!("alert k > {threshold}");
        for (level, text, color, dashed) in [
            (1.0, "k = 1 linear", REFERENCE, true),
            (2.0, "k = 2 quadratic", REFERENCE, true),
            (threshold, alert_label.as_str(), ALERT, false),
        ] {
            let ends = [(x_range.start, level), (x_range.end, level)];
            if dashed {
                chart.draw_series(DashedLineSeries::new(ends, 6, 5, color.stroke_width(1)))?;
            } else {
                chart.draw_series(LineSeries::new(ends, color.stroke_width(2)))?;
            }
            let at = chart.backend_coord(&(x_range.end, level));
            root.draw(&Text::new(
                text,
                (at.0 - 4, at.1 - 4),
                label_style.clone().color(&color).pos(Pos::new(HPos::Right, VPos::Bottom)),
            ))?;
        }

        if let Some(m) = marked {
            let x = m as f64;
            chart.draw_series(DashedLineSeries::new([(x, y_lo), (x, y_hi)], 4, 4, ALERT.stroke_width(1)))?;
            let top = chart.backend_coord(&(x, y_hi));
            // The label reads away from the nearer edge.
            let (anchor, dx) = if m * 2 < n { (HPos::Left, 6) } else { (HPos::Right, -6) };
            root.draw(&Text::new(
                format!("first over {threshold}: {}", shorten(&versions[m].version, 24)),
                (top.0 + dx, top.1 + 4),
                (FONT, 15).into_font().style(FontStyle::Bold).color(&ALERT).pos(Pos::new(anchor, VPos::Top)),
            ))?;
        }

        for (i, v) in series.measured() {
            let x = i as f64;
            let style = MUTED.stroke_width(1);
            chart.draw_series([
                PathElement::new([(x, v.ci_low), (x, v.ci_high)], style),
                PathElement::new([(x - 0.15, v.ci_low), (x + 0.15, v.ci_low)], style),
                PathElement::new([(x - 0.15, v.ci_high), (x + 0.15, v.ci_high)], style),
            ])?;
        }
        chart.draw_series(LineSeries::new(
            series.measured().map(|(i, v)| (i as f64, v.slope)),
            PALETTE[0].stroke_width(2),
        ))?;
        for (i, v, f) in series.failed() {
            let at = (i as f64, fail_y);
            // A cross, thicker where every run failed.
            let width = if f.every_run() { 3 } else { 2 };
            chart.draw_series([Cross::new(at, 7, ALERT.stroke_width(width))])?;
            let c = chart.backend_coord(&at);
            hits.push(Hit {
                x: c.0,
                y: c.1,
                text: format!("{} {}: ✗ {}, {}", series.lineage, v.version, f.summary, failed_in(f)),
            });
        }
        if series.failed().next().is_some() {
            let corner = chart.backend_coord(&(x_range.start, y_hi));
            let at = (corner.0 + 16, corner.1 + 34);
            root.draw(&Cross::new(at, 6, ALERT.stroke_width(3)))?;
            root.draw(&Text::new(
                "failed: runs of the version failed the workload",
                (at.0 + 12, at.1),
                (FONT, 14).into_font().color(&ALERT).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        for i in series.source_steps() {
            let x = i as f64 - 0.5;
            chart.draw_series(DashedLineSeries::new([(x, y_lo), (x, y_hi)], 2, 4, MUTED.stroke_width(1)))?;
            let bottom = chart.backend_coord(&(x, y_lo));
            root.draw(&Text::new(
                "source changed",
                (bottom.0 + 4, bottom.1 - 6),
                (FONT, 13).into_font().color(&MUTED).pos(Pos::new(HPos::Left, VPos::Bottom)),
            ))?;
        }

        for (i, v) in series.measured() {
            let at = (i as f64, v.slope);
            let band = series.alerting.band_of(v);
            match band {
                Band::Linear => chart.draw_series([Circle::new(at, 5, LINEAR.filled())])?,
                Band::Watch => {
                    chart.draw_series([EmptyElement::at(at) + Rectangle::new([(-5, -5), (5, 5)], WATCH.filled())])?
                }
                Band::Regression => chart.draw_series([TriangleMarker::new(at, 7, ALERT.filled())])?,
            };
            let c = chart.backend_coord(&at);
            let class = format::class_label(v.complexity.as_ref());
            if let Some(class) = class.filter(|_| n <= 2 * MAX_X_LABELS) {
                let below = chart.backend_coord(&(i as f64, v.ci_low.min(v.slope)));
                root.draw(&Text::new(
                    class,
                    (below.0, below.1 + 10),
                    (FONT, 13).into_font().color(&INK).pos(Pos::new(HPos::Center, VPos::Top)),
                ))?;
            }
            hits.push(Hit {
                x: c.0,
                y: c.1,
                text: format!(
                    "{} {}: slope {} (95% CI {}–{}), R² {:.3}, {} runs, {}{}",
                    series.lineage,
                    v.version,
                    format::slope(v.slope),
                    format::slope(v.ci_low),
                    format::slope(v.ci_high),
                    v.r2,
                    v.runs,
                    band.name(),
                    class.map(|c| format!(", class {c}")).unwrap_or_default()
                ),
            });
        }
        root.present()?;
    }
    Ok(finish(svg, &title, &slope_description(series), &hits))
}

/// The chart in words, its text alternative: the versions, the latest slope, where it crossed.
pub fn slope_description(series: &SeriesView) -> String {
    let mut measured = series.measured();
    let Some((_, first)) = measured.next() else {
        let mut text = format!(
            "No slope of {} built with {}: every run of its {} versions failed.",
            series.workload,
            series.lineage,
            series.versions.len()
        );
        push_failures(&mut text, series);
        return text;
    };
    let last = measured.last().map_or(first, |(_, v)| v);
    let mut text = format!(
        "Log-log slope of {} built with {} across {} versions, from {} (k = {}) to {} (k = {}), by {}.",
        series.workload,
        series.lineage,
        series.versions.len(),
        first.version,
        format::slope(first.slope),
        last.version,
        format::slope(last.slope),
        series.metric.label(),
    );
    let threshold = series.alerting.threshold;
    match series.first_over_threshold().and_then(|m| series.versions[m].summary.as_ref()) {
        Some(m) => text.push_str(&format!(
            " First over the alert threshold of {threshold}: {} (k = {}).",
            m.version,
            format::slope(m.slope)
        )),
        None => text.push_str(&format!(" No version is over the alert threshold of {threshold}.")),
    }
    match (series.class_change(), format::class_label(last.complexity.as_ref())) {
        (Some(change), _) => text.push_str(&format!(" Complexity class: {change}.")),
        (None, Some(class)) => text.push_str(&format!(" Complexity class at {}: {class}.", last.version)),
        (None, None) => {}
    }
    for note in series.source_changes() {
        text.push_str(&format!(" Note: {note}."));
    }
    push_failures(&mut text, series);
    text
}

/// Adds which versions failed, and how, to a chart's text alternative.
fn push_failures(text: &mut String, series: &SeriesView) {
    let failed: Vec<String> =
        series.failed().map(|(_, v, f)| format!("{} ({}, {})", v.version, f.label, failed_in(f))).collect();
    if !failed.is_empty() {
        text.push_str(&format!(" Marked ✗ as failed: {}.", failed.join("; ")));
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_well_formed, elements, texts};
    use super::*;
    use crate::views::tests::series;

    #[test]
    fn a_series_is_drawn_with_its_line_intervals_threshold_and_marked_version() {
        let s = series(&[("0.14.1", 1.01), ("0.15.2", 1.02), ("0.16.0", 2.0)]);
        let svg = slope_chart(&s).unwrap();
        assert_well_formed(&svg);
        assert!(svg.starts_with("<svg"));
        assert!(!elements(&svg, "polyline").is_empty(), "the slope line is drawn");
        // Two linear points as circles, the regression as a triangle (a filled polygon).
        assert_eq!(elements(&svg, "circle").iter().filter(|c| !c.contains("class=\"hit\"")).count(), 2);
        assert!(!elements(&svg, "polygon").is_empty());
        assert!(svg.contains("alert k &gt; 1.5"), "the threshold is labelled");
        assert!(svg.contains("k = 1 linear") && svg.contains("k = 2 quadratic"));
        assert!(svg.contains("first over 1.5: 0.16.0"));
        assert!(texts(&svg).contains(&"0.14.1"), "versions label the x axis");
        assert!(svg.contains("<title>Slope across versions: strchr · zig-cc-musl (wall time)</title>"));
        assert!(svg.contains("First over the alert threshold of 1.5: 0.16.0"));
        assert_eq!(elements(&svg, "circle").iter().filter(|c| c.contains("class=\"hit\"")).count(), 3);
    }

    #[test]
    fn failed_versions_are_crossed_along_the_top_and_said_in_words() {
        let mut s = series(&[("1.2.3", 1.0), ("1.2.4", 1.0), ("1.2.5", 1.0)]);
        s.versions[1].failures = Some(crate::views::tests::failures("1.2.4", 1, 3));
        s.versions[2].summary = None;
        s.versions[2].failures = Some(crate::views::tests::failures("1.2.5", 2, 2));
        let svg = slope_chart(&s).unwrap();
        assert_well_formed(&svg);
        assert!(svg.contains("failed: runs of the version failed the workload"), "the legend says what ✗ is");
        assert!(svg.contains("Marked ✗ as failed: 1.2.4 (wrong result, failed in 1 of the version"));
        assert!(svg.contains("1.2.5 (wrong result, failed in every run (2 runs), on 2 hosts)."));
        let hits: Vec<&str> = elements(&svg, "circle").into_iter().filter(|c| c.contains("class=\"hit\"")).collect();
        assert_eq!(hits.len(), 4, "two measured points and two crosses");
        assert!(texts(&svg).contains(&"1.2.5"), "a version every run failed keeps its place on the axis");
    }

    #[test]
    fn each_version_is_labelled_with_its_class_and_the_description_states_the_change() {
        use crate::views::tests::complexity;
        use slopewatch_core::complexity::Class;
        let mut s = series(&[("0.15.2", 1.0), ("0.16.0", 2.0)]);
        s.versions[0].summary.as_mut().unwrap().complexity = Some(complexity(Some(Class::Linear)));
        s.versions[1].summary.as_mut().unwrap().complexity = Some(complexity(Some(Class::Quadratic)));
        let svg = slope_chart(&s).unwrap();
        assert_well_formed(&svg);
        assert!(texts(&svg).contains(&"O(n)") && texts(&svg).contains(&"O(n²)"), "{:?}", texts(&svg));
        assert!(svg.contains("0.16.0: slope 2.00 (95% CI 1.95–2.05), R² 0.999, 3 runs, regression, class O(n²)"));
        assert!(slope_description(&s).ends_with(" Complexity class: O(n) through 0.15.2, O(n²) from 0.16.0."));
    }

    #[test]
    fn the_threshold_line_sits_at_one_and_a_half() {
        let s = series(&[("1", 1.0), ("2", 1.0)]);
        let svg = slope_chart(&s).unwrap();
        // The alert line is the only red two-pixel polyline; it is horizontal.
        let alert = elements(&svg, "polyline")
            .into_iter()
            .find(|p| p.contains("#C0262D") && p.contains("stroke-width=\"2\""))
            .expect("alert line");
        let points = alert.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        let ys: Vec<&str> = points.split_whitespace().map(|p| p.split(',').nth(1).unwrap()).collect();
        assert_eq!(ys.len(), 2);
        assert_eq!(ys[0], ys[1]);
        assert!(!svg.contains("first over"), "nothing to mark");
    }

    #[test]
    fn names_from_users_are_escaped_and_many_versions_keep_labels_apart() {
        let mut s =
            series(&(0..30).map(|i| (Box::leak(format!("1.{i}.0").into_boxed_str()) as &str, 1.0)).collect::<Vec<_>>());
        s.workload = "<script>alert(1)</script>".into();
        s.lineage = "a&b \"q\"".into();
        let svg = slope_chart(&s).unwrap();
        assert_well_formed(&svg);
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(svg.contains("a&amp;b &quot;q&quot;"));
        let labels = (0..30).filter(|i| texts(&svg).contains(&format!("1.{i}.0").as_str())).count();
        assert!((2..=13).contains(&labels), "{labels} version labels");
        assert!(slope_chart(&series(&[])).is_err());
    }
}
