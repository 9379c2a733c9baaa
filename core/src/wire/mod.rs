//! The run submission sent by the agent to `POST /api/v1/runs`, and the rules it must obey.
//!
//! Defined once here so the agent and the server can never disagree about the format.

mod beside;
mod capability;
mod contract;
mod facts;
mod failure;
mod fields;
mod found;
mod measure;
mod profile;
mod shape;

pub use beside::{Beside, BesideMedian};
pub(crate) use capability::known;
pub use capability::{Accepts, Capability};
pub use contract::{Contract, CONTRACT_PREFIX};
pub use facts::Facts;
pub use failure::{signal_name, Failure, FailureKind};
use fields::key_path;
pub use fields::FieldError;
pub(crate) use fields::{check_build_hash, check_name, check_text, err, parse_json};
pub use found::{check_shape, BreakKind, FoundProbe, FoundProbes, MAX_FOUND_PROBES, SHAPE_SEPARATOR};
pub use measure::{Counter, Measure, Metric};
pub use profile::{Caller, Profile, ProfiledFunction, COVERED, MAX_CALLERS, MAX_FUNCTIONS, MAX_PROFILE_BYTES};
pub use shape::{shape, Dropped, Refusal, Shaped};

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use time::OffsetDateTime;
use uuid::Uuid;

/// Longest name (host, toolchain, workload, …) accepted, in characters.
pub const MAX_NAME_CHARS: usize = 128;
/// Longest free-text field (compiler command, flags, CPU model, libc), in characters.
pub const MAX_TEXT_CHARS: usize = 1024;
/// Most workloads one run may carry.
pub const MAX_WORKLOADS: usize = 256;
/// Most sizes one workload may be measured at.
pub const MAX_SIZES: usize = 64;
/// Most repetitions at one size.
pub const MAX_SAMPLES_PER_SIZE: usize = 1000;
/// Most samples in a whole run.
pub const MAX_SAMPLES_PER_RUN: usize = 200_000;
/// Fewest distinct sizes a slope can be fitted from.
pub const MIN_SIZES: usize = 3;
/// Longest a single sample may claim to take: a week, in nanoseconds.
pub const MAX_SAMPLE_NS: f64 = 7.0 * 24.0 * 3600.0 * 1e9;
/// Largest input size accepted.
pub const MAX_SIZE: u64 = 1 << 50;
/// Most metadata entries one workload may carry.
pub const MAX_METADATA: usize = 32;
/// Longest failure detail (a compiler's error output, a workload's message), in bytes.
pub const MAX_DETAIL_BYTES: usize = 4096;
/// Most lines a failure detail may have.
pub const MAX_DETAIL_LINES: usize = 20;

/// One agent invocation for one toolchain on one host.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSubmission {
    /// Chosen by the agent; resubmitting the same id never stores the run twice.
    pub run_id: Uuid,
    /// The version of the agent that measured.
    pub agent_version: String,
    /// When measuring started, RFC 3339.
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    pub host: Host,
    pub toolchain: Toolchain,
    /// One entry per workload, each name once.
    pub workloads: Vec<WorkloadRun>,
    /// What each repetition reports and the slopes are fitted from; `wall` when left out.
    #[serde(default, skip_serializing_if = "Measure::is_wall")]
    pub measure: Measure,
    /// Which counter counted an `instructions` run; required then, and only then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<Counter>,
}

/// The machine that ran the workloads.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// The host name, e.g. `build-01`.
    pub name: String,
    /// The CPU model, e.g. `AMD EPYC 7B13`.
    #[serde(default)]
    pub cpu: String,
    /// The kernel release, e.g. `6.1.0`.
    #[serde(default)]
    pub kernel: String,
    /// The machine architecture, e.g. `x86_64`.
    #[serde(default)]
    pub arch: String,
}

