//! Where a contract probe stands at one toolchain version, one state for every place that shows
//! or judges it: the agent's contract table and its exposure verdicts, the server's contracts page
//! and its answer to `GET /api/v1/toolchains/{lineage}/{version}/contracts`; and that answer's
//! record of one probe, [`ProbeVerdict`].
//!
//! On the wire a probe's state is written as every release has written it: `state` one of `held`,
//! `over`, `failed`, `not_provided` and `unsure`, and beside a `failed` one, `failure` its
//! [`FailureKind`]. A crash or a wrong result is a failure of that kind, and a probe the measure
//! could not count is `unsure`, so agents of a release before read the answers of this one.

use crate::complexity::{Class, UNSURE};
use crate::wire::FailureKind;
use serde::{Deserialize, Serialize};

/// The state of a probe whose libc lacks its function, in words.
pub const NOT_PROVIDED: &str = "not provided";

/// The state of a probe the measure could not count faithfully, in words.
pub const UNMEASURABLE: &str = "not measurable";

/// What became of a probe at one toolchain version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProbeState {
    /// Its class is within the contract.
    Held,
    /// Its class is at least a polynomial step above the contract.
    Over,
    /// It failed: crashed (for a guarded probe, a read past its bound), gave a wrong result, ran
    /// past its time, did not build or could not be set up.
    Failed(FailureKind),
    /// The libc lacks its function.
    NotProvided,
    /// Measured, but no class could be named (or none was worked out yet).
    Unsure,
    /// The measure could not count it faithfully; on the wire, `unsure`.
    Unmeasurable,
}

impl ProbeState {
    /// The states a toolchain version's counts always show, whether or not any probe is in them.
    pub const COUNTED: [ProbeState; 5] = [
        ProbeState::Held,
        ProbeState::Over,
        ProbeState::Failed(FailureKind::Crashed),
        ProbeState::Failed(FailureKind::WrongResult),
        ProbeState::NotProvided,
    ];

    /// The state in words, the same in a table's cell, a page's cell, count and legend, and a
    /// report: `held`, `over contract`, `crashed`, `wrong result`, `timed out`, `not provided`,
    /// `unsure`, …
    pub fn word(self) -> &'static str {
        match self {
            ProbeState::Held => "held",
            ProbeState::Over => "over contract",
            ProbeState::Failed(kind) => kind.label(),
            ProbeState::NotProvided => NOT_PROVIDED,
            ProbeState::Unsure => UNSURE,
            ProbeState::Unmeasurable => UNMEASURABLE,
        }
    }

    /// The state in a count, where every failure but a crash or a wrong result counts as one:
    /// `failed`.
    pub fn count_word(self) -> &'static str {
        match self {
            ProbeState::Failed(kind) if !Self::breaks_the_function(kind) => "failed",
            state => state.word(),
        }
    }

    /// A shape that tells the states apart without colour.
    pub fn symbol(self) -> &'static str {
        match self {
            ProbeState::Held => "✓",
            ProbeState::Over => "▲",
            ProbeState::Failed(FailureKind::Crashed) => "✗",
            ProbeState::Failed(FailureKind::WrongResult) => "≠",
            ProbeState::Failed(_) => "⊘",
            ProbeState::NotProvided => "○",
            ProbeState::Unsure => "?",
            ProbeState::Unmeasurable => "~",
        }
    }

    /// How it failed, when it did.
    pub fn failure(self) -> Option<FailureKind> {
        match self {
            ProbeState::Failed(kind) => Some(kind),
            _ => None,
        }
    }

    /// Whether it breaks the contract or failed in any way: over it, crashed, wrong, timed out,
    /// not built, not set up.
    pub fn is_bad(self) -> bool {
        matches!(self, ProbeState::Over | ProbeState::Failed(_))
    }

    /// Whether it breaks the contract or the function: over, crashed or wrong. A probe that ran
    /// past its time, did not build or could not be set up says nothing of the function.
    pub fn is_break(self) -> bool {
        match self {
            ProbeState::Over => true,
            ProbeState::Failed(kind) => Self::breaks_the_function(kind),
            _ => false,
        }
    }

    /// Whether it is a verdict either way: anything but unsure or not measurable.
    pub fn is_sure(self) -> bool {
        !matches!(self, ProbeState::Unsure | ProbeState::Unmeasurable)
    }

    fn breaks_the_function(kind: FailureKind) -> bool {
        matches!(kind, FailureKind::Crashed | FailureKind::WrongResult)
    }
}

