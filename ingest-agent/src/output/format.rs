//! How sizes and times read, in the table and on the progress line.

use slopewatch_core::wire::{Metric, SizeUnit};

pub fn format_size(size: u64, unit: SizeUnit) -> String {
    match unit {
        SizeUnit::Bytes if size >= 1 << 20 && size % (1 << 20) == 0 => {
            format!("{} MiB", size >> 20)
        }
        SizeUnit::Bytes if size >= 1 << 10 && size % (1 << 10) == 0 => {
            format!("{} KiB", size >> 10)
        }
        SizeUnit::Bytes => format!("{size} B"),
        other => format!("{size} {other}"),
    }
}

/// A median by its metric: a time, or a count of instructions.
pub fn format_value(value: f64, metric: Metric) -> String {
    if metric.is_count() {
        slopewatch_core::format::value(metric, value)
    } else {
        format_ns(value)
    }
}

pub fn format_ns(ns: f64) -> String {
    if !ns.is_finite() {
        "-".into()
    } else if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.1} µs", ns / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_times_read_naturally() {
        assert_eq!(format_size(4 << 20, SizeUnit::Bytes), "4 MiB");
        assert_eq!(format_size(65536, SizeUnit::Bytes), "64 KiB");
        assert_eq!(format_size(5000, SizeUnit::Records), "5000 records");
        assert_eq!(format_ns(2.5e9), "2.50 s");
        assert_eq!(format_ns(1.5e6), "1.50 ms");
    }
}
