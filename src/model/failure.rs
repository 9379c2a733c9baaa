//! A workload's failure as the store keeps it: the wire's failure, its kind-specific fields in one
//! JSON column beside the kind, size and detail.

use serde::{Deserialize, Serialize};
use slopewatch_core::wire::{Failure, FailureKind};

/// What a failure's kind adds to its kind, size and detail.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureFacts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub got: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

impl FailureFacts {
    pub fn of(f: &Failure) -> FailureFacts {
        FailureFacts {
            exit_status: f.exit_status,
            signal: f.signal,
            limit_ms: f.limit_ms,
            got: f.got.clone(),
            expected: f.expected.clone(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("facts serialize")
    }
}

/// The failure stored as `kind`, `size`, `detail` and `facts`; `None` for a kind this server does
/// not know (a row written by a newer one).
pub fn stored_failure(kind: &str, size: Option<i64>, detail: &str, facts: &str) -> Option<Failure> {
    let kind = FailureKind::parse(kind)?;
    let facts: FailureFacts = serde_json::from_str(facts).unwrap_or_default();
    Some(Failure {
        kind,
        size: size.map(|s| s as u64),
        detail: detail.to_string(),
        exit_status: facts.exit_status,
        signal: facts.signal,
        limit_ms: facts.limit_ms,
        got: facts.got,
        expected: facts.expected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_reads_back_as_it_was_stored() {
        let f = Failure {
            kind: FailureKind::WrongResult,
            size: Some(65536),
            detail: "wrong result: -1 hits, expected 9362".into(),
            exit_status: None,
            signal: None,
            limit_ms: None,
            got: Some("-1".into()),
            expected: Some("9362".into()),
        };
        let facts = FailureFacts::of(&f).to_json();
        assert_eq!(facts, r#"{"got":"-1","expected":"9362"}"#);
        assert_eq!(stored_failure("wrong_result", Some(65536), &f.detail, &facts), Some(f));
        assert_eq!(stored_failure("melted", None, "", "{}"), None);
    }
}