/// How the workloads were built.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toolchain {
    /// The lineage, e.g. `zig-cc-musl`, `musl-gcc`, `gcc-glibc`.
    pub name: String,
    /// The toolchain's own version, e.g. `0.16.0`.
    pub version: String,
    /// The libc actually linked, e.g. `musl 1.2.5 (zig)`.
    #[serde(default)]
    pub libc: String,
    /// The target triple, e.g. `x86_64-linux-musl`.
    #[serde(default)]
    pub target: String,
    /// The compiler command, e.g. `zig cc -target x86_64-linux-musl`.
    #[serde(default)]
    pub compiler: String,
    /// The compiler flags, e.g. `-O2`.
    #[serde(default)]
    pub flags: String,
    /// What `version` is the version of: the compiler's own (the default, and what agents sent
    /// before the field existed) or the libc's. A lineage keeps the axis of its first run.
    #[serde(default, skip_serializing_if = "VersionFrom::is_compiler")]
    pub version_from: VersionFrom,
}

/// What a toolchain's version counts: the compiler's releases (`zig cc`, gcc) or the libc's
/// (a `musl-gcc` wrapper, whose gcc stays put while musl moves).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VersionFrom {
    #[default]
    Compiler,
    Libc,
}

impl VersionFrom {
    pub const ALL: [VersionFrom; 2] = [VersionFrom::Compiler, VersionFrom::Libc];

    /// The wire name: `compiler` or `libc`.
    pub fn as_str(self) -> &'static str {
        match self {
            VersionFrom::Compiler => "compiler",
            VersionFrom::Libc => "libc",
        }
    }

    pub fn parse(s: &str) -> Option<VersionFrom> {
        VersionFrom::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether this is the default, which the wire leaves out so that a run on the compiler axis
    /// is what agents sent before the field existed, byte for byte (and hashes the same).
    pub fn is_compiler(&self) -> bool {
        *self == VersionFrom::Compiler
    }
}

/// As a database column spells it.
impl TryFrom<String> for VersionFrom {
    type Error = String;

    fn try_from(s: String) -> Result<VersionFrom, String> {
        VersionFrom::parse(&s).ok_or_else(|| format!("{s:?} is neither compiler nor libc"))
    }
}

impl fmt::Display for VersionFrom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every measurement of one workload in a run.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadRun {
    /// The workload, e.g. `strchr`.
    pub name: String,
    pub size_unit: SizeUnit,
    /// A digest of the workload's source, e.g. `sha256:…`.
    #[serde(default)]
    pub source_hash: String,
    /// A digest of the code that ran, e.g. `sha256:…`: the workload binary's loaded sections and
    /// those of the shared libraries it loads (not its debug information). Equal across two
    /// versions, the build did not change, and neither could what it costs. Absent where the
    /// agent cannot tell (a team's command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_hash: Option<String>,
    /// The control lineage measured beside it in the same invocation on the same host, with its
    /// median at each size: what divides the host out of a cost on times (`check --control`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<Beside>,
    /// Where its instructions go at one size, for a workload over a limit (or every workload with
    /// `--profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// The sizes measured; when the workload failed, those measured before the failure (possibly
    /// none).
    pub measurements: Vec<Measurement>,
    /// Facts about what the workload linked, e.g. `sqlite_version`; optional.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// Why the workload stopped before it was measured fully: it did not build, crashed, ran past
    /// its time limit, counted wrong, or could not set up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The class the workload may cost, judged instead of the slope limit: a contract probe's
    /// (`contract.FUNCTION.AXIS`), or a team's workload declared with `expect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<Contract>,
    /// The toolchain's libc does not provide the function the probe calls (glibc 2.36 has no
    /// `strlcpy`): neither a failure nor a pass, with no measurements.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_provided: bool,
    /// The size a team runs the workload at, in its own unit (the built-ins: 4 MiB of text,
    /// 40,000 records): pages, reports and webhooks give the time predicted there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_of_interest: Option<u64>,
}

/// The unit a workload's size is counted in.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeUnit {
    Bytes,
    Records,
    Items,
    Iterations,
}

impl SizeUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            SizeUnit::Bytes => "bytes",
            SizeUnit::Records => "records",
            SizeUnit::Items => "items",
            SizeUnit::Iterations => "iterations",
        }
    }

    pub fn parse(s: &str) -> Option<SizeUnit> {
        Some(match s {
            "bytes" => SizeUnit::Bytes,
            "records" => SizeUnit::Records,
            "items" => SizeUnit::Items,
            "iterations" => SizeUnit::Iterations,
            _ => return None,
        })
    }
}

