//! Complexity classes as stored: a JSON column on each version summary. A run's fits are not
//! classified in the store: they are classified where they are read, so storing a run does not
//! pay for it.
//!
//! A NULL column has not been classified yet; the text `null` could not be (fewer than three
//! sizes or a time that is not positive, which an accepted run never has).

use super::decode_json;
use slopewatch_core::complexity::Complexity;

/// The column's text for a complexity, `null` for none.
pub(in crate::store) fn encode_complexity(c: Option<&Complexity>) -> String {
    serde_json::to_string(&c).expect("complexity serializes")
}

/// A complexity column as read: `None` when unclassified or unclassifiable.
pub(in crate::store) fn decode_complexity(text: Option<&str>) -> Result<Option<Complexity>, sqlx::Error> {
    Ok(text.map(decode_json::<Option<Complexity>>).transpose()?.flatten())
}
