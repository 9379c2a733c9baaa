//! The exposure scan an agent sends to `POST /api/v1/exposures`: which libc functions a built
//! artifact calls that its toolchain version breaks (over contract, reads past its bound, wrong
//! result), with how many call sites and which callers (docs/exposure.md).
//!
//! Defined here so the agent and the server can never disagree about the format.

use crate::probe::{ProbeState, ProbeVerdict};
use crate::wire::{check_name, check_text, err, FailureKind, FieldError};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use time::OffsetDateTime;
use uuid::Uuid;

/// How far past the receiving server's clock a scan's `scanned_at` may lie.
pub const MAX_CLOCK_AHEAD: time::Duration = time::Duration::minutes(5);

/// Most exposed functions one scan may list.
pub const MAX_EXPOSED: usize = 128;
/// Most functions `reaches` may list.
pub const MAX_REACHED: usize = 512;
/// Most callers kept per exposed function, those with the most call sites first.
pub const MAX_EXPOSURE_CALLERS: usize = 16;

/// One scan of one artifact, as the agent submits it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExposureSubmission {
    /// Chosen by the agent; resubmitting the same id never stores the scan twice.
    pub scan_id: Uuid,
    /// The version of the agent that scanned.
    pub agent_version: String,
    /// When the scan ran, RFC 3339.
    #[serde(with = "time::serde::rfc3339")]
    pub scanned_at: OffsetDateTime,
    /// The artifact's file name, e.g. `api-server`.
    pub artifact: String,
    /// What identifies its build: `build-id:HEX` from its GNU build ID note, else `sha256:HEX` of
    /// its bytes.
    pub digest: String,
    /// The toolchain lineage and version whose verdicts it was judged by, e.g. `zig-cc-musl`,
    /// `0.16.0`.
    pub lineage: String,
    pub version: String,
    /// The libc found in the artifact (`zig-musl`, `musl`, `glibc`, …), and `static` or
    /// `dynamic`.
    pub libc: String,
    pub linkage: Linkage,
    /// The functions it calls or references that the toolchain breaks, worst first. Empty when it
    /// reaches none: a clean scan is stored too, so the version page can say it was scanned.
    pub exposed: Vec<ExposedFunction>,
    /// Every function of the catalogue the artifact calls or references, by its catalogue name,
    /// the exposed ones included: a regression at a later version names the stored artifacts that
    /// reach a function it breaks, though their scan found it held.
    #[serde(default)]
    pub reaches: Vec<String>,
}

/// How an artifact reaches its libc.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Linkage {
    /// The libc's code is linked into the artifact.
    Static,
    /// The artifact imports the libc's functions from a shared object at run time.
    Dynamic,
}

impl Linkage {
    pub fn as_str(self) -> &'static str {
        match self {
            Linkage::Static => "static",
            Linkage::Dynamic => "dynamic",
        }
    }

    pub fn parse(s: &str) -> Option<Linkage> {
        [Linkage::Static, Linkage::Dynamic].into_iter().find(|l| l.as_str() == s)
    }
}

/// How a toolchain breaks a function, worst first.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Breakage {
    /// It reads past the bound its contract gives it (a guarded probe crashed).
    ReadsPastBound,
    /// It returns a wrong result.
    WrongResult,
    /// It costs a polynomial step more than its contract allows.
    OverContract,
    /// A probe of it failed some other way (ran past its time, exited non-zero).
    Failed,
}

impl Breakage {
    pub fn as_str(self) -> &'static str {
        match self {
            Breakage::ReadsPastBound => "reads_past_bound",
            Breakage::WrongResult => "wrong_result",
            Breakage::OverContract => "over_contract",
            Breakage::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Breakage> {
        [Breakage::ReadsPastBound, Breakage::WrongResult, Breakage::OverContract, Breakage::Failed]
            .into_iter()
            .find(|b| b.as_str() == s)
    }

    /// For people: "reads past its bound", "wrong result", "over contract", "failed".
    pub fn label(self) -> &'static str {
        match self {
            Breakage::ReadsPastBound => "reads past its bound",
            Breakage::WrongResult => "wrong result",
            Breakage::OverContract => "over contract",
            Breakage::Failed => "failed",
        }
    }
}

