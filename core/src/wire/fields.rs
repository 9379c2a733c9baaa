//! The rules every field of a submission obeys (names, free text) and the error that names a
//! field breaking one, parse errors included.

use super::{MAX_NAME_CHARS, MAX_TEXT_CHARS};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A field that broke a rule, and the rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// Path into the submission, e.g. `workloads[2].measurements[0].samples_ns[1]`.
    pub field: String,
    pub reason: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

impl std::error::Error for FieldError {}

/// Parses a JSON body into `T`; the error names the field that did not parse.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, FieldError> {
    let de = &mut serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let reason = clean_serde_message(e.inner());
        FieldError { field: field_path(e.path(), &reason), reason }
    })
}

pub(crate) fn err(field: impl Into<String>, reason: impl Into<String>) -> FieldError {
    FieldError { field: field.into(), reason: reason.into() }
}

/// A required, short, single-line name.
pub(crate) fn check_name(field: &str, value: &str) -> Result<(), FieldError> {
    if value.trim().is_empty() {
        return Err(err(field, "must not be empty"));
    }
    check_len_and_chars(field, value, MAX_NAME_CHARS)
}

/// A build hash: `sha256:` and 64 lowercase hex digits, as the agent writes it, so that two
/// spellings of one digest never read as two builds.
pub(crate) fn check_build_hash(field: &str, value: &str) -> Result<(), FieldError> {
    let digits = value.strip_prefix("sha256:").unwrap_or("");
    if digits.len() != 64 || !digits.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(err(field, "must be \"sha256:\" and 64 lowercase hex digits"));
    }
    Ok(())
}

/// An optional free-text field.
pub(crate) fn check_text(field: &str, value: &str) -> Result<(), FieldError> {
    check_len_and_chars(field, value, MAX_TEXT_CHARS)
}

fn check_len_and_chars(field: &str, value: &str, max: usize) -> Result<(), FieldError> {
    let chars = value.chars().count();
    if chars > max {
        return Err(err(field, format!("is {chars} characters long; the limit is {max}")));
    }
    if value.chars().any(char::is_control) {
        return Err(err(field, "must not contain control characters"));
    }
    Ok(())
}

/// The path of a parse error: the missing field itself rather than the object lacking it, and `.`
/// for the body as a whole (serde_path_to_error's name for the root).
fn field_path(path: &serde_path_to_error::Path, reason: &str) -> String {
    use serde_path_to_error::Segment;
    let mut field = String::new();
    for segment in path.iter() {
        field = match segment {
            Segment::Seq { index } => format!("{field}[{index}]"),
            Segment::Map { key } => key_path(&field, key),
            Segment::Enum { variant } => key_path(&field, variant),
            Segment::Unknown => key_path(&field, "?"),
        };
    }
    if let Some(name) = reason.strip_prefix("missing field `").and_then(|r| r.strip_suffix('`')) {
        field = key_path(&field, name);
    }
    if field.is_empty() {
        ".".to_string()
    } else {
        field
    }
}

/// `parent.key`, or `parent["key"]` (a JSON string) when the key is not a plain word: a key of
/// the sender's own such as `k.rnel` or `a[0]` must not read as two fields or an index.
pub(super) fn key_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    match (plain, parent.is_empty()) {
        (true, true) => key.to_string(),
        (true, false) => format!("{parent}.{key}"),
        (false, _) => format!("{parent}[{}]", serde_json::Value::from(key)),
    }
}

/// serde_json appends " at line L column C"; the field path already says where.
fn clean_serde_message(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    match msg.rfind(" at line ") {
        Some(i) if e.line() > 0 => msg[..i].to_string(),
        _ => msg,
    }
}
