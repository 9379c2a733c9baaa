//! Google Benchmark's JSON output: each family with a size argument is a workload, each
//! repetition a sample (its `real_time`); the `_BigO` and `_RMS` rows go into the metadata.

use super::{not_json, sample_ns, valid_size, At, Parsed};
use anyhow::{bail, Result};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Statistics Google computes over repetitions; the repetitions themselves are the samples.
const AGGREGATE_SUFFIXES: [&str; 4] = ["_mean", "_median", "_stddev", "_cv"];

pub(super) fn parse(path: &Path, text: &str) -> Result<Parsed> {
    let text = non_finite_as_null(text);
    let root: Value = serde_json::from_str(&text).map_err(|e| not_json(path, &e))?;
    let Some(root) = root.as_object() else {
        bail!(
            "{}: expected a JSON object with a `benchmarks` array (Google Benchmark's --benchmark_format=json)",
            At::new(path, "")
        );
    };
    let Some(rows) = root.get("benchmarks") else {
        bail!("{}: missing (is this Google Benchmark's --benchmark_format=json output?)", At::new(path, "benchmarks"));
    };
    let Some(rows) = rows.as_array() else {
        bail!("{}: expected an array", At::new(path, "benchmarks"));
    };
    let mut parsed = Parsed {
        started_at: root
            .get("context")
            .and_then(|c| c.get("date"))
            .and_then(Value::as_str)
            .and_then(|d| OffsetDateTime::parse(d, &Rfc3339).ok()),
        ..Parsed::default()
    };
    // Google's verdicts by family (the name without arguments), kept until every row is read.
    let mut verdicts: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    // The workloads each family was split into (by its arguments after the size).
    let mut split: BTreeMap<String, Vec<String>> = BTreeMap::new();

    for (i, row) in rows.iter().enumerate() {
        let place = format!("benchmarks[{i}]");
        let at = |key: &str| At::new(path, format!("{place}.{key}"));
        let Some(row) = row.as_object() else {
            bail!("{}: expected an object", At::new(path, &place));
        };
        let name = string(row, "name", &at)?;
        let (aggregate, verdict) = kind(row, name, &at)?;
        if let Some(verdict) = verdict {
            let family = Name::parse(name.trim_end_matches("_BigO").trim_end_matches("_RMS")).family();
            let entry = match verdict {
                ComplexityAggregate::BigO => {
                    ("google_benchmark.big_o".to_string(), string(row, "big_o", &at)?.to_string())
                }
                ComplexityAggregate::Rms => {
                    ("google_benchmark.rms".to_string(), format!("{:.0}%", number(row, "rms", &at)? * 100.0))
                }
            };
            verdicts.entry(family).or_default().push(entry);
            continue;
        }
        if aggregate {
            continue;
        }
        if row.get("error_occurred").and_then(Value::as_bool) == Some(true) {
            parsed.skipped.add("the benchmark reported an error", name);
            continue;
        }
        let parsed_name = Name::parse(name);
        // Written by the benchmark itself (as a counter, so possibly as a float).
        let size = match row.get("complexity_n") {
            Some(n) => match n.as_f64() {
                Some(n) if n >= 1.0 && n.fract() == 0.0 => Some(n as i128),
                _ => bail!("{}: expected a positive whole number, found {n}", at("complexity_n")),
            },
            None => parsed_name.size,
        };
        let Some(size) = size else {
            parsed.skipped.add("no numeric size argument", name);
            continue;
        };
        let Some(size) = valid_size(size) else {
            parsed.skipped.add("a size below 1 or above 2^50", name);
            continue;
        };
        let ns = sample_ns(
            number(row, "real_time", &at)? * unit_ns(string(row, "time_unit", &at)?, &at)?,
            &at("real_time"),
        )?;
        let workload = parsed_name.workload();
        let names = split.entry(parsed_name.family()).or_default();
        if !names.contains(&workload) {
            names.push(workload.clone());
        }
        parsed.family(&workload, || At::new(path, &place)).samples.entry(size).or_default().push(ns);
    }

    // A verdict covers every instance of a family; it is kept only where the family is one workload.
    for (family, entries) in verdicts {
        if let Some([workload]) = split.get(&family).map(Vec::as_slice) {
            if let Some(f) = parsed.families.iter_mut().find(|f| &f.name == workload) {
                f.metadata.extend(entries);
            }
        }
    }
    parsed.skip_single_sizes();
    Ok(parsed)
}