/// What one contract probe measured at one toolchain version, as the agent judges it on the spot
/// and as `GET /api/v1/toolchains/{lineage}/{version}/contracts` answers it. Its JSON is the one
/// every release writes: the state as a word, and beside `failed` the kind of failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "ProbeVerdictJson", try_from = "ProbeVerdictJson")]
pub struct ProbeVerdict {
    /// `contract.FUNCTION.AXIS`.
    pub workload: String,
    pub function: String,
    /// The class its contract allows.
    pub expected: Class,
    /// The class measured (none when unsure or failed).
    pub class: Option<Class>,
    pub state: ProbeState,
}

// The JSON of a probe's verdict. The OpenAPI document names and describes it, and its state, as
// the served API always has.

/// What one contract probe measured at one toolchain version, as the agent judges it on the spot
/// and as `GET /api/v1/toolchains/{lineage}/{version}/contracts` answers it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ProbeVerdict))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ProbeVerdictJson {
    /// `contract.FUNCTION.AXIS`.
    workload: String,
    function: String,
    /// The class its contract allows, and the class measured (none when unsure or failed).
    expected: Class,
    #[serde(default)]
    class: Option<Class>,
    state: StateWord,
    /// How it failed, when `state` is `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failure: Option<FailureKind>,
}

/// What became of a probe.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ProbeState))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum StateWord {
    Held,
    Over,
    Failed,
    NotProvided,
    Unsure,
}

impl From<ProbeVerdict> for ProbeVerdictJson {
    fn from(v: ProbeVerdict) -> ProbeVerdictJson {
        let state = match v.state {
            ProbeState::Held => StateWord::Held,
            ProbeState::Over => StateWord::Over,
            ProbeState::Failed(_) => StateWord::Failed,
            ProbeState::NotProvided => StateWord::NotProvided,
            ProbeState::Unsure | ProbeState::Unmeasurable => StateWord::Unsure,
        };
        ProbeVerdictJson {
            workload: v.workload,
            function: v.function,
            expected: v.expected,
            class: v.class,
            state,
            failure: v.state.failure(),
        }
    }
}

impl TryFrom<ProbeVerdictJson> for ProbeVerdict {
    type Error = String;

