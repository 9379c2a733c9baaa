//! The contract catalogue: the probes of `c/contracts/*.def`, each the workload
//! `contract.FUNCTION.AXIS`, all built into one binary per toolchain and judged against the class
//! their function may cost (see docs/contracts.md).

use crate::builds::toolchain::CompileError;
use anyhow::{bail, Context, Result};
use slopewatch_core::complexity::Class;
use slopewatch_core::wire::{Contract, SizeUnit, CONTRACT_PREFIX};
use std::sync::OnceLock;

/// Every file of the catalogue, written flat into its build directory beside the harness.
pub const FILES: &[(&str, &str)] = &[
    ("contracts.h", include_str!("../../c/contracts/contracts.h")),
    ("catalogue.def", include_str!("../../c/contracts/catalogue.def")),
    ("main.c", include_str!("../../c/contracts/main.c")),
    ("string.def", include_str!("../../c/contracts/string.def")),
    ("string.c", include_str!("../../c/contracts/string.c")),
    ("strings.def", include_str!("../../c/contracts/strings.def")),
    ("strings.c", include_str!("../../c/contracts/strings.c")),
    ("wchar.def", include_str!("../../c/contracts/wchar.def")),
    ("wchar.c", include_str!("../../c/contracts/wchar.c")),
    ("stdlib.def", include_str!("../../c/contracts/stdlib.def")),
    ("stdlib.c", include_str!("../../c/contracts/stdlib.c")),
    ("stdio.def", include_str!("../../c/contracts/stdio.def")),
    ("stdio.c", include_str!("../../c/contracts/stdio.c")),
    ("sort.def", include_str!("../../c/contracts/sort.def")),
    ("sort.c", include_str!("../../c/contracts/sort.c")),
];

/// What the catalogue is compiled with beside the toolchain's own flags: every call reaches the
/// libc, never the compiler's own expansion of `strlen` or a constant `strchr`.
pub const CFLAGS: &[&str] = &["-fno-builtin"];

/// One probe: a function, an axis and the class the function may cost on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// The C name of its code, `sw_probe_ID`.
    pub id: String,
    pub function: String,
    pub axis: String,
    /// The header the standard declares the function in, e.g. `string.h`.
    pub header: String,
    pub expected: Class,
    pub unit: SizeUnit,
    pub start: u64,
    pub max: u64,
    /// Whether its input ends against an unreadable page, so a read past the bound crashes.
    pub guarded: bool,
    /// What grows, for people.
    pub grows: String,
    pub broken: String,
    pub consequence: String,
    /// The clause or reason behind the expectation.
    pub source: String,
}

impl Probe {
    /// The probe's workload name: `contract.FUNCTION.AXIS`.
    pub fn name(&self) -> String {
        format!("{CONTRACT_PREFIX}{}.{}", self.function, self.axis)
    }

    /// The contract the probe's runs carry.
    pub fn contract(&self) -> Contract {
        Contract {
            expected: self.expected,
            function: self.function.clone(),
            axis: self.axis.clone(),
            broken: self.broken.clone(),
            consequence: self.consequence.clone(),
        }
    }
}

/// Every function the catalogue probes, each once, sorted.
pub fn functions() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = catalogue().iter().map(|p| p.function.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Every probe, in the order of the `.def` files.
pub fn catalogue() -> &'static [Probe] {
    static CATALOGUE: OnceLock<Vec<Probe>> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        FILES
            .iter()
            .filter(|(name, _)| name.ends_with(".def") && *name != "catalogue.def")
            .flat_map(|(name, text)| parse_def(text).unwrap_or_else(|e| panic!("c/contracts/{name}: {e:#}")))
            .collect()
    })
}

/// The functions some libcs lack, as the catalogue's `SW_OPTIONAL(ret, NAME, params)` lines name
/// them: the catalogue is linked with `-Wl,-u,NAME` for each the libc has.
pub fn optional_symbols() -> Vec<&'static str> {
    let mut symbols: Vec<&str> = FILES
        .iter()
        .filter(|(name, _)| name.ends_with(".c"))
        .flat_map(|(_, text)| text.lines())
        .filter_map(|line| line.strip_prefix("SW_OPTIONAL("))
        .filter_map(|rest| rest.split(',').nth(1).map(str::trim))
        .collect();
    symbols.sort_unstable();
    symbols.dedup();
    symbols
}

/// The symbols of `candidates` a failed link says are undefined: GNU ld's "undefined reference to
/// `NAME'", lld's and mold's "undefined symbol: NAME".
pub fn undefined_symbols<'a>(e: &CompileError, candidates: &[&'a str]) -> Vec<&'a str> {
    candidates
        .iter()
        .copied()
        .filter(|s| {
            e.output.contains(&format!("undefined reference to `{s}'"))
                || e.output.lines().any(|l| l.trim_end().ends_with(&format!("undefined symbol: {s}")))
        })
        .collect()
}

/// The probes of one `.def` file: its `PROBE(...)` entries, comments aside.
fn parse_def(text: &str) -> Result<Vec<Probe>> {
    let text = strip_comments(text);
    let mut probes = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("PROBE(") {
        let (fields, after) = split_fields(&rest[at + "PROBE(".len()..])?;
        let probe =
            probe(&fields).with_context(|| format!("PROBE({}, …)", fields.first().map_or("", String::as_str)))?;
        probes.push(probe);
        rest = after;
    }
    Ok(probes)
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("/*") {
        out.push_str(&rest[..at]);
        rest = rest[at..].find("*/").map_or("", |end| &rest[at + end + 2..]);
    }
    out.push_str(rest);
    out
}

