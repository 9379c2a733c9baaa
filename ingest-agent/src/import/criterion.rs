//! criterion's output directory: every benchmark of a parameterized group
//! (`<group>[/<function>]/<size>/new/`) is one size of a workload; each of its samples
//! (`sample.json`: `times[i] / iters[i]`) is one sample.

use super::{not_json, sample_ns, valid_size, At, Parsed};
use anyhow::{bail, Context, Result};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

pub(super) fn parse(root: &Path) -> Result<Parsed> {
    if !root.is_dir() {
        bail!("{}: not a directory; give criterion's output directory, e.g. target/criterion", root.display());
    }
    let mut found = Vec::new();
    measured_dirs(root, &mut found).with_context(|| format!("cannot read {}", root.display()))?;
    if found.is_empty() {
        bail!("{}: no criterion results (no new/benchmark.json below it)", root.display());
    }
    found.sort();
    let mut parsed = Parsed::default();
    for dir in found {
        let id_file = dir.join("benchmark.json");
        let id = object(&id_file)?;
        let at = |key: &str| At::new(&id_file, key);
        let group = string(&id, "group_id", &at)?.unwrap_or_default();
        let Some(group) = group.filter(|g| !g.is_empty()) else { bail!("{}: missing", at("group_id")) };
        let function = string(&id, "function_id", &at)?.flatten();
        let name = match function {
            Some(f) => format!("{group}/{f}"),
            None => group.to_string(),
        };
        let full_id = string(&id, "full_id", &at)?.flatten().unwrap_or(&name).to_string();
        let Some(value) = string(&id, "value_str", &at)?.flatten() else {
            parsed.skipped.add("not parameterized", &full_id);
            continue;
        };
        let Some(size) = value.parse::<i128>().ok().and_then(valid_size) else {
            parsed.skipped.add("the parameter is not a size from 1 to 2^50", &full_id);
            continue;
        };
        let samples = samples(&dir.join("sample.json"))?;
        let family = parsed.family(&name, || At::new(&id_file, ""));
        if family.samples.insert(size, samples).is_some() {
            bail!("{}: {name} at size {size} is also in {}", At::new(&id_file, ""), family.at);
        }
    }
    parsed.skip_single_sizes();
    Ok(parsed)
}

/// Every `new` directory holding a `benchmark.json` below `dir` (criterion keeps the previous
/// run in `base`, which is not read).
fn measured_dirs(dir: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if dir.file_name().is_some_and(|n| n == "new") && dir.join("benchmark.json").is_file() {
        found.push(dir.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            measured_dirs(&entry.path(), found)?;
        }
    }
    Ok(())
}

/// Per-iteration times in nanoseconds: criterion times `iters[i]` iterations as `times[i]`.
fn samples(path: &Path) -> Result<Vec<f64>> {
    let sample = object(path)?;
    let at = |key: &str| At::new(path, key);
    let iters = numbers(&sample, "iters", &at)?;
    let times = numbers(&sample, "times", &at)?;
    if iters.len() != times.len() {
        bail!("{}: {} entries, but iters has {}", at("times"), times.len(), iters.len());
    }
    if times.is_empty() {
        bail!("{}: no samples", at("times"));
    }
    iters
        .iter()
        .zip(&times)
        .enumerate()
        .map(|(i, (&n, &t))| {
            if !(n.is_finite() && n >= 1.0) {
                bail!("{}: an iteration count must be 1 or more, not {n}", at(&format!("iters[{i}]")));
            }
            sample_ns(t / n, &at(&format!("times[{i}]")))
        })
        .collect()
}

fn object(path: &Path) -> Result<Map<String, Value>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    match serde_json::from_str(&text) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => bail!("{}: expected a JSON object", path.display()),
        Err(e) => Err(not_json(path, &e)),
    }
}

/// A string or null; `None` when the key is missing.
fn string<'a>(o: &'a Map<String, Value>, key: &str, at: &impl Fn(&str) -> At) -> Result<Option<Option<&'a str>>> {
    match o.get(key) {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(Value::String(s)) => Ok(Some(Some(s))),
        Some(other) => bail!("{}: expected a string or null, found {other}", at(key)),
    }
}

