//! Time (or instructions counted) against size on log-log axes: one line per version, where a
//! straight line's steepness is the slope; reference lines of slope 1 and 2 show what linear and
//! quadratic look like. The vertical axis is in the view's metric.

use super::*;
use crate::format;
use crate::views::LogLogView;
use plotters::coord::CoordTranslate;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const SIZE: (u32, u32) = (960, 480);
const MAX_X_TICKS: usize = 9;
const MAX_Y_TICKS: usize = 9;
/// Height of one legend entry, in pixels.
const LEGEND_ROW: i32 = 22;

/// Draws the lines of median time (or count) against size.
pub fn loglog_chart(view: &LogLogView) -> Result<String, ChartError> {
    let points = || view.lines.iter().flat_map(|l| l.points.iter()).filter(|p| p.0 > 0 && p.1 > 0.0);
    let (min_size, max_size, min_ns, max_ns) = if points().next().is_some() {
        let (min_size, max_size) = points().fold((u64::MAX, 0), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
        let (min_ns, max_ns) = points().fold((f64::INFINITY, 0f64), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
        (min_size, max_size, min_ns, max_ns)
    } else if !view.failed_every_run.is_empty() {
        // Only versions every run failed: empty axes, and the legend says why.
        (65536, 1 << 20, 1e4, 1e7)
    } else {
        return Err(ChartError::Empty("no measured sizes"));
    };
    let x_range = (min_size as f64 / 1.25)..(max_size as f64 * 1.25);
    let y_range = (min_ns / 1.6)..(max_ns * 1.6);

    let mut sizes: Vec<u64> = points().map(|p| p.0).chain([min_size, max_size]).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let x_keys: Vec<f64> = thin(&sizes, MAX_X_TICKS).into_iter().map(|s| s as f64).collect();
    let y_keys = value_ticks(y_range.start, y_range.end);
    let (unit, metric) = (view.size_unit, view.metric);

    let mut hits = Vec::new();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&view.title, (FONT, 20).into_font().color(&INK))
            .margin(14)
            .margin_right(24)
            .x_label_area_size(44)
            .y_label_area_size(76)
            .build_cartesian_2d(
                x_range.clone().log_scale().with_key_points(x_keys),
                y_range.clone().log_scale().with_key_points(y_keys),
            )?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID.stroke_width(1))
            .axis_style(MUTED.stroke_width(1))
            .label_style((FONT, 15).into_font().color(&MUTED))
            .axis_desc_style((FONT, 15).into_font().color(&INK))
            .x_desc(format!("input size ({unit}, log scale)"))
            .y_desc(format!("median {} (log scale)", metric.label()))
            .x_label_formatter(&|x| format::size_short(x.round() as u64, unit))
            .y_label_formatter(&|y| format::short_value(metric, *y))
            .draw()?;

        // Reference slopes from the fastest smallest point: lines parallel to them grow alike.
        let origin = (min_size as f64, min_ns);
        for (k, text) in [(1.0, "k = 1"), (2.0, "k = 2")] {
            let end_x = (origin.0 * (y_range.end / origin.1).powf(1.0 / k)).min(x_range.end);
            let end = (end_x, origin.1 * (end_x / origin.0).powf(k));
            chart.draw_series(DashedLineSeries::new([origin, end], 6, 5, REFERENCE.stroke_width(1)))?;
            let at = chart.backend_coord(&end);
            root.draw(&Text::new(
                text,
                (at.0 - 6, at.1 + 2),
                (FONT, 14).into_font().color(&REFERENCE).pos(Pos::new(HPos::Right, VPos::Top)),
            ))?;
        }

        for (i, line) in view.lines.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let data: Vec<(f64, f64)> =
                line.points.iter().filter(|p| p.0 > 0 && p.1 > 0.0).map(|&(s, t)| (s as f64, t)).collect();
            chart.draw_series(LineSeries::new(data.iter().copied(), color.stroke_width(2)))?;
            for &(s, t) in &data {
                draw_marker(chart.plotting_area(), i, color, (s, t))?;
                let c = chart.backend_coord(&(s, t));
                hits.push(Hit {
                    x: c.0,
                    y: c.1,
                    text: format!("{} at {}: {}", line.label, format::size(s as u64, unit), format::value(metric, t)),
                });
            }
        }

        // The legend sits in the lower right, where growing times rarely go.
        let mut labels: Vec<String> = view
            .lines
            .iter()
            .map(|l| {
                let failed = l.failed.as_ref().map(|f| format!("  {f}")).unwrap_or_default();
                format!("{}  (k = {}){failed}", l.label, format::slope(l.slope))
            })
            .collect();
        labels.extend(view.failed_every_run.iter().cloned());
        let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as i32;
        let (width, height) = (widest * 8 + 48, labels.len() as i32 * LEGEND_ROW + 12);
        let corner = chart.backend_coord(&(x_range.end, y_range.start));
        let (x0, y0) = (corner.0 - width - 12, corner.1 - height - 12);
        root.draw(&Rectangle::new([(x0, y0), (x0 + width, y0 + height)], WHITE.mix(0.94).filled()))?;
        root.draw(&Rectangle::new([(x0, y0), (x0 + width, y0 + height)], GRID.stroke_width(1)))?;
        for (i, label) in labels.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let y = y0 + 6 + LEGEND_ROW / 2 + i as i32 * LEGEND_ROW;
            if i >= view.lines.len() {
                // A version every run failed: no line, a red cross.
                root.draw(&Cross::new((x0 + 21, y), 6, ALERT.stroke_width(3)))?;
            } else {
                root.draw(&PathElement::new([(x0 + 10, y), (x0 + 32, y)], color.stroke_width(2)))?;
                draw_marker(&root, i, color, (x0 + 21, y))?;
            }
            root.draw(&Text::new(
                label.as_str(),
                (x0 + 40, y),
                (FONT, 15).into_font().color(&INK).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        root.present()?;
    }
    Ok(finish(svg, &view.title, &loglog_description(view), &hits))
}

