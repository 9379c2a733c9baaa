//! Numbers as people read them: durations in ns/µs/ms/s, instruction counts, a series' values by
//! its metric, sizes in KiB/MiB or counts, slopes, complexity classes, ratios (`3,600×`,
//! "31,200× slower", "4.00× more"), how long ago something happened ("3 min ago") and what a
//! broken contract means. Pages, charts, exports and webhooks share these.

use slopewatch_core::complexity::{Class, Complexity, UNSURE};
pub use slopewatch_core::format::{
    count, duration, factor, factor_text, failure, grouped, short_value, significant, size, value,
};
use slopewatch_core::wire::{Contract, Metric, SizeUnit};
use std::borrow::Borrow;

/// A class as events and timelines write it: `"n^2"`, `"unsure"`, or `None` with no complexity.
pub fn class_text(complexity: Option<&Complexity>) -> Option<String> {
    complexity.map(|c| c.class.map_or(UNSURE, Class::as_str).to_string())
}

/// A class as people read it: `"O(n²)"`, `"unsure"`, or `None` with no complexity.
pub fn class_label(complexity: Option<&Complexity>) -> Option<&'static str> {
    complexity.map(|c| label(c.class))
}

/// A named class as people read it, `"O(n²)"`, or `"unsure"` for none.
pub fn label(class: Option<Class>) -> &'static str {
    class.map_or(UNSURE, Class::label)
}

/// A class step as people read it: `"O(n) → O(n²)"`; `None` unless both ends have a complexity.
pub fn class_step(before: Option<&Complexity>, after: Option<&Complexity>) -> Option<String> {
    Some(format!("{} → {}", class_label(before)?, class_label(after)?))
}

/// `class_step` from classes as the API writes them (`"n"`, `"n^2"`, `"unsure"`); `None` unless
/// both are known.
pub fn class_step_of_text(before: Option<&str>, after: Option<&str>) -> Option<String> {
    Some(format!("{} → {}", class_label_of_text(before?)?, class_label_of_text(after?)?))
}

/// A class as the API writes it (`"n^2"`, `"unsure"`) as people read it (`"O(n²)"`).
pub fn class_label_of_text(text: &str) -> Option<&'static str> {
    match text {
        UNSURE => Some(UNSURE),
        text => Class::parse(text).map(Class::label),
    }
}

/// A change of cost in words, with the classes people read at both versions where known: "cost
/// 4.20× at 64 KiB, O(n) both", or "…, O(n) → O(n log n) within the noise" where they differ but
/// no step is shown. The version page, the cost rule's timeline, regression pages and webhooks
/// all say it so.
pub fn cost_change(ratio: f64, size: u64, unit: SizeUnit, before: Option<&str>, after: Option<&str>) -> String {
    let classes = match (before, after) {
        (Some(b), Some(a)) if a == b => format!(", {a} both"),
        (Some(b), Some(a)) => format!(", {b} → {a} within the noise"),
        _ => String::new(),
    };
    format!("cost {} at {}{classes}", factor(ratio), self::size(size, unit))
}

/// A size without its unit word where the axis title names it: `64 KiB`, `10k`.
pub fn size_short(size: u64, unit: impl Borrow<SizeUnit>) -> String {
    let unit = *unit.borrow();
    if unit == SizeUnit::Bytes {
        return self::size(size, unit);
    }
    let value = size as f64;
    if value >= 1e6 {
        format!("{}M", significant(value / 1e6))
    } else if value >= 1e4 {
        format!("{}k", significant(value / 1e3))
    } else {
        grouped(size)
    }
}

/// A moment in UTC to the minute: `2026-11-29 21:00 UTC`.
pub fn timestamp(t: time::OffsetDateTime) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute] UTC");
    t.to_offset(time::UtcOffset::UTC).format(&format).unwrap_or_default()
}

/// How long before `now` a moment was, as a page says it: `just now`, `40 s ago`, `3 min ago`,
/// `5 h ago`, `4 days ago`. A moment after `now` (another replica's clock) is `just now`.
pub fn ago(then: time::OffsetDateTime, now: time::OffsetDateTime) -> String {
    let seconds = (now - then).whole_seconds();
    match seconds {
        ..=0 => "just now".into(),
        1..120 => format!("{seconds} s ago"),
        120..7200 => format!("{} min ago", seconds / 60),
        7200..172_800 => format!("{} h ago", seconds / 3600),
        _ => format!("{} days ago", seconds / 86_400),
    }
}