/// As a database column spells it.
impl TryFrom<String> for SizeUnit {
    type Error = String;

    fn try_from(s: String) -> Result<SizeUnit, String> {
        SizeUnit::parse(&s).ok_or_else(|| format!("{s:?} is not a size unit (bytes, records, items or iterations)"))
    }
}

impl fmt::Display for SizeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The repetitions timed at one input size.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measurement {
    /// The input size, in the workload's size unit.
    pub size: u64,
    /// Time of each repetition of the measured loop, in nanoseconds: wall time, or CPU time in a
    /// `cpu` run.
    pub samples_ns: Vec<f64>,
    /// Instructions retired per repetition: required in an `instructions` run, and otherwise
    /// given where the kernel allowed counting them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Vec<u64>>,
}

impl Measurement {
    /// The median of the samples (the mean of the middle two for an even count).
    pub fn median_ns(&self) -> f64 {
        crate::fit::median(&self.samples_ns)
    }
}

impl Host {
    /// Checks the host's fields, named as `host.…`.
    pub(crate) fn validate(&self) -> Result<(), FieldError> {
        check_name("host.name", &self.name)?;
        check_text("host.cpu", &self.cpu)?;
        check_text("host.kernel", &self.kernel)?;
        check_text("host.arch", &self.arch)
    }
}

impl RunSubmission {
    /// Parses and validates a JSON body; the error names the first offending field.
    pub fn from_json(body: &[u8]) -> Result<RunSubmission, FieldError> {
        let run: RunSubmission = parse_json(body)?;
        run.validate()?;
        Ok(run)
    }

    /// Checks every rule the server enforces, so the agent can refuse to send a bad run.
    pub fn validate(&self) -> Result<(), FieldError> {
        check_name("agent_version", &self.agent_version)?;
        self.host.validate()?;
        check_name("toolchain.name", &self.toolchain.name)?;
        crate::arch::check_name(&self.toolchain.name, &self.arch()).map_err(|why| err("toolchain.name", why))?;
        check_name("toolchain.version", &self.toolchain.version)?;
        check_text("toolchain.libc", &self.toolchain.libc)?;
        check_text("toolchain.target", &self.toolchain.target)?;
        check_text("toolchain.compiler", &self.toolchain.compiler)?;
        check_text("toolchain.flags", &self.toolchain.flags)?;
        measure::validate(self.measure, self.counter)?;

        if self.workloads.is_empty() {
            return Err(err("workloads", "at least one workload is required"));
        }
        if self.workloads.len() > MAX_WORKLOADS {
            return Err(err(
                "workloads",
                format!("{} workloads is more than the limit of {MAX_WORKLOADS}", self.workloads.len()),
            ));
        }
        let mut names = HashSet::new();
        let mut total_samples = 0usize;
        for (i, w) in self.workloads.iter().enumerate() {
            let at = format!("workloads[{i}]");
            check_name(&format!("{at}.name"), &w.name)?;
            if !names.insert(w.name.as_str()) {
                return Err(err(format!("{at}.name"), format!("duplicate workload {:?}", w.name)));
            }
            check_text(&format!("{at}.source_hash"), &w.source_hash)?;
            if let Some(hash) = &w.build_hash {
                check_build_hash(&format!("{at}.build_hash"), hash)?;
            }
            if w.metadata.len() > MAX_METADATA {
                return Err(err(
                    format!("{at}.metadata"),
                    format!("{} entries is more than the limit of {MAX_METADATA}", w.metadata.len()),
                ));
            }
            for (key, value) in &w.metadata {
                check_name(&format!("{at}.metadata"), key)?;
                check_text(&key_path(&format!("{at}.metadata"), key), value)?;
            }
            if let Some(f) = &w.failure {
                f.validate(&format!("{at}.failure"))?;
            }
            if let Some(c) = &w.contract {
                c.validate(&format!("{at}.contract"))?;
            }
            if let Some(b) = &w.control {
                b.validate(&format!("{at}.control"))?;
            }
            if let Some(p) = &w.profile {
                p.validate(&format!("{at}.profile"))?;
            }
            if let Some(size) = w.size_of_interest {
                if size == 0 || size > MAX_SIZE {
                    return Err(err(
                        format!("{at}.size_of_interest"),
                        format!("{size} is not a size from 1 to {MAX_SIZE}"),
                    ));
                }
            }
            if w.not_provided {
                if w.failure.is_some() || !w.measurements.is_empty() {
                    return Err(err(
                        format!("{at}.not_provided"),
                        "a workload whose function is not provided has no measurements and no failure",
                    ));
                }
                continue;
            }
            total_samples += validate_measurements(&at, &w.measurements, w.failure.is_none())?;
            if self.measure == Measure::Instructions {
                for (j, m) in w.measurements.iter().enumerate() {
                    measure::validate_counts(&format!("{at}.measurements[{j}]"), m)?;
                }
            }
        }
        if total_samples > MAX_SAMPLES_PER_RUN {
            return Err(err(
                "workloads",
                format!("{total_samples} samples is more than the limit of {MAX_SAMPLES_PER_RUN} per run"),
            ));
        }
        Ok(())
    }