/// Google writes `NaN` and `Infinity` for numbers it could not compute (a counter divided by
/// zero, a time never measured), which JSON does not allow. They are read as `null`, so a file
/// holding one still parses, and a time that is one is refused by its key.
fn non_finite_as_null(text: &str) -> Cow<'_, str> {
    if !text.contains("NaN") && !text.contains("Infinity") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if !in_string {
            if let Some(word) = ["NaN", "-Infinity", "Infinity"].into_iter().find(|w| rest.starts_with(w)) {
                out.push_str("null");
                rest = &rest[word.len()..];
                continue;
            }
        }
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => in_string = !in_string,
            _ => {}
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ComplexityAggregate {
    BigO,
    Rms,
}

/// Whether a row is an aggregate, and whether it is one of Google's complexity verdicts. Rows of
/// releases before `run_type` are told by their name's suffix.
fn kind(row: &Map<String, Value>, name: &str, at: &impl Fn(&str) -> At) -> Result<(bool, Option<ComplexityAggregate>)> {
    let aggregate_name = match row.get("run_type") {
        Some(Value::String(t)) if t == "aggregate" => Some(
            row.get("aggregate_name").and_then(Value::as_str).unwrap_or_else(|| name.rsplit('_').next().unwrap_or("")),
        ),
        Some(Value::String(t)) if t == "iteration" => None,
        Some(other) => bail!("{}: expected \"iteration\" or \"aggregate\", found {other}", at("run_type")),
        None => {
            let suffix = ["_BigO", "_RMS"].into_iter().chain(AGGREGATE_SUFFIXES).find(|s| name.ends_with(s));
            suffix.map(|s| &s[1..])
        }
    };
    Ok(match aggregate_name {
        Some("BigO") => (true, Some(ComplexityAggregate::BigO)),
        Some("RMS") => (true, Some(ComplexityAggregate::Rms)),
        Some(_) => (true, None),
        None => (false, None),
    })
}

fn string<'a>(row: &'a Map<String, Value>, key: &str, at: &impl Fn(&str) -> At) -> Result<&'a str> {
    match row.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => bail!("{}: expected a string, found {other}", at(key)),
        None => bail!("{}: missing", at(key)),
    }
}

fn number(row: &Map<String, Value>, key: &str, at: &impl Fn(&str) -> At) -> Result<f64> {
    match row.get(key) {
        Some(Value::Number(n)) => Ok(n.as_f64().unwrap_or(f64::NAN)),
        Some(Value::Null) => bail!("{}: not a number (NaN, infinite or null)", at(key)),
        Some(other) => bail!("{}: expected a number, found {other}", at(key)),
        None => bail!("{}: missing", at(key)),
    }
}

/// Nanoseconds per `time_unit`.
fn unit_ns(unit: &str, at: &impl Fn(&str) -> At) -> Result<f64> {
    Ok(match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => bail!("{}: unknown unit {other:?} (expected ns, us, ms or s)", at("time_unit")),
    })
}

/// A benchmark's name taken apart: `BM_Stride/4096/16/min_time:0.010/repeats:3/threads:2` is the
/// function `BM_Stride`, the arguments 4096 and 16, and the thread count.
#[derive(Debug, PartialEq, Eq)]
struct Name {
    /// The function's name (anything before the first argument).
    function: String,
    /// The arguments, each as written (`4096`, or `len:4096` with ArgNames).
    args: Vec<String>,
    /// The first argument's value: the size.
    size: Option<i128>,
    /// What changes the measurement besides the arguments: `threads:N`, and any segment not known.
    rest: Vec<String>,
}