/// One function an artifact reaches that its toolchain breaks.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExposedFunction {
    /// The function as the catalogue names it, e.g. `strspn`.
    pub function: String,
    pub breach: Breakage,
    /// The verdict in words: "O(n) against its contract of O(1) (contract.strspn.set)".
    pub verdict: String,
    /// Direct calls (and tail jumps) to it in the artifact.
    pub call_sites: u32,
    /// Whether its address is taken (a table of function pointers), apart from calls.
    #[serde(default)]
    pub referenced: bool,
    /// The functions that call it, most call sites first, at most [`MAX_EXPOSURE_CALLERS`].
    #[serde(default)]
    pub callers: Vec<String>,
    /// Why the team accepts it, when a suppression that has not expired covers every call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<String>,
}

impl ExposureSubmission {
    /// Parses and validates a JSON body; the error names the first offending field.
    pub fn from_json(body: &[u8]) -> Result<ExposureSubmission, FieldError> {
        let s: ExposureSubmission = crate::wire::parse_json(body)?;
        s.validate()?;
        Ok(s)
    }

    /// Whether `scanned_at` lies no further past `received` (the receiving server's clock) than
    /// two machines' clocks differ, [`MAX_CLOCK_AHEAD`]: the latest scan of an artifact is decided
    /// by that date, so a scan dated ahead would hide every later real one.
    pub fn check_scanned_at(&self, received: OffsetDateTime) -> Result<(), FieldError> {
        if self.scanned_at > received + MAX_CLOCK_AHEAD {
            let ahead = self.scanned_at - received;
            return Err(err(
                "scanned_at",
                format!(
                    "is {} minutes ahead of this server's clock; at most {} are allowed for clocks that differ",
                    ahead.whole_minutes(),
                    MAX_CLOCK_AHEAD.whole_minutes()
                ),
            ));
        }
        Ok(())
    }

    /// Checks every rule the server enforces, so the agent can refuse to send a bad record.
    pub fn validate(&self) -> Result<(), FieldError> {
        check_name("agent_version", &self.agent_version)?;
        check_name("artifact", &self.artifact)?;
        check_digest(&self.digest)?;
        check_name("lineage", &self.lineage)?;
        check_name("version", &self.version)?;
        check_name("libc", &self.libc)?;
        if self.exposed.len() > MAX_EXPOSED {
            return Err(err("exposed", format!("{} functions is more than {MAX_EXPOSED}", self.exposed.len())));
        }
        if self.reaches.len() > MAX_REACHED {
            return Err(err("reaches", format!("{} functions is more than {MAX_REACHED}", self.reaches.len())));
        }
        for (i, f) in self.reaches.iter().enumerate() {
            check_name(&format!("reaches[{i}]"), f)?;
        }
        let mut seen = HashSet::new();
        for (i, f) in self.exposed.iter().enumerate() {
            let at = format!("exposed[{i}]");
            check_name(&format!("{at}.function"), &f.function)?;
            if !seen.insert(f.function.as_str()) {
                return Err(err(format!("{at}.function"), format!("{:?} is listed twice", f.function)));
            }
            check_text(&format!("{at}.verdict"), &f.verdict)?;
            if f.call_sites == 0 && !f.referenced {
                return Err(err(&at, "a function with no call site must be referenced to be exposed"));
            }
            if f.callers.len() > MAX_EXPOSURE_CALLERS {
                return Err(err(
                    format!("{at}.callers"),
                    format!("{} callers is more than {MAX_EXPOSURE_CALLERS}", f.callers.len()),
                ));
            }
            for (j, c) in f.callers.iter().enumerate() {
                check_text(&format!("{at}.callers[{j}]"), c)?;
            }
            if !self.reaches.contains(&f.function) {
                return Err(err(format!("{at}.function"), format!("{:?} is exposed but not in reaches", f.function)));
            }
            if let Some(reason) = &f.accepted {
                check_text(&format!("{at}.accepted"), reason)?;
            }
        }
        Ok(())
    }

    /// Whether any exposed function is not accepted: the scan fails.
    pub fn fails(&self) -> bool {
        self.exposed.iter().any(|f| f.accepted.is_none())
    }
}