/// The `i`th line's marker: shapes differ as well as colours.
fn draw_marker<DB, CT>(area: &DrawingArea<DB, CT>, i: usize, color: RGBColor, at: CT::From) -> Result<(), ChartError>
where
    DB: DrawingBackend,
    CT: CoordTranslate,
    CT::From: Clone + 'static,
{
    let style = color.filled();
    match i % 4 {
        0 => area.draw(&Circle::new(at, 4, style))?,
        1 => area.draw(&TriangleMarker::new(at, 6, style))?,
        2 => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-4, -4), (4, 4)], style)))?,
        _ => area.draw(&Cross::new(at, 5, color.stroke_width(2)))?,
    }
    Ok(())
}

/// Tick values in a 1–2–5 sequence across the range (of durations or counts), or only powers of
/// ten when the range spans too many decades for that.
fn value_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = (lo.log10().floor() as i32)..=(hi.log10().ceil() as i32);
    for steps in [&[1.0, 2.0, 5.0][..], &[1.0]] {
        let ticks: Vec<f64> = decades
            .clone()
            .flat_map(|d| steps.iter().map(move |m| m * 10f64.powi(d)))
            .filter(|t| (lo..=hi).contains(t))
            .collect();
        if ticks.len() <= MAX_Y_TICKS {
            return ticks;
        }
    }
    let powers: Vec<f64> = decades.map(|d| 10f64.powi(d)).filter(|t| (lo..=hi).contains(t)).collect();
    thin(&powers, MAX_Y_TICKS)
}

