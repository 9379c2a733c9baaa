//! Numbers as people read them, the same on the server's pages and webhooks and in the agent's
//! terminal and reports: durations, counts, a value in its metric's unit, sizes in a workload's
//! unit, ratios.

use crate::wire::{signal_name, Failure, FailureKind, Metric, SizeUnit};
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

/// A failure in one line, its size in the workload's unit: `wrong result at 64 KiB: got -1,
/// expected 9362`, `crashed at 1 MiB: signal 11 (SIGSEGV)`, `timed out at 128 B: limit 0.3 s`.
pub fn failure(f: &Failure, unit: impl Borrow<SizeUnit>) -> String {
    let mut s = f.kind.label().to_string();
    if let Some(at) = f.size {
        s.push_str(&format!(" at {}", size(at, unit)));
    }
    match f.kind {
        FailureKind::WrongResult => {
            if let (Some(got), Some(expected)) = (&f.got, &f.expected) {
                s.push_str(&format!(": got {got}, expected {expected}"));
            }
        }
        FailureKind::Crashed | FailureKind::BuildFailed => match (f.signal, f.exit_status) {
            (Some(sig), _) => s.push_str(&format!(": signal {sig}{}", signal_name(sig))),
            (None, Some(code)) => s.push_str(&format!(": exit status {code}")),
            (None, None) => {}
        },
        FailureKind::TimedOut => {
            if let Some(ms) = f.limit_ms {
                s.push_str(&format!(": limit {}", duration(ms as f64 * 1e6)));
            }
        }
        FailureKind::SetupFailed => {}
    }
    s
}

/// A change of regime as the agent and the pages say it: `jumps 33.0× at 16 KiB`, or `drops 25.0×
/// at 16 KiB` for a cost that falls.
pub fn regime_step(step: &crate::complexity::RegimeStep, unit: impl Borrow<SizeUnit>) -> String {
    let (how, by) = if step.factor >= 1.0 { ("jumps", step.factor) } else { ("drops", 1.0 / step.factor) };
    format!("{how} {} at {}", factor(by), size(step.at as u64, unit))
}

/// A ratio as every page, export, webhook and terminal writes it: three significant figures,
/// trailing zeros kept so the precision shows, digits grouped by thousands, and the `×` sign:
/// `1.00×`, `0.500×`, `12.3×`, `123×`, `3,600×`, `31,200×`. `—` for a ratio that is not a
/// positive finite number.
pub fn factor(ratio: f64) -> String {
    match factor_digits(ratio) {
        Some(digits) => format!("{digits}×"),
        None => "—".into(),
    }
}

/// [`factor`] without its `×`, for a sentence that puts the sign elsewhere (`3,600× slower`).
pub fn factor_text(ratio: f64) -> String {
    factor_digits(ratio).unwrap_or_else(|| "—".into())
}

/// The digits of a ratio to three significant figures; `None` unless positive and finite.
fn factor_digits(ratio: f64) -> Option<String> {
    if !ratio.is_finite() || ratio <= 0.0 {
        return None;
    }
    let mut exponent = ratio.log10().floor() as i32;
    let unit = 10f64.powi(exponent - 2);
    let rounded = (ratio / unit).round() * unit;
    // Rounding may carry into the next decade: 9.996 is 10.0, not 10.00.
    if rounded >= 10f64.powi(exponent + 1) {
        exponent += 1;
    }
    Some(if exponent >= 2 { grouped(rounded.round() as u64) } else { format!("{rounded:.*}", (2 - exponent) as usize) })
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
        assert_eq!(factor_text(8123.0), "8,120");
        assert_eq!(factor_text(3.456), "3.46");
    }

    #[test]
    fn failures_give_their_size_in_the_workloads_unit() {
        let f = |json| serde_json::from_value::<Failure>(json).unwrap();
        let wrong = f(serde_json::json!({"kind": "wrong_result", "size": 262144, "got": "-1", "expected": "37449"}));
        assert_eq!(failure(&wrong, SizeUnit::Bytes), "wrong result at 256 KiB: got -1, expected 37449");
        let crashed = f(serde_json::json!({"kind": "crashed", "size": 40000, "signal": 11}));
        assert_eq!(failure(&crashed, SizeUnit::Records), "crashed at 40,000 records: signal 11 (SIGSEGV)");
        let slow = f(serde_json::json!({"kind": "timed_out", "size": 128, "limit_ms": 300}));
        assert_eq!(failure(&slow, SizeUnit::Bytes), "timed out at 128 B: limit 300 ms");
        let built = f(serde_json::json!({"kind": "build_failed", "exit_status": 1}));
        assert_eq!(failure(&built, SizeUnit::Bytes), "build failed: exit status 1");
    }

    #[test]
    fn ratios_have_three_significant_figures_and_grouped_digits() {
        assert_eq!(factor(1.0), "1.00×");
        assert_eq!(factor(3603.4), "3,600×");
        assert_eq!(factor(12.34), "12.3×");
        assert_eq!(factor(0.5), "0.500×");
        assert_eq!(factor(123.4), "123×");
        assert_eq!(factor(31_234.0), "31,200×");
        assert_eq!(factor(9.996), "10.0×");
        assert_eq!(factor(99.96), "100×");
        assert_eq!(factor(999.6), "1,000×");
        assert_eq!(factor(0.001234), "0.00123×");
        assert_eq!(factor(2.0), "2.00×");
        assert_eq!(factor(f64::NAN), "—");
        assert_eq!(factor(0.0), "—");
        assert_eq!(factor(-2.0), "—");
        assert_eq!(factor_text(3603.4), "3,600");
    }
}
