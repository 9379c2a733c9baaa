//! A workload's failure as the store keeps it: the wire's failure, its kind-specific fields in one
//! JSON column beside the kind, size and detail.

use slopewatch_core::wire::Failure;

/// The fields a failure's kind adds to its kind, size and detail (exit status, signal, limit, got,
/// expected), as the JSON object stored beside them.
pub fn failure_facts(f: &Failure) -> String {
    let mut value = serde_json::to_value(f).expect("failures serialize");
    if let Some(fields) = value.as_object_mut() {
        for column in ["kind", "size", "detail"] {
            fields.remove(column);
        }
    }
    value.to_string()
}

/// The failure stored as `kind`, `size`, `detail` and `facts`; `None` for one this server cannot
/// read (a kind written by a newer one).
pub fn stored_failure(kind: &str, size: Option<i64>, detail: &str, facts: &str) -> Option<Failure> {
    let mut fields: serde_json::Map<String, serde_json::Value> = serde_json::from_str(facts).unwrap_or_default();
    fields.insert("kind".into(), kind.into());
    fields.insert("detail".into(), detail.into());
    if let Some(size) = size {
        fields.insert("size".into(), size.into());
    }
    serde_json::from_value(serde_json::Value::Object(fields)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use slopewatch_core::wire::FailureKind;

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
        let facts = failure_facts(&f);
        assert_eq!(facts, r#"{"expected":"9362","got":"-1"}"#);
        assert_eq!(stored_failure("wrong_result", Some(65536), &f.detail, &facts), Some(f));
        assert_eq!(stored_failure("melted", None, "", "{}"), None);
    }
}
