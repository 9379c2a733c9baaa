//! Where a workload's instructions go at one size: the functions that take the most, self and
//! inclusive, with their callers and call sites, as the agent reads them from Valgrind's callgrind
//! and sends them with the run. The regression compares the first bad version's with the last
//! good version's (docs/profiles.md).

use crate::wire::{check_text, err, FieldError, MAX_SIZE};
use serde::{Deserialize, Serialize};

/// Most bytes a profile takes as JSON: a larger one is refused whole.
pub const MAX_PROFILE_BYTES: usize = 64 * 1024;

/// Most functions a profile keeps: the cut stops at this many, or once the kept ones' own
/// instructions cover [`COVERED`] of the total, whichever comes first.
pub const MAX_FUNCTIONS: usize = 50;
/// The share of all instructions the kept functions' own instructions cover before the cut.
pub const COVERED: f64 = 0.99;
/// Most callers kept per function: those whose calls cost the most.
pub const MAX_CALLERS: usize = 5;

/// A workload's profile at one size.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The size profiled, in the workload's unit: the workload's own first size, the same for
    /// every toolchain and version, so two versions' profiles compare like for like.
    pub size: u64,
    /// Every instruction counted at that size, in the measured code (`sw_run`) and what it calls.
    pub total: u64,
    /// The functions that take the most instructions of their own, most first, cut at
    /// [`MAX_FUNCTIONS`] or [`COVERED`] of `total`.
    pub functions: Vec<ProfiledFunction>,
}

/// One function of a profile.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfiledFunction {
    /// The function's name, demangled: `strspn`, `jsonTranslateTextToBlob`.
    pub name: String,
    /// The source file it is in, where the binary has debug information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Instructions in the function itself, and in it with everything it calls.
    pub own: u64,
    pub inclusive: u64,
    /// Who calls it, those whose calls cost the most first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callers: Vec<Caller>,
}

/// A caller of a profiled function.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Caller {
    pub name: String,
    /// How many times it called, and the instructions those calls took.
    pub calls: u64,
    pub inclusive: u64,
    /// Where it calls from, `file:line`, where the binary has debug information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
}

impl Profile {
    /// Checks the profile, named under `at` (e.g. `workloads[3].profile`): its size, its bounds
    /// ([`MAX_FUNCTIONS`], [`MAX_CALLERS`], [`MAX_PROFILE_BYTES`]), and names and files that are
    /// printable text.
    pub(crate) fn validate(&self, at: &str) -> Result<(), FieldError> {
        if self.size == 0 || self.size > MAX_SIZE {
            return Err(err(format!("{at}.size"), format!("{} is not a size from 1 to {MAX_SIZE}", self.size)));
        }
        let bytes = serde_json::to_vec(self).map_or(usize::MAX, |b| b.len());
        if bytes > MAX_PROFILE_BYTES {
            return Err(err(at, format!("is {bytes} bytes as JSON; the limit is {MAX_PROFILE_BYTES}")));
        }
        if self.functions.len() > MAX_FUNCTIONS {
            return Err(err(
                format!("{at}.functions"),
                format!("{} functions is more than {MAX_FUNCTIONS}", self.functions.len()),
            ));
        }
        for (i, f) in self.functions.iter().enumerate() {
            let at = format!("{at}.functions[{i}]");
            check_function_name(&format!("{at}.name"), &f.name)?;
            if let Some(file) = &f.file {
                check_text(&format!("{at}.file"), file)?;
            }
            if f.own > f.inclusive || f.own > self.total {
                return Err(err(&at, "its own instructions exceed its inclusive ones or the total"));
            }
            if f.callers.len() > MAX_CALLERS {
                return Err(err(
                    format!("{at}.callers"),
                    format!("{} callers is more than {MAX_CALLERS}", f.callers.len()),
                ));
            }
            for (j, c) in f.callers.iter().enumerate() {
                check_function_name(&format!("{at}.callers[{j}].name"), &c.name)?;
                if let Some(site) = &c.site {
                    check_text(&format!("{at}.callers[{j}].site"), site)?;
                }
            }
        }
        Ok(())
    }

