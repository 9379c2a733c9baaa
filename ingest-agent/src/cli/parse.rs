//! The value parsers of the command line: each refuses a bad value with the reason, as a usage
//! error.

use slopewatch_core::lineage::LineageVersion;
use slopewatch_core::wire::{Counter, Measure, SizeUnit, VersionFrom};
use std::path::PathBuf;

pub(super) fn parse_slope(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 10.0 => Ok(v),
        _ => Err(format!("{s:?} is not a slope between 0 and 10")),
    }
}

pub(super) fn parse_measure(s: &str) -> Result<Measure, String> {
    Measure::parse(s.trim()).ok_or_else(|| format!("{s:?} is not a measure: wall, cpu or instructions"))
}

pub(super) fn parse_counter(s: &str) -> Result<Counter, String> {
    match s.trim() {
        "perf" => Ok(Counter::Perf),
        "valgrind" => Ok(Counter::Valgrind),
        _ => Err(format!("{s:?} is not a counter: perf or valgrind")),
    }
}

pub(super) fn parse_min_r2(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not an R² between 0 and 1")),
    }
}

/// A path that may be empty: an environment variable set to nothing is not a usage error.
pub(super) fn parse_maybe_path(s: &str) -> Result<PathBuf, String> {
    Ok(PathBuf::from(s))
}

/// A file for `--junit`: CI reads test results from a file, so `-` (stdout, as `--report` takes it)
/// is refused rather than written as a file of that name.
pub(super) fn parse_junit_path(s: &str) -> Result<PathBuf, String> {
    match s {
        "" => Err("give a file to write the JUnit XML to".into()),
        "-" => Err("the JUnit XML goes to a file, not stdout: give its path".into()),
        s => Ok(PathBuf::from(s)),
    }
}

pub(super) fn parse_baseline(s: &str) -> Result<LineageVersion, String> {
    crate::server::baseline::parse_spec(s).map_err(|e| format!("{e:#}"))
}

pub(super) fn parse_ci_margin(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a margin of 0 or more")),
    }
}

pub(super) fn one_line(s: &str) -> Result<String, String> {
    if s.trim().is_empty() || s.chars().any(char::is_control) {
        return Err("must be non-empty text on one line".into());
    }
    Ok(s.to_string())
}

pub(super) fn parse_version_from(s: &str) -> Result<VersionFrom, String> {
    VersionFrom::parse(s).ok_or_else(|| format!("{s:?} is neither compiler nor libc"))
}

pub(super) fn parse_unit(s: &str) -> Result<SizeUnit, String> {
    SizeUnit::parse(s).ok_or_else(|| format!("{s:?} is not a size unit: bytes, records, items or iterations"))
}