    /// The workloads that failed.
    pub fn failures(&self) -> impl Iterator<Item = (&WorkloadRun, &Failure)> {
        self.workloads.iter().filter_map(|w| w.failure.as_ref().map(|f| (w, f)))
    }

    /// The run's measure with its counter: what its series are kept apart by.
    /// The architecture the run's workloads were built for: its target's, else its host's.
    pub fn arch(&self) -> String {
        crate::arch::of(&self.toolchain.target, &self.host.arch)
    }

    /// The lineage the run's series are stored under: its toolchain's name, qualified with the
    /// architecture when that is not x86-64 (`zig-cc-musl (aarch64)`), so that architectures never
    /// share a series.
    pub fn series_lineage(&self) -> String {
        crate::arch::series_lineage(&self.toolchain.name, &self.arch())
    }

    pub fn metric(&self) -> Metric {
        Metric::of(self.measure, self.counter)
    }

    /// Total number of timed samples in the run.
    pub fn sample_count(&self) -> usize {
        self.workloads.iter().flat_map(|w| &w.measurements).map(|m| m.samples_ns.len()).sum()
    }

    /// A digest of the submission's content, used to tell a resubmission from a conflicting one.
    pub fn content_hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let canonical = serde_json::to_vec(self).expect("a submission always serializes");
        format!("sha256:{}", hex::encode(Sha256::digest(canonical)))
    }
}