/// `build-id:` and 2 to 64 lowercase hex digits, or `sha256:` and 64 of them.
fn check_digest(digest: &str) -> Result<(), FieldError> {
    let hex = |s: &str, min: usize, max: usize| {
        (min..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let ok = match digest.split_once(':') {
        Some(("build-id", h)) => hex(h, 2, 64),
        Some(("sha256", h)) => hex(h, 64, 64),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(err("digest", "must be build-id: and lowercase hex digits, or sha256: and 64 of them"))
    }
}

/// Every probe of one toolchain version, as the server answers them.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContractVerdicts {
    pub lineage: String,
    pub version: String,
    /// The libc its latest run named, e.g. `musl`.
    #[serde(default)]
    pub libc: Option<String>,
    pub probes: Vec<ProbeVerdict>,
}

/// What a toolchain does to one function, from all its probes: the worst of them.
#[derive(Debug, Clone, PartialEq)]
pub enum FunctionVerdict {
    /// A probe breaks it; the words say how ("O(n) against its contract of O(1)").
    Breaks { breach: Breakage, verdict: String },
    /// Every probe measured held.
    Held,
    /// The libc lacks it.
    NotProvided,
    /// No probe gave a verdict either way.
    Unsure,
}

impl FunctionVerdict {
    /// The verdict of `function` from `probes` (those of other functions are skipped); `guarded`
    /// says which probes end their input against an unreadable page, so that their crash is a
    /// read past the bound. None when no probe names the function.
    pub fn of(function: &str, probes: &[ProbeVerdict], guarded: impl Fn(&str) -> bool) -> Option<FunctionVerdict> {
        let mine: Vec<&ProbeVerdict> = probes.iter().filter(|p| p.function == function).collect();
        if mine.is_empty() {
            return None;
        }
        let mut worst: Option<(Breakage, String)> = None;
        for p in &mine {
            let breach = match p.state {
                ProbeState::Over => {
                    let class = p.class.map_or("more", |c| c.label());
                    Some((
                        Breakage::OverContract,
                        format!("{class} against its contract of {} ({})", p.expected.label(), p.workload),
                    ))
                }
                ProbeState::Failed(FailureKind::Crashed) if guarded(&p.workload) => {
                    Some((Breakage::ReadsPastBound, format!("reads past its bound ({})", p.workload)))
                }
                ProbeState::Failed(FailureKind::WrongResult) => {
                    Some((Breakage::WrongResult, format!("returns a wrong result ({})", p.workload)))
                }
                // A probe that could not be built or set up says nothing about the function.
                ProbeState::Failed(FailureKind::BuildFailed | FailureKind::SetupFailed) => None,
                ProbeState::Failed(kind) => Some((Breakage::Failed, format!("{} ({})", kind.label(), p.workload))),
                _ => None,
            };
            if let Some(b) = breach {
                if worst.as_ref().is_none_or(|(w, _)| b.0 < *w) {
                    worst = Some(b);
                }
            }
        }
        Some(match worst {
            Some((breach, verdict)) => FunctionVerdict::Breaks { breach, verdict },
            None if mine.iter().all(|p| p.state == ProbeState::NotProvided) => FunctionVerdict::NotProvided,
            None if mine.iter().any(|p| p.state == ProbeState::Held) => FunctionVerdict::Held,
            None => FunctionVerdict::Unsure,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::complexity::Class;

    pub(crate) fn scan() -> ExposureSubmission {
        ExposureSubmission {
            scan_id: Uuid::nil(),
            agent_version: "0.1.0".into(),
            scanned_at: OffsetDateTime::UNIX_EPOCH,
            artifact: "api-server".into(),
            digest: format!("sha256:{}", "a".repeat(64)),
            lineage: "zig-cc-musl".into(),
            version: "0.16.0".into(),
            libc: "zig-musl".into(),
            linkage: Linkage::Static,
            exposed: vec![ExposedFunction {
                function: "strspn".into(),
                breach: Breakage::OverContract,
                verdict: "O(n) against its contract of O(1)".into(),
                call_sites: 4,
                referenced: false,
                callers: vec!["jsonTranslateTextToBlob".into()],
                accepted: None,
            }],
            reaches: vec!["memcpy".into(), "strspn".into()],
        }
    }

    #[test]
    fn a_scan_round_trips_and_fails_on_an_unaccepted_function() {
        let s = scan();
        let back = ExposureSubmission::from_json(&serde_json::to_vec(&s).unwrap()).unwrap();
        assert_eq!(back, s);
        assert!(s.fails());
        let mut accepted = s.clone();
        accepted.exposed[0].accepted = Some("only on trusted input, until the fix".into());
        assert!(!accepted.fails());
    }

    #[test]
    fn bad_fields_are_named() {
        let field = |f: fn(&mut ExposureSubmission)| {
            let mut s = scan();
            f(&mut s);
            s.validate().unwrap_err().field
        };
        assert_eq!(field(|s| s.digest = "md5:abc".into()), "digest");
        assert_eq!(field(|s| s.digest = format!("sha256:{}", "A".repeat(64))), "digest");
        assert_eq!(field(|s| s.artifact = String::new()), "artifact");
        assert_eq!(field(|s| s.exposed.push(s.exposed[0].clone())), "exposed[1].function");
        assert_eq!(field(|s| s.exposed[0].call_sites = 0), "exposed[0]");
        assert_eq!(field(|s| s.reaches.clear()), "exposed[0].function");
        assert_eq!(field(|s| s.exposed[0].callers = vec!["f".into(); 17]), "exposed[0].callers");
        let mut ok = scan();
        ok.digest = "build-id:0123abcd".into();
        ok.validate().unwrap();
        assert_eq!(Breakage::parse("reads_past_bound"), Some(Breakage::ReadsPastBound));
        assert_eq!(Linkage::parse("dynamic"), Some(Linkage::Dynamic));
    }

    fn probe(workload: &str, state: ProbeState, class: Option<Class>) -> ProbeVerdict {
        let function = workload.split('.').nth(1).unwrap().to_string();
        ProbeVerdict { workload: workload.into(), function, expected: Class::Constant, class, state }
    }

    #[test]
    fn a_function_takes_its_worst_probe() {
        let guarded = |w: &str| w.ends_with(".bound");
        let probes = vec![
            probe("contract.strspn.input", ProbeState::Held, Some(Class::Constant)),
            probe("contract.strspn.set", ProbeState::Over, Some(Class::Linear)),
            probe("contract.strnlen.bound", ProbeState::Failed(FailureKind::Crashed), None),
            probe("contract.strnlen.len", ProbeState::Over, Some(Class::Linear)),
            probe("contract.strchrnul.x", ProbeState::NotProvided, None),
            probe("contract.memcpy.n", ProbeState::Held, Some(Class::Linear)),
            probe("contract.qsort.n", ProbeState::Unsure, None),
            probe("contract.strtol.n", ProbeState::Failed(FailureKind::WrongResult), None),
            probe("contract.wcslen.n", ProbeState::Failed(FailureKind::BuildFailed), None),
            probe("contract.wcsnlen.n", ProbeState::Unmeasurable, None),
        ];
        let of = |f: &str| FunctionVerdict::of(f, &probes, guarded);
        assert_eq!(
            of("strspn"),
            Some(FunctionVerdict::Breaks {
                breach: Breakage::OverContract,
                verdict: "O(n) against its contract of O(1) (contract.strspn.set)".into()
            })
        );
        assert!(matches!(of("strnlen"), Some(FunctionVerdict::Breaks { breach: Breakage::ReadsPastBound, .. })));
        assert!(matches!(of("strtol"), Some(FunctionVerdict::Breaks { breach: Breakage::WrongResult, .. })));
        assert_eq!(of("strchrnul"), Some(FunctionVerdict::NotProvided));
        assert_eq!(of("memcpy"), Some(FunctionVerdict::Held));
        assert_eq!(of("qsort"), Some(FunctionVerdict::Unsure));
        assert_eq!(of("wcslen"), Some(FunctionVerdict::Unsure), "a probe that did not build judges nothing");
        assert_eq!(of("wcsnlen"), Some(FunctionVerdict::Unsure), "nor one the measure could not count");
        assert_eq!(of("strlen"), None);
    }
}
