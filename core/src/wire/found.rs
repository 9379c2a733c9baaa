//! A probe a search found: a function, an axis and an input *shape* (a few parameters that
//! describe a family of inputs at any size) whose cost broke the function's contract. It is data,
//! never code: the agent's C harness builds the input from the parameters with generators of its
//! own. Agents submit the probes they find (`POST /api/v1/found-probes`) and fetch their team's
//! (`GET /api/v1/found-probes`), so every agent runs them as it runs the hand-written probes.

use crate::complexity::Class;
use crate::wire::{check_name, check_text, err, Contract, FieldError, CONTRACT_PREFIX, MAX_NAME_CHARS};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// What separates a found probe's shape from its function and axis in its workload name:
/// `contract.FUNCTION.AXIS~SHAPE`.
pub const SHAPE_SEPARATOR: char = '~';
/// Most probes one submission (and one answer) carries.
pub const MAX_FOUND_PROBES: usize = 512;

/// How a found input broke the contract.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakKind {
    /// Its cost grows faster along the axis than the contract allows.
    Growth,
    /// It reads past the bound it was given (a crash at an unreadable page).
    Bound,
    /// It returns a wrong result.
    Wrong,
}

impl BreakKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BreakKind::Growth => "growth",
            BreakKind::Bound => "bound",
            BreakKind::Wrong => "wrong",
        }
    }
}

/// One found probe, as agents submit it and the server serves it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FoundProbe {
    /// The function called, e.g. `strcasestr`.
    pub function: String,
    /// What grows, e.g. `needle`.
    pub axis: String,
    /// The shape's parameters, `key=value` pairs joined by `,` in the order the generator lists
    /// them, e.g. `alphabet=1,mismatch=last`.
    pub shape: String,
    /// The shape in words: "a needle `a…ab` of m bytes in a haystack of `a`s".
    pub described: String,
    /// The class the function may cost along the axis, and what a break means.
    pub contract: Contract,
    /// How the input broke the contract when it was found.
    pub kind: BreakKind,
    /// The class measured when it was found (a growth break), e.g. `n^2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub class: Option<Class>,
    /// The toolchain the search ran against, e.g. `zig-cc-musl`.
    pub toolchain: String,
    /// That toolchain's version, e.g. `0.16.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// When the search found it.
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub found_at: OffsetDateTime,
}

impl FoundProbe {
    /// Its workload name: `contract.FUNCTION.AXIS~SHAPE`.
    pub fn name(&self) -> String {
        format!("{CONTRACT_PREFIX}{}.{}{SHAPE_SEPARATOR}{}", self.function, self.axis, self.shape)
    }

    /// Checks every field, named under `at` (e.g. `probes[2]`).
    pub fn validate(&self, at: &str) -> Result<(), FieldError> {
        for (field, value) in [("function", &self.function), ("axis", &self.axis)] {
            check_name(&format!("{at}.{field}"), value)?;
            if !value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
                return Err(err(format!("{at}.{field}"), "must be lowercase letters, digits and _"));
            }
        }
        check_shape(&self.shape).map_err(|reason| err(format!("{at}.shape"), reason))?;
        let name = self.name();
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(err(
                format!("{at}.shape"),
                format!("makes the probe's name {name:?} longer than {MAX_NAME_CHARS} characters"),
            ));
        }
        if self.described.trim().is_empty() {
            return Err(err(format!("{at}.described"), "must not be empty"));
        }
        check_text(&format!("{at}.described"), &self.described)?;
        self.contract.validate(&format!("{at}.contract"))?;
        if self.contract.function != self.function || self.contract.axis != self.axis {
            return Err(err(format!("{at}.contract"), "must name the probe's own function and axis"));
        }
        if self.kind != BreakKind::Growth && self.class.is_some() {
            return Err(err(
                format!("{at}.class"),
                "is the class of a growth break; a bound or a wrong result has none",
            ));
        }
        check_name(&format!("{at}.toolchain"), &self.toolchain)?;
        if let Some(v) = &self.version {
            check_name(&format!("{at}.version"), v)?;
        }
        Ok(())
    }
}