    /// The verdict the JSON says; a `failed` one must say how. A `failure` beside another state
    /// is of no account, as it was to every release before.
    fn try_from(j: ProbeVerdictJson) -> Result<ProbeVerdict, String> {
        let state = match (j.state, j.failure) {
            (StateWord::Held, _) => ProbeState::Held,
            (StateWord::Over, _) => ProbeState::Over,
            (StateWord::Failed, Some(kind)) => ProbeState::Failed(kind),
            (StateWord::Failed, None) => {
                return Err(format!("probe {:?} is failed, and its failure is not named", j.workload))
            }
            (StateWord::NotProvided, _) => ProbeState::NotProvided,
            (StateWord::Unsure, _) => ProbeState::Unsure,
        };
        Ok(ProbeVerdict { workload: j.workload, function: j.function, expected: j.expected, class: j.class, state })
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for ProbeVerdict {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        <ProbeVerdictJson as utoipa::PartialSchema>::schema()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for ProbeVerdict {
    fn name() -> std::borrow::Cow<'static, str> {
        <ProbeVerdictJson as utoipa::ToSchema>::name()
    }

    fn schemas(schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
        <ProbeVerdictJson as utoipa::ToSchema>::schemas(schemas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(state: ProbeState, class: Option<Class>) -> ProbeVerdict {
        ProbeVerdict {
            workload: "contract.strchr.remaining".into(),
            function: "strchr".into(),
            expected: Class::Constant,
            class,
            state,
        }
    }

    const HEAD: &str = r#"{"workload":"contract.strchr.remaining","function":"strchr","expected":"1""#;

    /// Each state as agents of the release before write and read it.
    fn old_json(class: &str, rest: &str) -> String {
        format!(r#"{HEAD},"class":{class},{rest}}}"#)
    }

    #[test]
    fn each_state_is_written_as_the_release_before_wrote_it() {
        let cases = [
            (verdict(ProbeState::Held, Some(Class::Constant)), old_json(r#""1""#, r#""state":"held""#)),
            (verdict(ProbeState::Over, Some(Class::Linear)), old_json(r#""n""#, r#""state":"over""#)),
            (
                verdict(ProbeState::Failed(FailureKind::Crashed), None),
                old_json("null", r#""state":"failed","failure":"crashed""#),
            ),
            (
                verdict(ProbeState::Failed(FailureKind::WrongResult), Some(Class::Constant)),
                old_json(r#""1""#, r#""state":"failed","failure":"wrong_result""#),
            ),
            (
                verdict(ProbeState::Failed(FailureKind::TimedOut), None),
                old_json("null", r#""state":"failed","failure":"timed_out""#),
            ),
            (
                verdict(ProbeState::Failed(FailureKind::BuildFailed), None),
                old_json("null", r#""state":"failed","failure":"build_failed""#),
            ),
            (
                verdict(ProbeState::Failed(FailureKind::SetupFailed), None),
                old_json("null", r#""state":"failed","failure":"setup_failed""#),
            ),
            (verdict(ProbeState::NotProvided, None), old_json("null", r#""state":"not_provided""#)),
            (verdict(ProbeState::Unsure, None), old_json("null", r#""state":"unsure""#)),
        ];
        for (v, json) in &cases {
            assert_eq!(&serde_json::to_string(v).unwrap(), json);
            let back: ProbeVerdict = serde_json::from_str(json).unwrap();
            assert_eq!(&back, v, "{json}");
        }
        // A probe the measure could not count is unsure to an agent: no release before knows more.
        let unmeasurable = verdict(ProbeState::Unmeasurable, None);
        assert_eq!(serde_json::to_string(&unmeasurable).unwrap(), old_json("null", r#""state":"unsure""#));
    }

    #[test]
    fn json_of_the_release_before_is_read() {
        let read = |json: &str| serde_json::from_str::<ProbeVerdict>(json).map(|v| (v.state, v.class));
        // No class at all, as a writer that left `class` out wrote it.
        assert_eq!(read(&format!(r#"{HEAD},"state":"held"}}"#)).unwrap(), (ProbeState::Held, None));
        assert_eq!(
            read(&format!(r#"{HEAD},"class":"n","state":"failed","failure":"crashed"}}"#)).unwrap(),
            (ProbeState::Failed(FailureKind::Crashed), Some(Class::Linear))
        );
        // A failure beside another state was never written, and counts for nothing.
        assert_eq!(
            read(&format!(r#"{HEAD},"class":null,"state":"unsure","failure":"timed_out"}}"#)).unwrap(),
            (ProbeState::Unsure, None)
        );
        // Every release wrote a failed probe's failure; one without it says nothing to judge by.
        let unnamed = read(&format!(r#"{HEAD},"class":null,"state":"failed"}}"#)).unwrap_err().to_string();
        assert!(unnamed.contains("its failure is not named"), "{unnamed}");
        assert!(read(&format!(r#"{HEAD},"class":null,"state":"crashed"}}"#)).is_err(), "no such state");
        let answer = format!(
            r#"{{"lineage":"zig-cc-musl","version":"0.16.0","libc":"musl","probes":[{}]}}"#,
            old_json("null", r#""state":"failed","failure":"wrong_result""#)
        );
        let read: crate::exposure::ContractVerdicts = serde_json::from_str(&answer).unwrap();
        assert_eq!(read.probes[0].state, ProbeState::Failed(FailureKind::WrongResult));
    }

    #[test]
    fn each_state_has_one_word_and_a_shape_of_its_own() {
        let all = [
            ProbeState::Held,
            ProbeState::Over,
            ProbeState::Failed(FailureKind::Crashed),
            ProbeState::Failed(FailureKind::WrongResult),
            ProbeState::Failed(FailureKind::TimedOut),
            ProbeState::NotProvided,
            ProbeState::Unsure,
            ProbeState::Unmeasurable,
        ];
        let words: Vec<&str> = all.iter().map(|s| s.word()).collect();
        assert_eq!(
            words,
            [
                "held",
                "over contract",
                "crashed",
                "wrong result",
                "timed out",
                "not provided",
                "unsure",
                "not measurable"
            ]
        );
        let mut symbols: Vec<&str> = all.iter().map(|s| s.symbol()).collect();
        symbols.sort();
        symbols.dedup();
        assert_eq!(symbols.len(), all.len());
        assert_eq!(ProbeState::Failed(FailureKind::BuildFailed).count_word(), "failed");
        assert_eq!(ProbeState::Failed(FailureKind::Crashed).count_word(), "crashed");
        let breaks: Vec<bool> = all.iter().map(|s| s.is_break()).collect();
        assert_eq!(breaks, [false, true, true, true, false, false, false, false]);
        let bad: Vec<bool> = all.iter().map(|s| s.is_bad()).collect();
        assert_eq!(bad, [false, true, true, true, true, false, false, false]);
        assert!(!ProbeState::Unmeasurable.is_sure() && ProbeState::NotProvided.is_sure());
    }
}
