//! Whose a workload is, told from its name alone: one the agent ships, a probe of the contract
//! catalogue (`contract.FUNCTION.AXIS`), or a team's own. A run does not say, and the agent
//! refuses a team's workload named like one it ships, so the names here are the whole rule; the
//! agent's tests hold its catalogue to them.

use crate::wire::CONTRACT_PREFIX;
use serde::{Deserialize, Serialize};

/// The workloads the agent ships, the libc string family and the SQLite paths, in its order.
pub const BUILTIN: [&str; 19] = [
    "strchr",
    "strchrnul",
    "strspn",
    "strcspn",
    "strpbrk",
    "strstr",
    "memchr",
    "strtol",
    "strtod",
    "sscanf",
    "sqlite-insert",
    "sqlite-json-each",
    "sqlite-json-each.spaced",
    "sqlite-json-each.pretty",
    "sqlite-json-each.literals",
    "sqlite-json-extract.spaced",
    "sqlite-json-arrow.pretty",
    "sqlite-insert.spaced",
    "sqlite-like.long-text",
];

/// Whose a workload is. Ordered as pages list the groups: the agent's own first.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Group {
    /// Shipped with the agent.
    Builtin,
    /// A team's own, from its config.
    Team,
    /// A probe of the contract catalogue.
    Contract,
}

impl Group {
    pub const ALL: [Group; 3] = [Group::Builtin, Group::Team, Group::Contract];

    /// The group of the workload named `name`.
    pub fn of(name: &str) -> Group {
        if name.starts_with(CONTRACT_PREFIX) {
            Group::Contract
        } else if BUILTIN.contains(&name) {
            Group::Builtin
        } else {
            Group::Team
        }
    }

    /// As the API writes it: `builtin`, `team` or `contract`.
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Builtin => "builtin",
            Group::Team => "team",
            Group::Contract => "contract",
        }
    }

    /// As a heading names it.
    pub fn title(self) -> &'static str {
        match self {
            Group::Builtin => "Built-in workloads",
            Group::Team => "Your team's workloads",
            Group::Contract => "Contract probes",
        }
    }
}

/// The libc function a workload exists to measure, where it is one function's: a probe's
/// (`contract.strspn.remaining`, a found probe's `contract.strspn.remaining~alpha=2` alike), or a
/// built-in loop's own name (`strspn`); the SQLite paths and a team's workloads are none.
pub fn function_of(name: &str) -> Option<&str> {
    if let Some(rest) = name.strip_prefix(CONTRACT_PREFIX) {
        return rest.split(['.', '~']).next().filter(|f| !f.is_empty());
    }
    let is_loop = BUILTIN.contains(&name) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    is_loop.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workload_s_group_follows_from_its_name() {
        assert_eq!(Group::of("strchr"), Group::Builtin);
        assert_eq!(Group::of("sqlite-like.long-text"), Group::Builtin);
        assert_eq!(Group::of("contract.strchr.remaining"), Group::Contract);
        assert_eq!(Group::of("next-token"), Group::Team);
        assert_eq!(Group::of("strchr2"), Group::Team);
        assert_eq!(serde_json::to_string(&Group::Builtin).unwrap(), "\"builtin\"");
        assert!(Group::Builtin < Group::Team && Group::Team < Group::Contract);
    }

    #[test]
    fn a_probe_and_a_loop_are_their_function_s_and_nothing_else_is() {
        assert_eq!(function_of("contract.strspn.remaining"), Some("strspn"));
        assert_eq!(function_of("contract.strcasestr.needle~alpha=1,at=last"), Some("strcasestr"));
        assert_eq!(function_of("strchrnul"), Some("strchrnul"));
        assert_eq!(function_of("sqlite-json-each.spaced"), None);
        assert_eq!(function_of("strchr2"), None, "a team's workload named like one is its own");
        assert_eq!(function_of("contract."), None);
    }
}
