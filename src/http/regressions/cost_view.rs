//! A regression's "where the cost went", as its page shows it: per profiled workload, the
//! sentence, what it compares, the functions' instructions before and after, and the bars.

use crate::format;

/// One workload's "where the cost went", as the page shows it.
pub(super) struct CostView {
    pub(super) workload: String,
    /// The sentence, and what it compares: "0.16.0 against 0.15.2 at 1,000 records", or that the
    /// bad version's profile stands alone.
    pub(super) sentence: String,
    pub(super) compared: String,
    pub(super) contract: Option<(String, String)>,
    /// The bad version's profile stands alone: shares are of all its instructions.
    pub(super) alone: bool,
    pub(super) rows: Vec<CostRow>,
    pub(super) svg: String,
}

pub(super) struct CostRow {
    pub(super) name: String,
    pub(super) before: String,
    pub(super) after: String,
    pub(super) ratio: String,
    pub(super) share: String,
}

impl CostView {
    pub(super) fn new(
        w: &crate::model::WhereCostWent,
        unit: slopewatch_core::wire::SizeUnit,
        public_url: Option<&str>,
    ) -> CostView {
        let s = &w.shift;
        let at = format::size(s.size, unit);
        let compared = match &w.good_version {
            Some(good) => format!("{} against {good}, both profiled at {at}", w.bad_version),
            None => format!(
                "{} alone, profiled at {at}: the last good version has no profile to compare with",
                w.bad_version
            ),
        };
        let count = |v: Option<u64>| v.map_or_else(|| "–".to_string(), |v| format::count(v as f64));
        CostView {
            workload: w.workload.clone(),
            sentence: w.shift.sentence.clone(),
            compared,
            alone: w.good_version.is_none(),
            contract: w
                .contract
                .as_ref()
                .map(|c| (c.sentence.clone(), crate::links::absolute(public_url, &c.series_url))),
            rows: s
                .functions
                .iter()
                .map(|f| CostRow {
                    name: f.name.clone(),
                    before: count(f.before),
                    after: count(f.after),
                    ratio: f.ratio.map_or_else(|| "–".into(), format::factor),
                    share: format!("{:.1} %", f.share * 100.0),
                })
                .collect(),
            svg: crate::charts::cost_bars_svg(s, &format!("Where the cost of {} went", w.workload)),
        }
    }
}
