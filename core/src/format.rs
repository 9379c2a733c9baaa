//! Numbers as people read them, the same on the server's pages and webhooks and in the agent's
//! terminal and reports: durations, counts, a value in its metric's unit, sizes in a workload's
//! unit, multipliers.

use crate::wire::{Metric, SizeUnit};
use std::borrow::Borrow;

/// A duration given in nanoseconds, to three significant digits: `850 ns`, `12.3 µs`, `2.8 s`,
/// and past two minutes `5.4 min` or `2.1 h`.
pub fn duration(ns: f64) -> String {
    if !ns.is_finite() {
        return "—".into();
    }
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else if ns < 120e9 {
        (ns / 1e9, "s")
    } else if ns < 7200e9 {
        (ns / 60e9, "min")
    } else {
        (ns / 3600e9, "h")
    };
    format!("{} {unit}", significant(value))
}

/// A count, such as instructions retired: grouped digits below ten thousand (`8,123`), then three
/// significant digits with a decimal prefix (`208k`, `12.7M`, `3.19G`).
pub fn count(n: f64) -> String {
    if !n.is_finite() || n < 0.0 {
        return "—".into();
    }
    if n < 1e4 {
        return grouped(n.round() as u64);
    }
    let (value, prefix) = if n < 1e6 {
        (n / 1e3, "k")
    } else if n < 1e9 {
        (n / 1e6, "M")
    } else if n < 1e12 {
        (n / 1e9, "G")
    } else {
        (n / 1e12, "T")
    };
    format!("{}{prefix}", significant(value))
}

/// A value of a series in its metric's unit, as a sentence or a table gives it: a duration for
/// wall and CPU time (`2.8 s`), a count for instructions (`12.7M instructions`).
pub fn value(metric: Metric, v: f64) -> String {
    if metric.is_count() {
        format!("{} instructions", count(v))
    } else {
        duration(v)
    }
}

/// [`value`] where the unit is named beside it, as on a chart's axis: `2.8 s`, or `12.7M`.
pub fn short_value(metric: Metric, v: f64) -> String {
    if metric.is_count() {
        count(v)
    } else {
        duration(v)
    }
}

/// A size in the workload's unit: binary prefixes for bytes (`64 KiB`, `1.5 MiB`), grouped
/// digits and the unit's name otherwise (`10,000 records`). Templates hand the unit by reference.
pub fn size(size: u64, unit: impl Borrow<SizeUnit>) -> String {
    let unit = *unit.borrow();
    if unit == SizeUnit::Bytes {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut value = size as f64;
        let mut i = 0;
        while value >= 1024.0 && i + 1 < UNITS.len() {
            value /= 1024.0;
            i += 1;
        }
        format!("{} {}", significant(value), UNITS[i])
    } else {
        format!("{} {unit}", grouped(size))
    }
}

/// A multiplier alone: `1.04`, `3.2`, `31,000`.
pub fn factor_text(factor: f64) -> String {
    if factor >= 1000.0 {
        // Two significant digits are all a ratio of thousands can claim from timing noise.
        let magnitude = 10f64.powi(factor.log10().floor() as i32 - 1);
        grouped(((factor / magnitude).round() * magnitude) as u64)
    } else if factor >= 100.0 {
        grouped(factor.round() as u64)
    } else {
        significant(factor)
    }
}

/// Three significant digits without trailing zeros beyond them: `1`, `12.3`, `850`, `2.8`.
pub fn significant(value: f64) -> String {
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Digits grouped by thousands: `31,000`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_past_two_minutes_read_in_minutes_and_hours() {
        assert_eq!(duration(850.0), "850 ns");
        assert_eq!(duration(2.8e9), "2.8 s");
        assert_eq!(duration(119e9), "119 s");
        assert_eq!(duration(324e9), "5.4 min");
        assert_eq!(duration(7560e9), "2.1 h");
    }

    #[test]
    fn counts_group_their_digits_then_take_a_prefix_and_values_read_in_their_metric() {
        assert_eq!(count(850.0), "850");
        assert_eq!(count(8123.4), "8,123");
        assert_eq!(count(208_198.0), "208k");
        assert_eq!(count(12_675_142.0), "12.7M");
        assert_eq!(count(3_191_878_000.0), "3.19G");
        assert_eq!(count(f64::NAN), "—");
        assert_eq!(value(Metric::InstructionsValgrind, 50_516_038.0), "50.5M instructions");
        assert_eq!(value(Metric::Wall, 2.8e9), "2.8 s");
        assert_eq!(value(Metric::Cpu, 850.0), "850 ns");
        assert_eq!(short_value(Metric::InstructionsPerf, 2e7), "20M");
        assert_eq!(short_value(Metric::Wall, 2e7), "20 ms");
    }

    #[test]
    fn sizes_and_factors_read_in_the_unit() {
        assert_eq!(size(4 << 20, SizeUnit::Bytes), "4 MiB");
        assert_eq!(size(40_000, SizeUnit::Records), "40,000 records");
        assert_eq!(factor_text(8123.0), "8,100");
        assert_eq!(factor_text(3.456), "3.46");
    }
}