/// The comma-separated fields up to the closing parenthesis, string literals unquoted (with `\"`
/// and `\\` read), and what follows the entry.
fn split_fields(text: &str) -> Result<(Vec<String>, &str)> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = text.char_indices();
    let mut quoted = false;
    while let Some((i, c)) = chars.next() {
        match (quoted, c) {
            (true, '\\') => field.extend(chars.next().map(|(_, c)| c)),
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut field).trim().to_string()),
            (false, ')') => {
                fields.push(field.trim().to_string());
                return Ok((fields, &text[i + 1..]));
            }
            (false, c) if c.is_whitespace() && field.trim().is_empty() => {}
            (false, c) => field.push(c),
        }
    }
    bail!("a PROBE entry has no closing parenthesis")
}

fn probe(f: &[String]) -> Result<Probe> {
    let [id, function, axis, header, expected, unit, start, max, reads, grows, broken, consequence, source] = f else {
        bail!("has {} fields; a PROBE has 13 (see catalogue.def)", f.len());
    };
    let expected = Class::parse(expected).with_context(|| format!("expected: {expected:?} is not a class"))?;
    let unit = SizeUnit::parse(unit).with_context(|| format!("unit: {unit:?} is not a size unit"))?;
    let size = |key: &str, v: &str| v.parse::<u64>().with_context(|| format!("{key}: {v:?} is not a size"));
    let (start, max) = (size("start", start)?, size("max", max)?);
    if start == 0 || start > max {
        bail!("start {start} must be positive and at most max {max}");
    }
    let guarded = match reads.as_str() {
        "guarded" => true,
        "" => false,
        other => bail!("reads: {other:?} must be \"guarded\" or \"\""),
    };
    for (key, v) in [("id", id), ("function", function)] {
        if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            bail!("{key}: {v:?} must be a C identifier");
        }
    }
    if axis.is_empty() || !axis.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-')) {
        bail!("axis: {axis:?} must be letters, digits, '_' or '-'");
    }
    Ok(Probe {
        id: id.clone(),
        function: function.clone(),
        axis: axis.clone(),
        header: header.clone(),
        expected,
        unit,
        start,
        max,
        guarded,
        grows: grows.clone(),
        broken: broken.clone(),
        consequence: consequence.clone(),
        source: source.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_parses_and_names_each_probe_once() {
        let probes = catalogue();
        assert!(probes.iter().any(|p| p.name() == "contract.strchr.remaining" && p.expected == Class::Constant));
        let mut names: Vec<String> = probes.iter().map(Probe::name).collect();
        let mut ids: Vec<&str> = probes.iter().map(|p| p.id.as_str()).collect();
        names.sort();
        ids.sort();
        let (n, i) = (names.len(), ids.len());
        names.dedup();
        ids.dedup();
        assert_eq!((names.len(), ids.len()), (n, i), "a name or an id given twice");
        for p in probes {
            assert!(!p.broken.is_empty() && !p.consequence.is_empty() && !p.source.is_empty(), "{p:?}");
            assert!(p.max / p.start >= 16, "{}: sizes from {} to {} tell too little", p.name(), p.start, p.max);
        }
    }

    #[test]
    fn a_def_entry_reads_quoted_commas_and_says_what_is_wrong() {
        let text = r#"/* a comment, PROBE(not, one) */
PROBE(a_b, "a", "b", "string.h", "n log n", "items", 64, 4096, "guarded",
      "what, grows", "is \"broken\"", "So.", "C17 7.1")"#;
        let p = &parse_def(text).unwrap()[0];
        assert_eq!(
            (p.name().as_str(), p.expected, p.unit, p.guarded),
            ("contract.a.b", Class::NLogN, SizeUnit::Items, true)
        );
        assert_eq!((p.grows.as_str(), p.broken.as_str()), ("what, grows", "is \"broken\""));
        let bad = text.replace("\"n log n\"", "\"n^4\"");
        assert!(format!("{:#}", parse_def(&bad).unwrap_err()).contains("expected: \"n^4\""));
        let short = "PROBE(a, \"a\")";
        assert!(format!("{:#}", parse_def(short).unwrap_err()).contains("has 2 fields; a PROBE has 13"));
    }

    #[test]
    fn a_failed_link_names_the_optional_symbols_it_missed() {
        let e = |output: &str| CompileError {
            toolchain: "t".into(),
            exit_status: Some(1),
            signal: None,
            output: output.into(),
        };
        let ld = e("/usr/bin/ld: main.o: in function `f':\nmain.c:(.text+0x1): undefined reference to `strlcpy'\n");
        assert_eq!(undefined_symbols(&ld, &["strlcat", "strlcpy"]), ["strlcpy"]);
        let lld = e("ld.lld: error: undefined symbol: rawmemchr\n>>> referenced by main.c\n");
        assert_eq!(undefined_symbols(&lld, &["rawmemchr", "strlcpy"]), ["rawmemchr"]);
        assert!(undefined_symbols(&e("main.c:1: error: expected ';'"), &["strlcpy"]).is_empty());
    }
}