/// The chart in words, its text alternative: each line's slope and time at its largest size.
pub fn loglog_description(view: &LogLogView) -> String {
    let lines: Vec<String> = view
        .lines
        .iter()
        .filter_map(|l| {
            let &(size, ns) = l.points.last()?;
            Some(format!(
                "{}: slope {}, {} at {}",
                l.label,
                format::slope(l.slope),
                format::value(view.metric, ns),
                format::size(size, view.size_unit)
            ))
        })
        .collect();
    let mut text = format!("Median {} against input size on log-log axes. {}.", view.metric.label(), lines.join("; "));
    let partly: Vec<String> =
        view.lines.iter().filter_map(|l| Some(format!("{}: {}", l.label, l.failed.as_ref()?))).collect();
    if !partly.is_empty() {
        text.push_str(&format!(" Some runs failed: {}.", partly.join("; ")));
    }
    if !view.failed_every_run.is_empty() {
        text.push_str(&format!(" No line, every run failed: {}.", view.failed_every_run.join("; ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_well_formed, elements, texts};
    use super::*;
    use crate::views::tests::series;

    #[test]
    fn each_version_is_a_line_with_markers_a_legend_and_reference_slopes() {
        let s = series(&[("0.14.1", 1.0), ("0.15.2", 1.0), ("0.16.0", 2.0)]);
        let svg = loglog_chart(&s.loglog(&[])).unwrap();
        assert_well_formed(&svg);
        assert!(elements(&svg, "polyline").len() >= 3, "a line per version");
        assert!(svg.contains("0.16.0  (k = 2.00)"), "the legend names each line with its slope");
        let texts = texts(&svg);
        assert!(texts.contains(&"k = 1") && texts.contains(&"k = 2"));
        assert!(texts.contains(&"64 KiB") && texts.contains(&"1 MiB"), "sizes are human: {texts:?}");
        assert!(texts.iter().any(|t| t.ends_with(" ms") || t.ends_with(" s")), "times are human: {texts:?}");
        assert!(svg.contains("<desc>Median wall time against input size on log-log axes. 0.14.1: slope 1.00"));
        assert_eq!(elements(&svg, "circle").iter().filter(|c| c.contains("class=\"hit\"")).count(), 15);
    }

    #[test]
    fn versions_every_run_failed_are_in_the_legend_even_with_no_line() {
        let mut view = series(&[("1.2.5", 1.0)]).loglog(&[]);
        view.lines.clear();
        view.failed_every_run = vec!["1.2.5: ✗ wrong result, failed in every run (2 runs), on 2 hosts".into()];
        let svg = loglog_chart(&view).unwrap();
        assert_well_formed(&svg);
        assert!(svg.contains("1.2.5: ✗ wrong result, failed in every run"), "the legend names it");
        assert!(svg.contains("No line, every run failed: 1.2.5"), "and so does the text alternative");
    }

    #[test]
    fn labels_from_users_are_escaped() {
        let mut view = series(&[("<b>&\"", 1.0)]).loglog(&[]);
        view.title = "<script>x</script>".into();
        let svg = loglog_chart(&view).unwrap();
        assert_well_formed(&svg);
        assert!(svg.contains("&lt;b&gt;&amp;&quot;"));
        assert!(svg.contains("<title>&lt;script&gt;x&lt;/script&gt;</title>"));
    }

    #[test]
    fn a_count_metric_is_drawn_on_an_axis_of_instructions() {
        let mut view = series(&[("0.15.2", 1.0), ("0.16.0", 2.0)]).loglog(&[]);
        view.metric = slopewatch_core::wire::Metric::InstructionsValgrind;
        let svg = loglog_chart(&view).unwrap();
        assert_well_formed(&svg);
        let texts = texts(&svg);
        assert!(texts.iter().any(|t| t.starts_with("median instructions (Valgrind)")), "{texts:?}");
        assert!(texts.iter().any(|t| t.ends_with('G') || t.ends_with('M')), "counts are human: {texts:?}");
        assert!(!texts.iter().any(|t| t.ends_with(" ms") || t.ends_with(" s")), "no durations: {texts:?}");
        assert!(svg.contains(" instructions</title>"), "hover values are counts");
        assert!(svg.contains("<desc>Median instructions (Valgrind) against input size"));
    }

    #[test]
    fn value_ticks_stay_few_and_round() {
        assert_eq!(value_ticks(900.0, 12_000.0), [1e3, 2e3, 5e3, 1e4]);
        let wide = value_ticks(1e3, 1e12);
        assert!(wide.len() <= MAX_Y_TICKS && wide.iter().all(|t| t.log10().fract().abs() < 1e-9), "{wide:?}");
        assert!(loglog_chart(&series(&[]).loglog(&[])).is_err());
    }
}