/// A slope to two decimals, the precision the fits carry meaningfully.
pub fn slope(k: f64) -> String {
    format!("{k:.2}")
}

/// How much slower (ratio > 1) or faster `b` is than `a`, in `metric`: slower or faster for
/// times, more or fewer for counts, the multiplier by [`factor`]'s rule: `31,200× slower`,
/// `1.90× faster`, `4.00× more`, `same`.
pub fn ratio_in(metric: Metric, ratio: f64) -> String {
    if !ratio.is_finite() || ratio <= 0.0 {
        return "—".into();
    }
    if (ratio - 1.0).abs() < 0.005 {
        return "same".into();
    }
    let (up, down) = if metric.is_count() { ("more", "fewer") } else { ("slower", "faster") };
    let (factor, word) = if ratio > 1.0 { (ratio, up) } else { (1.0 / ratio, down) };
    format!("{} {word}", self::factor(factor))
}

/// A ratio's interval in the words of `ratio_in`: `1.02×–1.10× slower`, `1.02×–1.10× faster`, or
/// `1.10× faster to 2.04× slower` across 1; `None` where it is not finite or its ends read as one
/// figure (`low` and `high` the later value over the earlier, as the ratio).
pub fn ratio_interval_in(metric: Metric, low: f64, high: f64) -> Option<String> {
    if !(low.is_finite() && high.is_finite() && low > 0.0) || factor(low) == factor(high) {
        return None;
    }
    let (up, down) = if metric.is_count() { ("more", "fewer") } else { ("slower", "faster") };
    Some(if low >= 1.0 {
        format!("{}–{} {up}", factor(low), factor(high))
    } else if high <= 1.0 {
        format!("{}–{} {down}", factor(1.0 / high), factor(1.0 / low))
    } else {
        format!("{} {down} to {} {up}", factor(1.0 / low), factor(high))
    })
}

/// A signed slope difference: `+0.98`, `−0.02`.
pub fn delta(d: f64) -> String {
    if d < 0.0 {
        format!("−{:.2}", -d)
    } else {
        format!("+{d:.2}")
    }
}

/// Text with its first letter upper-case, to start a sentence.
pub fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// What a broken contract means, for a regression's page and its webhooks: "strcspn now reads the
/// whole remaining string: cost ∝ remaining^1.00, O(1) at 0.15.2. A loop that calls it once per
/// token over n bytes is O(n²)." `exponent` is the growth measured at the bad version, `previous`
/// the last version that held the contract (none for a first version already over it).
pub fn contract_break(contract: &Contract, exponent: Option<f64>, previous: Option<&str>) -> String {
    let who = if contract.function.is_empty() { "it".to_string() } else { contract.function.clone() };
    let what = if contract.broken.is_empty() {
        format!("costs more than {}", contract.expected.label())
    } else {
        contract.broken.clone()
    };
    let axis = if contract.axis.is_empty() { "n" } else { contract.axis.as_str() };
    let cost = exponent.map(|k| format!(": cost ∝ {axis}^{k:.2}")).unwrap_or_default();
    let held = match previous {
        Some(v) => format!(", {} at {v}", contract.expected.label()),
        None => format!(", held to {}", contract.expected.label()),
    };
    let consequence =
        if contract.consequence.is_empty() { String::new() } else { format!(" {}", contract.consequence) };
    format!("{who} now {what}{cost}{held}.{consequence}")
}