/// A shape's text: one or more `key=value`, joined by `,`, keys lowercase letters, values
/// lowercase letters, digits and `-`.
pub fn check_shape(shape: &str) -> Result<(), String> {
    if shape.is_empty() {
        return Err("must not be empty".into());
    }
    for pair in shape.split(',') {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("{pair:?} is not key=value"));
        };
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_lowercase()) {
            return Err(format!("key {key:?} must be lowercase letters"));
        }
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
            return Err(format!("value {value:?} of {key} must be lowercase letters, digits and -"));
        }
    }
    Ok(())
}

/// What agents submit and the server answers with: a team's found probes.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FoundProbes {
    pub probes: Vec<FoundProbe>,
}

impl FoundProbes {
    /// Parses and checks a submission's body.
    pub fn parse(body: &[u8]) -> Result<FoundProbes, FieldError> {
        let found: FoundProbes = crate::wire::parse_json(body)?;
        found.validate()?;
        Ok(found)
    }

    /// Checks every probe, and that there are between 1 and [`MAX_FOUND_PROBES`] with distinct
    /// names.
    pub fn validate(&self) -> Result<(), FieldError> {
        if self.probes.is_empty() {
            return Err(err("probes", "must hold one probe at least"));
        }
        if self.probes.len() > MAX_FOUND_PROBES {
            return Err(err("probes", format!("holds {} probes; the limit is {MAX_FOUND_PROBES}", self.probes.len())));
        }
        let mut names = std::collections::HashSet::new();
        for (i, p) in self.probes.iter().enumerate() {
            p.validate(&format!("probes[{i}]"))?;
            if !names.insert(p.name()) {
                return Err(err(format!("probes[{i}]"), format!("{} is listed twice", p.name())));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found() -> FoundProbe {
        FoundProbe {
            function: "strcasestr".into(),
            axis: "needle".into(),
            shape: "alphabet=1,mismatch=last".into(),
            described: "a needle a…ab of m bytes in a haystack of a's".into(),
            contract: Contract {
                function: "strcasestr".into(),
                axis: "needle".into(),
                ..Contract::expecting(Class::Linear)
            },
            kind: BreakKind::Growth,
            class: Some(Class::Quadratic),
            toolchain: "musl-gcc".into(),
            version: None,
            found_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn a_found_probe_is_named_by_its_function_axis_and_shape_and_round_trips() {
        let p = found();
        assert_eq!(p.name(), "contract.strcasestr.needle~alphabet=1,mismatch=last");
        let body = serde_json::to_vec(&FoundProbes { probes: vec![p.clone()] }).unwrap();
        assert_eq!(FoundProbes::parse(&body).unwrap().probes, vec![p]);
    }

    #[test]
    fn bad_found_probes_are_refused_with_the_field_that_is_wrong() {
        let refused = |edit: &dyn Fn(&mut FoundProbe)| {
            let mut p = found();
            edit(&mut p);
            FoundProbes { probes: vec![p] }.validate().unwrap_err().field
        };
        assert_eq!(refused(&|p| p.shape = "alphabet".into()), "probes[0].shape");
        assert_eq!(refused(&|p| p.shape = "alphabet=1;rm -rf".into()), "probes[0].shape");
        assert_eq!(refused(&|p| p.shape = "a=1,".into()), "probes[0].shape");
        assert_eq!(refused(&|p| p.function = "str str".into()), "probes[0].function");
        assert_eq!(refused(&|p| p.described = " ".into()), "probes[0].described");
        assert_eq!(refused(&|p| p.contract.axis = "haystack".into()), "probes[0].contract");
        assert_eq!(refused(&|p| p.kind = BreakKind::Wrong), "probes[0].class");
        assert_eq!(refused(&|p| p.shape = format!("a={}", "1".repeat(120))), "probes[0].shape");
        let twice = FoundProbes { probes: vec![found(), found()] };
        assert_eq!(twice.validate().unwrap_err().field, "probes[1]");
        assert_eq!(FoundProbes::default().validate().unwrap_err().field, "probes");
    }
}
