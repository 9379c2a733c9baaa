//! Where a regression's cost went, as its page, its JSON, its webhooks and its postmortem give it:
//! per workload with a profile at the first bad version, the functions that took the added
//! instructions against the last good version's profile (or the bad profile alone, said so), and
//! whether the function most of it went to broke its contract there.

use serde::Serialize;
use slopewatch_core::profile::CostShift;
use utoipa::ToSchema;

/// One workload's "where the cost went".
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WhereCostWent {
    pub workload: String,
    /// The first bad version, and the last good one where it has a profile at the same size: none
    /// means the bad version's profile is shown alone.
    pub bad_version: String,
    pub good_version: Option<String>,
    pub shift: CostShift,
    /// Where the catalogue's probe of the function most of the cost went to is over its contract
    /// at the bad version: "strspn broke its O(1) contract at 0.16.0", with the probe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contract: Option<BrokenContract>,
}

/// A catalogue probe over its contract at a version.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BrokenContract {
    /// The function, as the catalogue names it, and the class its contract allows (`O(1)`).
    #[serde(skip)]
    pub function: String,
    #[serde(skip)]
    pub expected: String,
    pub probe: String,
    pub sentence: String,
    pub series_url: String,
}

impl WhereCostWent {
    /// The whole of it in one line: "99.6 % of the added instructions are in strspn (called from
    /// jsonTranslateTextToBlob, sqlite3.c:210); strspn broke its O(1) contract at 0.16.0".
    pub fn sentence(&self) -> String {
        match &self.contract {
            Some(c) => format!("{}; {}", self.shift.sentence, c.sentence),
            None => self.shift.sentence.clone(),
        }
    }
}
