//! Which metric a page shows of a workload measured more than one way (wall time, CPU time,
//! instructions counted by perf or by Valgrind), and the links that switch between them. A series
//! is always of one metric; a page that shows many series picks one per cell.

use slopewatch_core::wire::Metric;

/// The metric to show among `available` (the metrics that have data there): `asked` when given
/// and there, none when given and not there; otherwise wall time where it exists, else the first
/// of `Metric::ALL` that does.
pub fn pick(asked: Option<Metric>, available: &[Metric]) -> Option<Metric> {
    match asked {
        Some(m) => available.contains(&m).then_some(m),
        None => Metric::ALL.into_iter().find(|m| available.contains(m)),
    }
}

/// A link that shows a page by another metric, as its switch lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeasureLink {
    /// `wall time`, `instructions (Valgrind)`, or what the page shows by default.
    pub label: &'static str,
    pub href: String,
    /// The page shows this one now.
    pub current: bool,
}

/// The switch of a page that shows one series: a link to each of `available` (with `href`
/// building each one's address), `shown` marked current. Empty when there is nothing to switch to.
pub fn series_links(available: &[Metric], shown: Metric, href: impl Fn(Metric) -> String) -> Vec<MeasureLink> {
    if available.len() < 2 {
        return Vec::new();
    }
    available.iter().map(|&m| MeasureLink { label: m.label(), href: href(m), current: m == shown }).collect()
}

/// The switch of a page that shows many series, each cell at its default unless one metric is
/// asked for: `each series' default` first, then each of `available`. Empty when only one metric
/// has data.
pub fn page_links(
    available: &[Metric],
    asked: Option<Metric>,
    href: impl Fn(Option<Metric>) -> String,
) -> Vec<MeasureLink> {
    if available.len() < 2 {
        return Vec::new();
    }
    let default = MeasureLink { label: "each series' default", href: href(None), current: asked.is_none() };
    let each =
        available.iter().map(|&m| MeasureLink { label: m.label(), href: href(Some(m)), current: asked == Some(m) });
    std::iter::once(default).chain(each).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_time_is_shown_where_it_exists_and_an_asked_metric_only_where_it_exists() {
        let both = [Metric::Wall, Metric::InstructionsValgrind];
        assert_eq!(pick(None, &both), Some(Metric::Wall));
        assert_eq!(pick(None, &[Metric::InstructionsPerf, Metric::Cpu]), Some(Metric::Cpu));
        assert_eq!(pick(Some(Metric::InstructionsValgrind), &both), Some(Metric::InstructionsValgrind));
        assert_eq!(pick(Some(Metric::Cpu), &both), None);
        assert_eq!(pick(None, &[]), None);
    }

    #[test]
    fn switches_appear_only_where_there_is_another_metric_to_show() {
        let href = |m: Metric| format!("/s?measure={m}");
        assert!(series_links(&[Metric::Wall], Metric::Wall, href).is_empty());
        let links = series_links(&[Metric::Wall, Metric::Cpu], Metric::Cpu, href);
        assert_eq!(
            links.iter().map(|l| (l.label, l.current)).collect::<Vec<_>>(),
            [("wall time", false), ("CPU time", true)]
        );
        let page = page_links(&[Metric::Wall, Metric::InstructionsPerf], None, |m| crate::links::measured("/", m));
        let shown: Vec<(&str, &str, bool)> = page.iter().map(|l| (l.label, l.href.as_str(), l.current)).collect();
        assert_eq!(
            shown,
            [
                ("each series' default", "/", true),
                ("wall time", "/?measure=wall", false),
                ("instructions (perf)", "/?measure=instructions-perf", false)
            ]
        );
    }
}