/// "a", "a and b", "a, b and c", past four "a, b, c, d and 3 more".
pub fn and_list(items: &[&str]) -> String {
    const SHOWN: usize = 4;
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        _ if items.len() > SHOWN => format!("{} and {} more", items[..SHOWN].join(", "), items.len() - SHOWN),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_read_as_the_api_and_people_write_them() {
        let c = slopewatch_core::complexity::classify(
            &(1..=6)
                .map(|i| {
                    let n = 1000.0 * f64::from(1 << i);
                    (n, n * n)
                })
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert_eq!(class_text(Some(&c)).as_deref(), Some("n^2"));
        assert_eq!(class_label(Some(&c)), Some("O(n²)"));
        let unsure = Complexity { class: None, ..c.clone() };
        assert_eq!(class_text(Some(&unsure)).as_deref(), Some("unsure"));
        assert_eq!(class_step(Some(&unsure), Some(&c)).as_deref(), Some("unsure → O(n²)"));
        assert_eq!(class_step_of_text(Some("n"), Some("n^3")).as_deref(), Some("O(n) → O(n³)"));
        assert_eq!(class_step_of_text(None, Some("n^3")), None);
        assert_eq!(class_label_of_text("<b>"), None);
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(duration(850.0), "850 ns");
        assert_eq!(duration(12_345.0), "12.3 µs");
        assert_eq!(duration(4_560_000.0), "4.56 ms");
        assert_eq!(duration(2.8e9), "2.8 s");
        assert_eq!(duration(46e9), "46 s");
        assert_eq!(duration(f64::NAN), "—");
    }

    #[test]
    fn sizes_use_binary_prefixes_for_bytes_and_grouped_counts_otherwise() {
        assert_eq!(size(65536, SizeUnit::Bytes), "64 KiB");
        assert_eq!(size(1 << 20, SizeUnit::Bytes), "1 MiB");
        assert_eq!(size(3 << 19, SizeUnit::Bytes), "1.5 MiB");
        assert_eq!(size(100, SizeUnit::Bytes), "100 B");
        assert_eq!(size(10_000, SizeUnit::Records), "10,000 records");
        assert_eq!(size_short(16_000, SizeUnit::Records), "16k");
        assert_eq!(size_short(2_000_000, SizeUnit::Records), "2M");
        assert_eq!(size_short(500, SizeUnit::Items), "500");
    }

    #[test]
    fn ratios_say_slower_or_faster() {
        assert_eq!(ratio_in(Metric::Wall, 31_234.0), "31,200× slower");
        assert_eq!(ratio_in(Metric::Wall, 2.0), "2.00× slower");
        assert_eq!(ratio_in(Metric::Wall, 0.5), "2.00× faster");
        assert_eq!(ratio_in(Metric::Wall, 1.001), "same");
        assert_eq!(ratio_in(Metric::Wall, 123.4), "123× slower");
        assert_eq!(ratio_in(Metric::Wall, 3603.4), "3,600× slower");
        assert_eq!(ratio_in(Metric::InstructionsValgrind, 4.0), "4.00× more");
        assert_eq!(ratio_interval_in(Metric::Wall, 1.02, 1.1).as_deref(), Some("1.02×–1.10× slower"));
        assert_eq!(ratio_interval_in(Metric::Wall, 0.5, 0.8).as_deref(), Some("1.25×–2.00× faster"));
        assert_eq!(ratio_interval_in(Metric::Wall, 0.5, 2.04).as_deref(), Some("2.00× faster to 2.04× slower"));
        assert_eq!(ratio_interval_in(Metric::InstructionsPerf, 0.9, 1.2).as_deref(), Some("1.11× fewer to 1.20× more"));
        assert_eq!(ratio_interval_in(Metric::Wall, 349.5, 349.52), None, "one figure");
        assert_eq!(ratio_interval_in(Metric::Wall, 0.0, f64::INFINITY), None);
        assert_eq!(ratio_in(Metric::InstructionsPerf, 0.5), "2.00× fewer");
        assert_eq!(ratio_in(Metric::Cpu, 0.5), "2.00× faster");
        assert_eq!(delta(0.98), "+0.98");
        assert_eq!(delta(-0.02), "−0.02");
    }

    #[test]
    fn moments_read_as_how_long_ago_they_were() {
        let now = time::macros::datetime!(2026-11-29 21:00 UTC);
        let ago_s = |s: i64| ago(now - time::Duration::seconds(s), now);
        assert_eq!(ago_s(-5), "just now");
        assert_eq!(ago_s(0), "just now");
        assert_eq!(ago_s(40), "40 s ago");
        assert_eq!(ago_s(119), "119 s ago");
        assert_eq!(ago_s(200), "3 min ago");
        assert_eq!(ago_s(7199), "119 min ago");
        assert_eq!(ago_s(5 * 3600), "5 h ago");
        assert_eq!(ago_s(4 * 86_400 + 10), "4 days ago");
    }
}