impl Name {
    fn parse(name: &str) -> Name {
        let mut function: Vec<&str> = Vec::new();
        let mut args = Vec::new();
        let mut rest = Vec::new();
        for segment in name.split('/') {
            let value = segment.rsplit_once(':').map_or(segment, |(_, v)| v);
            let is_arg = value.parse::<i64>().is_ok() && segment.split_once(':').is_none_or(|(k, _)| !k.is_empty());
            if is_modifier(segment.split(':').next().unwrap_or("")) {
                if segment.starts_with("threads:") {
                    rest.push(segment.to_string());
                }
            } else if is_arg && rest.is_empty() && !function.is_empty() {
                args.push(segment.to_string());
            } else if args.is_empty() && rest.is_empty() {
                function.push(segment);
            } else {
                rest.push(segment.to_string());
            }
        }
        let size = args.first().and_then(|a| a.rsplit(':').next()).and_then(|v| v.parse::<i128>().ok());
        Name { function: function.join("/"), args, size, rest }
    }

    /// The family's name without arguments: what Google's `_BigO` row is named after.
    fn family(&self) -> String {
        std::iter::once(self.function.clone()).chain(self.rest.iter().cloned()).collect::<Vec<_>>().join("/")
    }

    /// The workload: the family, and when it has several arguments the others too, with the
    /// size's place shown as `N` (`BM_Stride/N/16`, `BM_X/len:N/stride:16`).
    fn workload(&self) -> String {
        let mut parts = vec![self.function.clone()];
        if self.args.len() > 1 {
            parts.push(match self.args[0].split_once(':') {
                Some((k, _)) => format!("{k}:N"),
                None => "N".to_string(),
            });
            parts.extend(self.args[1..].iter().cloned());
        }
        parts.extend(self.rest.iter().cloned());
        parts.join("/")
    }
}