    /// Where the instructions went, in one sentence: "97.6 % of the 808.7 M instructions at
    /// 64 KiB are in strspn (string.zig), called from sw_run (bench.c:12)".
    pub fn sentence(&self, unit: crate::wire::SizeUnit) -> Option<String> {
        let (f, share) = self.hottest()?;
        let file = |path: &str| path.rsplit('/').next().unwrap_or(path).to_string();
        let place = f.file.as_deref().map(|p| format!(" ({})", file(p))).unwrap_or_default();
        let caller = f.callers.first().map(|c| {
            let site = c.site.as_deref().map(|s| format!(" ({})", file(s))).unwrap_or_default();
            format!(", called from {}{site}", c.name)
        });
        Some(format!(
            "{:.1} % of the {} instructions at {} are in {}{place}{}",
            share * 100.0,
            crate::format::count(self.total as f64),
            crate::format::size(self.size, unit),
            f.name,
            caller.unwrap_or_default()
        ))
    }

    /// The function with the most instructions of its own, and its share of all of them.
    pub fn hottest(&self) -> Option<(&ProfiledFunction, f64)> {
        let f = self.functions.first()?;
        Some((f, f.own as f64 / self.total.max(1) as f64))
    }
}

/// A function's name: 1 to 1,024 printable characters.
fn check_function_name(field: &str, name: &str) -> Result<(), FieldError> {
    if name.trim().is_empty() {
        return Err(err(field, "must not be empty"));
    }
    check_text(field, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        let caller = Caller { name: "sw_run".into(), calls: 8192, inclusive: 980, site: Some("bench.c:12".into()) };
        let f = ProfiledFunction {
            name: "strspn".into(),
            file: Some("/lib/c/string.zig".into()),
            own: 980,
            inclusive: 980,
            callers: vec![caller],
        };
        Profile { size: 65536, total: 1000, functions: vec![f] }
    }

    #[test]
    fn the_sentence_names_the_share_the_function_and_its_caller() {
        assert_eq!(
            profile().sentence(crate::wire::SizeUnit::Bytes).unwrap(),
            "98.0 % of the 1,000 instructions at 64 KiB are in strspn (string.zig), called from sw_run (bench.c:12)"
        );
        assert_eq!(Profile { functions: vec![], ..profile() }.sentence(crate::wire::SizeUnit::Bytes), None);
    }

    #[test]
    fn a_malformed_oversized_or_unprintable_profile_is_refused_with_its_field() {
        assert!(profile().validate("p").is_ok());
        let refused = |p: Profile, field: &str, reason: &str| {
            let e = p.validate("p").unwrap_err();
            assert_eq!(e.field, field, "{e:?}");
            assert!(e.reason.contains(reason), "{e:?}");
        };
        refused(Profile { size: 0, ..profile() }, "p.size", "not a size");
        let mut p = profile();
        p.functions[0].name = "str\u{1b}[31mspn".into();
        refused(p, "p.functions[0].name", "control characters");
        let mut p = profile();
        p.functions[0].callers[0].name = " ".into();
        refused(p, "p.functions[0].callers[0].name", "empty");
        let mut p = profile();
        p.functions[0].own = 2000;
        refused(p, "p.functions[0]", "exceed");
        let mut p = profile();
        p.functions = (0..MAX_FUNCTIONS + 1).map(|_| profile().functions[0].clone()).collect();
        refused(p, "p.functions", "more than 50");
        let mut p = profile();
        p.functions[0].file = Some("x".repeat(1000));
        p.functions[0].callers[0].site = Some("y".repeat(1000));
        p.functions[0].callers = (0..MAX_CALLERS).map(|_| p.functions[0].callers[0].clone()).collect();
        p.functions = (0..MAX_FUNCTIONS).map(|_| p.functions[0].clone()).collect();
        refused(p, "p", "the limit is 65536");
    }
}
