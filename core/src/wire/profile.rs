//! A workload's profile as the wire carries it: where its instructions go at one size, the
//! functions that take the most, self and inclusive, with their callers and call sites, as the
//! agent reads them from Valgrind's callgrind (docs/profiles.md), and the bounds a server holds
//! it to.

use super::{check_text, err, FieldError, MAX_SIZE};
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