/// Checks a workload's measurements; `complete` (no failure) requires enough sizes for a slope.
fn validate_measurements(at: &str, ms: &[Measurement], complete: bool) -> Result<usize, FieldError> {
    let at = format!("{at}.measurements");
    if ms.len() > MAX_SIZES {
        return Err(err(&at, format!("{} sizes is more than the limit of {MAX_SIZES}", ms.len())));
    }
    let mut sizes = HashSet::new();
    let mut samples = 0;
    for (j, m) in ms.iter().enumerate() {
        let at = format!("{at}[{j}]");
        if m.size == 0 {
            return Err(err(format!("{at}.size"), "must be positive"));
        }
        if m.size > MAX_SIZE {
            return Err(err(format!("{at}.size"), format!("must be at most {MAX_SIZE}")));
        }
        if !sizes.insert(m.size) {
            return Err(err(format!("{at}.size"), format!("size {} appears twice", m.size)));
        }
        if m.samples_ns.is_empty() {
            return Err(err(format!("{at}.samples_ns"), "at least one sample is required"));
        }
        if m.samples_ns.len() > MAX_SAMPLES_PER_SIZE {
            return Err(err(
                format!("{at}.samples_ns"),
                format!("{} samples is more than the limit of {MAX_SAMPLES_PER_SIZE}", m.samples_ns.len()),
            ));
        }
        for (k, &ns) in m.samples_ns.iter().enumerate() {
            let reason = if !ns.is_finite() {
                "must be a finite number"
            } else if ns <= 0.0 {
                "must be positive"
            } else if ns > MAX_SAMPLE_NS {
                "is longer than a week"
            } else {
                continue;
            };
            return Err(err(format!("{at}.samples_ns[{k}]"), reason));
        }
        if let Some(ins) = &m.instructions {
            if ins.len() != m.samples_ns.len() {
                return Err(err(format!("{at}.instructions"), "must have one count per sample"));
            }
        }
        samples += m.samples_ns.len();
    }
    if complete && sizes.len() < MIN_SIZES {
        return Err(err(at, format!("{} distinct sizes given; a slope needs at least {MIN_SIZES}", sizes.len())));
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample_json() -> serde_json::Value {
        serde_json::json!({
            "run_id": "0b8e6a52-6f7e-4b8e-9a39-0d3c7d1e9f10",
            "agent_version": "0.1.0",
            "started_at": "2026-11-29T21:00:00Z",
            "host": {"name": "build-01", "cpu": "AMD EPYC 7B13", "kernel": "6.1.0", "arch": "x86_64"},
            "toolchain": {"name": "zig-cc-musl", "version": "0.16.0", "libc": "musl 1.2.5 (zig)",
                          "target": "x86_64-linux-musl", "compiler": "zig cc -target x86_64-linux-musl", "flags": "-O2"},
            "workloads": [{
                "name": "strchr", "size_unit": "bytes", "source_hash": "sha256:ab",
                "measurements": [
                    {"size": 65536, "samples_ns": [1000.0, 1100.0, 1050.0]},
                    {"size": 131072, "samples_ns": [2000.0, 2100.0]},
                    {"size": 262144, "samples_ns": [4000.0]}
                ]
            }]
        })
    }

    /// What a server from before `c` accepts.
    fn older_than(c: Capability) -> Accepts {
        Capability::ALL.into_iter().filter(|&a| a != c).collect()
    }

    fn parse(v: &serde_json::Value) -> Result<RunSubmission, FieldError> {
        RunSubmission::from_json(&serde_json::to_vec(v).unwrap())
    }

    #[test]
    fn a_well_formed_submission_parses() {
        let run = parse(&sample_json()).unwrap();
        assert_eq!(run.workloads[0].measurements.len(), 3);
        assert_eq!(run.sample_count(), 6);
    }

    #[test]
    fn type_errors_name_the_field_path() {
        let mut v = sample_json();
        v["workloads"][0]["measurements"][1]["size"] = serde_json::json!(-5);
        let e = parse(&v).unwrap_err();
        assert_eq!(e.field, "workloads[0].measurements[1].size");
        assert!(e.reason.contains("invalid value"), "{}", e.reason);
    }

    #[test]
    fn unknown_size_units_are_rejected() {
        let mut v = sample_json();
        v["workloads"][0]["size_unit"] = serde_json::json!("furlongs");
        let e = parse(&v).unwrap_err();
        assert_eq!(e.field, "workloads[0].size_unit");
        assert!(e.reason.contains("unknown variant"), "{}", e.reason);
    }

    #[test]
    fn rule_violations_name_the_field_and_reason() {
        let cases: Vec<(&str, serde_json::Value, &str, &str)> = vec![
            (
                "/workloads/0/measurements/0/samples_ns/1",
                serde_json::json!(0.0),
                "workloads[0].measurements[0].samples_ns[1]",
                "positive",
            ),
            (
                "/workloads/0/measurements/0/samples_ns/1",
                serde_json::json!(-3.0),
                "workloads[0].measurements[0].samples_ns[1]",
                "positive",
            ),
            (
                "/workloads/0/measurements/0/samples_ns/1",
                serde_json::json!(1e300),
                "workloads[0].measurements[0].samples_ns[1]",
                "week",
            ),
            ("/workloads/0/measurements/0/size", serde_json::json!(0), "workloads[0].measurements[0].size", "positive"),
            (
                "/workloads/0/measurements/0/samples_ns",
                serde_json::json!([]),
                "workloads[0].measurements[0].samples_ns",
                "at least one",
            ),
            (
                "/workloads/0/measurements/2/size",
                serde_json::json!(65536),
                "workloads[0].measurements[2].size",
                "twice",
            ),
            ("/host/name", serde_json::json!(""), "host.name", "empty"),
            ("/host/name", serde_json::json!("a\u{7}b"), "host.name", "control"),
            ("/toolchain/name", serde_json::json!("x".repeat(200)), "toolchain.name", "limit"),
            ("/workloads", serde_json::json!([]), "workloads", "at least one"),
        ];
        for (pointer, value, field, reason) in cases {
            let mut v = sample_json();
            *v.pointer_mut(pointer).unwrap() = value;
            let e = parse(&v).unwrap_err();
            assert_eq!(e.field, field, "{pointer}");
            assert!(e.reason.contains(reason), "{pointer}: {}", e.reason);
        }
    }

    #[test]
    fn a_build_hash_is_one_spelling_of_a_sha256_digest() {
        let with = |hash: &str| {
            let mut v = sample_json();
            v["workloads"][0]["build_hash"] = serde_json::json!(hash);
            parse(&v)
        };
        assert!(with(&format!("sha256:{}", "0a".repeat(32))).is_ok());
        for bad in
            ["", "sha256:", "sha256:ABCD", &format!("sha1:{}", "0a".repeat(32)), &format!("sha256:{}", "0A".repeat(32))]
        {
            let e = with(bad).unwrap_err();
            assert_eq!(e.field, "workloads[0].build_hash", "{bad:?}");
            assert!(e.reason.contains("64 lowercase hex digits"), "{bad:?}: {}", e.reason);
        }
    }

    #[test]
    fn fewer_than_three_sizes_cannot_be_fitted() {
        let mut v = sample_json();
        v["workloads"][0]["measurements"].as_array_mut().unwrap().pop();
        let e = parse(&v).unwrap_err();
        assert_eq!(e.field, "workloads[0].measurements");
        assert!(e.reason.contains("at least 3"), "{}", e.reason);
    }

    #[test]
    fn duplicate_workloads_are_rejected() {
        let mut v = sample_json();
        let w = v["workloads"][0].clone();
        v["workloads"].as_array_mut().unwrap().push(w);
        let e = parse(&v).unwrap_err();
        assert_eq!(e.field, "workloads[1].name");
        assert!(e.reason.contains("duplicate"));
    }

    #[test]
    fn a_missing_field_is_named_by_its_own_path() {
        let mut v = sample_json();
        v["host"].as_object_mut().unwrap().remove("name");
        assert_eq!(parse(&v).unwrap_err().field, "host.name");
        let mut v = sample_json();
        v.as_object_mut().unwrap().remove("run_id");
        assert_eq!(parse(&v).unwrap_err().field, "run_id");
        let e = RunSubmission::from_json(b"5").unwrap_err();
        assert_eq!(e.field, ".", "the body as a whole: {}", e.reason);
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let mut v = sample_json();
        v["host"]["colour"] = serde_json::json!("blue");
        let e = parse(&v).unwrap_err();
        assert!(e.reason.contains("unknown field"), "{}", e.reason);
        assert_eq!(e.field, "host.colour");
    }

    #[test]
    fn keys_that_are_not_plain_words_are_quoted_in_the_path() {
        let mut v = sample_json();
        v["host"]["k.rnel"] = serde_json::json!("6.1.0");
        assert_eq!(parse(&v).unwrap_err().field, r#"host["k.rnel"]"#);
        let mut v = sample_json();
        v["workloads"][0]["metadata"] = serde_json::json!({"a.b[0]\"": "x\u{7}"});
        assert_eq!(parse(&v).unwrap_err().field, r#"workloads[0].metadata["a.b[0]\""]"#);
    }

    #[test]
    fn workload_metadata_is_optional_and_bounded() {
        let mut v = sample_json();
        v["workloads"][0]["metadata"] = serde_json::json!({"sqlite_version": "3.46.0"});
        let run = parse(&v).unwrap();
        assert_eq!(run.workloads[0].metadata["sqlite_version"], "3.46.0");
        let without = parse(&sample_json()).unwrap();
        assert!(!serde_json::to_string(&without).unwrap().contains("metadata"));

        v["workloads"][0]["metadata"] = serde_json::json!({"k": "a\u{7}"});
        assert_eq!(parse(&v).unwrap_err().field, "workloads[0].metadata.k");
        v["workloads"][0]["metadata"] = serde_json::json!({"": "x"});
        assert_eq!(parse(&v).unwrap_err().field, "workloads[0].metadata");
        let many: serde_json::Map<String, serde_json::Value> =
            (0..33).map(|i| (format!("k{i}"), serde_json::json!("v"))).collect();
        v["workloads"][0]["metadata"] = serde_json::Value::Object(many);
        assert!(parse(&v).unwrap_err().reason.contains("limit of 32"));
    }

    fn with_failure(failure: serde_json::Value, sizes: usize) -> serde_json::Value {
        let mut v = sample_json();
        let w = &mut v["workloads"][0];
        w["failure"] = failure;
        w["measurements"].as_array_mut().unwrap().truncate(sizes);
        v
    }

    #[test]
    fn a_failed_workload_carries_the_sizes_measured_before_it_possibly_none() {
        let run = parse(&with_failure(
            serde_json::json!({"kind": "wrong_result", "size": 262144, "got": "-1", "expected": "37449",
                               "detail": "wrong result: -1 hits, expected 37449"}),
            2,
        ))
        .unwrap();
        let f = run.workloads[0].failure.as_ref().unwrap();
        assert_eq!(f.kind, FailureKind::WrongResult);
        assert_eq!((f.size, f.got.as_deref(), f.expected.as_deref()), (Some(262144), Some("-1"), Some("37449")));
        let built = parse(&with_failure(
            serde_json::json!({"kind": "build_failed", "exit_status": 1, "detail": "x.c:1: error: boom\n\tat line 1"}),
            0,
        ))
        .unwrap();
        assert!(built.workloads[0].measurements.is_empty());
        assert_eq!(built.failures().count(), 1);
        assert!(
            shape(&built, &older_than(Capability::Failures)).is_err(),
            "nothing is left for a server without failures"
        );
        let crashed = serde_json::json!({"kind": "crashed", "size": 65536, "signal": 11});
        let crashed = parse(&with_failure(crashed, 1)).unwrap().workloads[0].failure.clone().unwrap();
        assert_eq!((crashed.kind, crashed.size, crashed.signal), (FailureKind::Crashed, Some(65536), Some(11)));
    }

    #[test]
    fn failures_are_validated_as_strictly_as_measurements() {
        let cases = [
            (serde_json::json!({"kind": "exploded"}), "workloads[0].failure.kind"),
            (serde_json::json!({"kind": "crashed", "size": 1}), "workloads[0].failure.signal"),
            (serde_json::json!({"kind": "crashed", "size": 1, "signal": 99}), "workloads[0].failure.signal"),
            (serde_json::json!({"kind": "timed_out", "size": 1}), "workloads[0].failure.limit_ms"),
            (serde_json::json!({"kind": "wrong_result", "size": 1, "got": "1"}), "workloads[0].failure.expected"),
            (
                serde_json::json!({"kind": "wrong_result", "size": 1, "got": "1", "expected": "2", "signal": 6}),
                "workloads[0].failure.signal",
            ),
            (serde_json::json!({"kind": "build_failed", "size": 0}), "workloads[0].failure.size"),
            (serde_json::json!({"kind": "setup_failed", "detail": "a\u{1b}[31mred"}), "workloads[0].failure.detail"),
            (serde_json::json!({"kind": "setup_failed", "detail": "x".repeat(4097)}), "workloads[0].failure.detail"),
            (serde_json::json!({"kind": "setup_failed", "detail": "l\n".repeat(21)}), "workloads[0].failure.detail"),
            (
                serde_json::json!({"kind": "wrong_result", "size": 1, "got": "a\nb", "expected": "2"}),
                "workloads[0].failure.got",
            ),
            (serde_json::json!({"kind": "setup_failed", "why": "?"}), "workloads[0].failure.why"),
        ];
        for (failure, field) in cases {
            let e = parse(&with_failure(failure.clone(), 3)).unwrap_err();
            assert_eq!(e.field, field, "{failure}: {e}");
        }
        let e = parse(&with_failure(serde_json::Value::Null, 2)).unwrap_err();
        assert_eq!(e.field, "workloads[0].measurements", "without a failure a slope needs three sizes");
    }

    #[test]
    fn a_run_without_failures_is_what_older_agents_sent_byte_for_byte() {
        let run = parse(&sample_json()).unwrap();
        let json = serde_json::to_value(&run).unwrap();
        assert!(json["workloads"][0].get("failure").is_none());
        assert_eq!(shape(&run, &older_than(Capability::Failures)).unwrap().run, run);
    }

    #[test]
    fn the_version_axis_is_compiler_unless_said_and_left_out_when_it_is() {
        let run = parse(&sample_json()).unwrap();
        assert_eq!(run.toolchain.version_from, VersionFrom::Compiler);
        assert!(serde_json::to_value(&run).unwrap()["toolchain"].get("version_from").is_none());
        let mut v = sample_json();
        v["toolchain"]["version_from"] = serde_json::json!("libc");
        let libc = parse(&v).unwrap();
        assert_eq!(libc.toolchain.version_from, VersionFrom::Libc);
        assert_eq!(serde_json::to_value(&libc).unwrap()["toolchain"]["version_from"], "libc");
        assert_ne!(libc.content_hash(), run.content_hash());
        v["toolchain"]["version_from"] = serde_json::json!("kernel");
        assert_eq!(parse(&v).unwrap_err().field, "toolchain.version_from");
    }

    #[test]
    fn a_probe_carries_its_contract_and_a_function_not_provided_carries_nothing_else() {
        let mut v = sample_json();
        v["workloads"][0]["name"] = serde_json::json!("contract.strchr.remaining");
        assert!(parse(&v).is_ok(), "a probe sent as a plain workload, as to a server that predates contracts");
        v["workloads"][0]["contract"] = serde_json::json!({
            "expected": "1", "function": "strchr", "axis": "remaining",
            "broken": "reads the whole remaining string",
            "consequence": "A loop that calls it once per token over n bytes is O(n²)."
        });
        let probe = parse(&v).unwrap();
        assert_eq!(probe.workloads[0].contract.as_ref().unwrap().expected, crate::complexity::Class::Constant);
        v["workloads"][0]["contract"]["expected"] = serde_json::json!("n^4");
        assert_eq!(parse(&v).unwrap_err().field, "workloads[0].contract.expected");
        v["workloads"][0]["contract"] = serde_json::json!({"expected": "n", "consequence": "x".repeat(513)});
        assert_eq!(parse(&v).unwrap_err().field, "workloads[0].contract.consequence");

        let mut absent = sample_json();
        absent["workloads"][0] = serde_json::json!({
            "name": "contract.strlcpy.remaining", "size_unit": "bytes", "measurements": [],
            "contract": {"expected": "n"}, "not_provided": true
        });
        let run = parse(&absent).unwrap();
        assert!(run.workloads[0].not_provided);
        assert!(shape(&run, &older_than(Capability::Contracts)).is_err(), "nothing left for an older server");
        absent["workloads"][0]["measurements"] = sample_json()["workloads"][0]["measurements"].clone();
        assert_eq!(parse(&absent).unwrap_err().field, "workloads[0].not_provided");

        // Without either field, a run is what agents sent before contracts, byte for byte.
        let plain = parse(&sample_json()).unwrap();
        let json = serde_json::to_value(&plain).unwrap();
        assert!(json["workloads"][0].get("contract").is_none() && json["workloads"][0].get("not_provided").is_none());
        assert_eq!(shape(&plain, &older_than(Capability::Contracts)).unwrap().run, plain);
        let stripped = shape(&probe, &older_than(Capability::Contracts)).unwrap().run;
        assert!(stripped.workloads[0].contract.is_none());
    }

    #[test]
    fn content_hash_tells_bodies_apart() {
        let a = parse(&sample_json()).unwrap();
        let mut b = a.clone();
        assert_eq!(a.content_hash(), b.content_hash());
        b.workloads[0].measurements[0].samples_ns[0] += 1.0;
        assert_ne!(a.content_hash(), b.content_hash());
    }
}