/// Segments Google appends for how a benchmark was run rather than what it measures, and
/// `threads`, which is kept.
fn is_modifier(key: &str) -> bool {
    matches!(
        key,
        "min_time"
            | "min_warmup_time"
            | "iterations"
            | "repeats"
            | "real_time"
            | "manual_time"
            | "process_time"
            | "threads"
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::import;
    use super::super::Format;
    use super::Name;
    use serde_json::json;

    /// A real output of tests/fixtures/google-benchmark/scan.cc (Google Benchmark 1.7.1).
    const SCAN: &str = include_str!("../../tests/fixtures/google-benchmark/scan.json");

    fn gb(rows: serde_json::Value) -> String {
        // Pretty, one key a line, as Google writes it.
        serde_json::to_string_pretty(&json!({"context": {"date": "2026-12-01T04:00:00+00:00"}, "benchmarks": rows}))
            .unwrap()
    }

    fn row(name: &str, real_time: f64) -> serde_json::Value {
        json!({"name": name, "run_type": "iteration", "real_time": real_time, "cpu_time": 1.0, "time_unit": "ns"})
    }

    #[test]
    fn a_real_file_gives_one_workload_per_family_with_each_repetition_a_sample() {
        let imported = import(Format::GoogleBenchmark, "scan.json", SCAN).unwrap();
        let names: Vec<&str> = imported.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["BM_Strchr", "BM_StrlenStrchr", "BM_Stride/N/16", "BM_Stride/N/64"]);
        let strchr = &imported.workloads[0];
        let sizes: Vec<u64> = strchr.measurements.iter().map(|m| m.size).collect();
        assert_eq!(sizes, [4096, 8192, 16384, 32768, 65536]);
        assert!(strchr.measurements.iter().all(|m| m.samples_ns.len() == 3), "three repetitions, no aggregates");
        assert_eq!(strchr.metadata["google_benchmark.big_o"], "N");
        assert!(strchr.metadata["google_benchmark.rms"].ends_with('%'));
        let quadratic = &imported.workloads[1];
        assert_eq!(quadratic.metadata["google_benchmark.big_o"], "N^2");
        // Reported in microseconds; the first repetition at 2048 bytes, in nanoseconds.
        let first = SCAN.split_once("\"BM_StrlenStrchr/2048/").unwrap().1;
        let us: f64 = first.split_once("\"real_time\": ").unwrap().1.split(',').next().unwrap().parse().unwrap();
        assert_eq!(quadratic.measurements[0].samples_ns[0], us * 1e3);
        assert!(!imported.workloads[2].metadata.contains_key("google_benchmark.big_o"));
        assert_eq!(imported.warnings, ["scan.json: skipped (no numeric size argument): BM_Setup/min_time:0.010"]);
        assert_eq!(imported.started_at.unwrap().year(), 2026);
    }

    #[test]
    fn names_lose_their_size_and_run_settings_and_keep_what_changes_the_measurement() {
        let cases = [
            ("BM_Lex/4096", "BM_Lex", Some(4096)),
            ("BM_Lex/4096/min_time:0.010/repeats:3/real_time", "BM_Lex", Some(4096)),
            ("BM_X/8/64/iterations:10/threads:2", "BM_X/N/64/threads:2", Some(8)),
            ("BM_X/len:4096/stride:16", "BM_X/len:N/stride:16", Some(4096)),
            ("BM_Sort<std::vector<int>>/1024/manual_time", "BM_Sort<std::vector<int>>", Some(1024)),
            ("suite/lex/512", "suite/lex", Some(512)),
            ("BM_Fixed/process_time", "BM_Fixed", None),
            ("BM_Neg/-4", "BM_Neg", Some(-4)),
        ];
        for (name, workload, size) in cases {
            let n = Name::parse(name);
            assert_eq!((n.workload().as_str(), n.size), (workload, size), "{name}");
        }
    }

    #[test]
    fn a_counter_that_is_nan_does_not_stop_the_import_and_nan_in_a_name_stays() {
        let rows: Vec<_> = [1, 2, 4]
            .iter()
            .map(|&s| {
                let mut r = row(&format!("BM_NaN \\\"Infinity\\\"/{s}"), s as f64);
                r["bytes_per_second"] = json!(12345.0);
                r
            })
            .collect();
        let text = gb(json!(rows)).replace("12345.0", "NaN");
        let imported = import(Format::GoogleBenchmark, "b.json", &text).unwrap();
        assert_eq!(imported.workloads[0].name, "BM_NaN \\\"Infinity\\\"");
    }

    #[test]
    fn complexity_n_is_the_size_when_present() {
        let rows: Vec<_> = [(4, 100), (8, 200), (16, 400)]
            .iter()
            .map(|&(arg, n)| {
                let mut r = row(&format!("BM_Pairs/{arg}"), n as f64);
                r["complexity_n"] = json!(n as f64);
                r
            })
            .collect();
        let imported = import(Format::GoogleBenchmark, "b.json", &gb(json!(rows))).unwrap();
        let sizes: Vec<u64> = imported.workloads[0].measurements.iter().map(|m| m.size).collect();
        assert_eq!(sizes, [100, 200, 400]);
    }

    #[test]
    fn files_without_run_type_tell_aggregates_and_verdicts_by_their_suffix() {
        let mut rows = Vec::new();
        for size in [1, 2, 4] {
            rows.push(json!({"name": format!("BM_Old/{size}"), "real_time": size as f64, "time_unit": "ms"}));
            rows.push(json!({"name": format!("BM_Old/{size}_mean"), "real_time": 99.0, "time_unit": "ms"}));
        }
        rows.push(json!({"name": "BM_Old_BigO", "big_o": "N", "real_coefficient": 1.0}));
        rows.push(json!({"name": "BM_Old_RMS", "rms": 0.031}));
        let imported = import(Format::GoogleBenchmark, "old.json", &json!({"benchmarks": rows}).to_string()).unwrap();
        let w = &imported.workloads[0];
        assert_eq!(w.measurements.iter().map(|m| m.samples_ns.clone()).collect::<Vec<_>>(), [[1e6], [2e6], [4e6]]);
        assert_eq!(
            (w.metadata["google_benchmark.big_o"].as_str(), w.metadata["google_benchmark.rms"].as_str()),
            ("N", "3%")
        );
        assert!(imported.started_at.is_none());
    }

    #[test]
    fn single_points_errors_and_sizes_off_the_scale_are_skipped_with_a_warning() {
        let mut rows: Vec<_> = [1, 2, 4].iter().map(|&s| row(&format!("BM_A/{s}"), s as f64)).collect();
        rows.push(row("BM_A/0", 1.0));
        rows.push(row("BM_Copy/4096", 5.0));
        rows.push(json!({"name": "BM_Broken/8", "run_type": "iteration", "error_occurred": true,
                         "error_message": "no input", "real_time": 0.0, "time_unit": "ns"}));
        let imported = import(Format::GoogleBenchmark, "b.json", &gb(json!(rows))).unwrap();
        assert_eq!(imported.workloads.len(), 1);
        assert_eq!(imported.workloads[0].measurements.len(), 3);
        assert_eq!(
            imported.warnings,
            [
                "b.json: skipped (a size below 1 or above 2^50): BM_A/0",
                "b.json: skipped (one size only): BM_Copy",
                "b.json: skipped (the benchmark reported an error): BM_Broken/8",
            ]
        );
    }

    #[test]
    fn a_bad_or_partial_file_is_an_error_naming_the_file_and_the_key_or_line() {
        let three = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut rows: Vec<_> = [1, 2, 4].iter().map(|&s| row(&format!("BM_A/{s}"), s as f64)).collect();
            f(&mut rows[1]);
            gb(json!(rows))
        };
        let cases: Vec<(String, &str)> = vec![
            (SCAN[..SCAN.len() / 2].to_string(), "b.json: line "),
            (
                three(&|r| drop(r.as_object_mut().unwrap().remove("real_time"))),
                "b.json: benchmarks[1].real_time: missing",
            ),
            (
                three(&|r| r["real_time"] = json!(-5.0)),
                "b.json: benchmarks[1].real_time: the time must be positive, not -5",
            ),
            (three(&|r| r["real_time"] = json!("fast")), "b.json: benchmarks[1].real_time: expected a number"),
            (
                three(&|r| r["time_unit"] = json!("fortnights")),
                "b.json: benchmarks[1].time_unit: unknown unit \"fortnights\"",
            ),
            (three(&|r| drop(r.as_object_mut().unwrap().remove("name"))), "b.json: benchmarks[1].name: missing"),
            (three(&|r| r["run_type"] = json!("warmup")), "b.json: benchmarks[1].run_type: expected"),
            (three(&|r| r["complexity_n"] = json!(-1)), "b.json: benchmarks[1].complexity_n: expected a positive"),
            (gb(json!([row("BM_A/1", 1.0), row("BM_A/2", 2.0)])), "b.json: benchmarks[0]: BM_A has 2 size(s) (1, 2)"),
            (json!({"context": {}}).to_string(), "b.json: benchmarks: missing"),
            ("[]".to_string(), "b.json: expected a JSON object"),
            (gb(json!([])), "no workload with sizes in"),
        ];
        for (text, expected) in cases {
            let e = import(Format::GoogleBenchmark, "b.json", &text).unwrap_err();
            assert!(e.starts_with(expected), "{expected}: {e}");
        }
        let truncated = import(Format::GoogleBenchmark, "b.json", &SCAN[..SCAN.len() / 2]).unwrap_err();
        assert!(truncated.contains("column") && truncated.ends_with("the file is cut short"), "{truncated}");
        let nan = three(&|r| r["real_time"] = json!(12345.0)).replace("12345.0", "NaN");
        let e = import(Format::GoogleBenchmark, "b.json", &nan).unwrap_err();
        assert_eq!(e, "b.json: benchmarks[1].real_time: not a number (NaN, infinite or null)");
        let e = import(Format::GoogleBenchmark, "b.json", &nan.replace("NaN", "-Infinity")).unwrap_err();
        assert_eq!(e, "b.json: benchmarks[1].real_time: not a number (NaN, infinite or null)");
    }
}