fn numbers(o: &Map<String, Value>, key: &str, at: &impl Fn(&str) -> At) -> Result<Vec<f64>> {
    let Some(v) = o.get(key) else { bail!("{}: missing", at(key)) };
    let Some(items) = v.as_array() else { bail!("{}: expected an array of numbers", at(key)) };
    items
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_f64().ok_or_else(|| anyhow::anyhow!("{}: expected a number, found {x}", at(&format!("{key}[{i}]"))))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{read, Format};
    use slopewatch_core::wire::SizeUnit;
    use std::path::{Path, PathBuf};

    /// A real criterion output of tests/fixtures/criterion-gen.
    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/criterion")
    }

    /// A copy of the fixture to spoil, and the error importing it gives, without the copy's path.
    fn spoiled(file: &str, text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        copy(&fixture(), dir.path());
        std::fs::write(dir.path().join(file), text).unwrap();
        let e = read(Format::Criterion, &[dir.path().to_path_buf()], SizeUnit::Bytes).unwrap_err();
        format!("{e:#}").replace(&format!("{}/", dir.path().display()), "")
    }

    fn copy(from: &Path, to: &Path) {
        for entry in std::fs::read_dir(from).unwrap().flatten() {
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                std::fs::create_dir_all(&target).unwrap();
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }

    #[test]
    fn each_parameterized_benchmark_is_a_size_and_each_sample_a_time_per_iteration() {
        let imported = read(Format::Criterion, &[fixture()], SizeUnit::Bytes).unwrap();
        let names: Vec<&str> = imported.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["commas", "commas-measuring/count-first"]);
        for w in &imported.workloads {
            let sizes: Vec<u64> = w.measurements.iter().map(|m| m.size).collect();
            assert_eq!(sizes, [1024, 2048, 4096, 8192, 16384], "{}", w.name);
            assert!(w.measurements.iter().all(|m| m.samples_ns.len() == 10), "{}", w.name);
            assert_eq!(w.metadata["import.format"], "criterion");
        }
        let sample: serde_json::Value =
            serde_json::from_slice(&std::fs::read(fixture().join("commas/1024/new/sample.json")).unwrap()).unwrap();
        let per_iteration = sample["times"][0].as_f64().unwrap() / sample["iters"][0].as_f64().unwrap();
        assert_eq!(imported.workloads[0].measurements[0].samples_ns[0], per_iteration);
        assert_eq!(imported.warnings.len(), 1);
        assert!(imported.warnings[0].ends_with("skipped (not parameterized): setup"), "{:?}", imported.warnings);
    }

    #[test]
    fn one_group_directory_is_enough() {
        let imported = read(Format::Criterion, &[fixture().join("commas-measuring")], SizeUnit::Bytes).unwrap();
        assert_eq!(imported.workloads.len(), 1);
        assert!(imported.warnings.is_empty());
    }

    #[test]
    fn a_bad_or_partial_result_is_an_error_naming_the_file_and_the_key() {
        let sample = "commas/2048/new/sample.json";
        let cases = [
            (sample, r#"{"iters": [1.0, 2.0], "times": [10.0"#, "commas/2048/new/sample.json: line 1 column "),
            (sample, r#"{"times": [10.0]}"#, "commas/2048/new/sample.json: iters: missing"),
            (
                sample,
                r#"{"iters": [1.0, 2.0], "times": [10.0, -4.0]}"#,
                "commas/2048/new/sample.json: times[1]: the time must be positive",
            ),
            (
                sample,
                r#"{"iters": [0.0], "times": [10.0]}"#,
                "commas/2048/new/sample.json: iters[0]: an iteration count must be 1 or more",
            ),
            (sample, r#"{"iters": [1.0], "times": ["x"]}"#, "commas/2048/new/sample.json: times[0]: expected a number"),
            (
                sample,
                r#"{"iters": [1.0, 2.0], "times": [1.0]}"#,
                "commas/2048/new/sample.json: times: 1 entries, but iters has 2",
            ),
            (
                "commas/2048/new/benchmark.json",
                r#"{"value_str": "2048"}"#,
                "commas/2048/new/benchmark.json: group_id: missing",
            ),
        ];
        for (file, text, expected) in cases {
            let e = spoiled(file, text);
            assert!(e.starts_with(expected), "{expected}: {e}");
        }
    }

    #[test]
    fn a_family_with_too_few_sizes_is_an_error_and_a_missing_directory_too() {
        let dir = tempfile::tempdir().unwrap();
        copy(&fixture().join("commas"), dir.path());
        std::fs::remove_dir_all(dir.path().join("4096")).unwrap();
        std::fs::remove_dir_all(dir.path().join("8192")).unwrap();
        std::fs::remove_dir_all(dir.path().join("16384")).unwrap();
        let e = format!("{:#}", read(Format::Criterion, &[dir.path().to_path_buf()], SizeUnit::Bytes).unwrap_err());
        assert!(e.contains("new/benchmark.json: commas has 2 size(s) (1024, 2048); a slope needs at least 3"), "{e}");
        let e = format!("{:#}", read(Format::Criterion, &[dir.path().join("nowhere")], SizeUnit::Bytes).unwrap_err());
        assert!(e.contains("nowhere: not a directory"), "{e}");
    }
}
