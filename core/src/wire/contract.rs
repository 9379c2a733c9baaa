//! What a workload promises to cost: a contract probe's expected class and what breaking it means,
//! carried with the run so that the server judges the workload against it, not the slope limit.

use crate::complexity::Class;
use crate::wire::{check_name, check_text, err, FieldError};
use serde::{Deserialize, Serialize};

/// The prefix of every contract probe's name: `contract.FUNCTION.AXIS`. No other workload may
/// take it.
pub const CONTRACT_PREFIX: &str = "contract.";

/// Longest sentence a contract carries, in characters.
pub const MAX_SENTENCE_CHARS: usize = 512;

/// The class a workload may cost on its axis, and what a break means. A contract probe of the
/// agent's catalogue carries every field; a team's own workload declared with `expect` may carry
/// the class alone.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    /// The class the workload may cost: `1`, `log n`, `n`, `n log n`, `n^2` or `n^3`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "1"))]
    pub expected: Class,
    /// The function the probe calls, e.g. `strchr`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub function: String,
    /// What grows, e.g. `remaining` (the rest of the input, while the answer stays near).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub axis: String,
    /// What a break means, after the function's name, e.g. `reads the whole remaining string`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub broken: String,
    /// What a break costs a caller, e.g. `A loop that calls it once per token over n bytes is O(n²).`
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub consequence: String,
}

impl Contract {
    /// A contract of the class alone, as a team's `expect = "1"` declares it.
    pub fn expecting(expected: Class) -> Contract {
        Contract {
            expected,
            function: String::new(),
            axis: String::new(),
            broken: String::new(),
            consequence: String::new(),
        }
    }

    /// Checks the fields, named under `at` (e.g. `workloads[3].contract`).
    pub(crate) fn validate(&self, at: &str) -> Result<(), FieldError> {
        if !self.function.is_empty() {
            check_name(&format!("{at}.function"), &self.function)?;
        }
        if !self.axis.is_empty() {
            check_name(&format!("{at}.axis"), &self.axis)?;
        }
        for (field, text) in [("broken", &self.broken), ("consequence", &self.consequence)] {
            let chars = text.chars().count();
            if chars > MAX_SENTENCE_CHARS {
                return Err(err(
                    format!("{at}.{field}"),
                    format!("is {chars} characters long; the limit is {MAX_SENTENCE_CHARS}"),
                ));
            }
            check_text(&format!("{at}.{field}"), text)?;
        }
        Ok(())
    }
}
