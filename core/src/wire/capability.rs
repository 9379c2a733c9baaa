//! What a server accepts in a run beyond the first release's wire, named once: the server
//! advertises [`Capability::ALL`], and an agent shapes each run for what its server accepts
//! ([`super::shape`]). A wire field added later is one more capability here.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// One part of the wire a server may accept or not: each came with a release, and a server from
/// before it refuses a run that carries it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// Failed workloads (`failure`).
    Failures,
    /// Contract probes (`contract`, `not_provided`).
    Contracts,
    /// The size a team runs a workload at (`size_of_interest`).
    SizesOfInterest,
    /// A measure other than wall time (`measure`, `counter`).
    Measures,
    /// A lineage on the libc's versions (`version_from`).
    VersionAxes,
    /// A content hash of the code a workload ran (`build_hash`).
    BuildHashes,
    /// The control measured beside a workload (`control`).
    Controls,
    /// Where a workload's instructions go at one size (`profile`).
    Profiles,
    /// Series kept apart per target architecture. No field of its own: a server without it would
    /// put a run built for aarch64 on its lineage's x86-64 line.
    Architectures,
}

impl Capability {
    /// Everything this release accepts: what its server advertises.
    pub const ALL: [Capability; 9] = [
        Capability::Failures,
        Capability::Contracts,
        Capability::SizesOfInterest,
        Capability::Measures,
        Capability::VersionAxes,
        Capability::BuildHashes,
        Capability::Controls,
        Capability::Profiles,
        Capability::Architectures,
    ];

    /// What a server that advertises nothing accepts: the release before capabilities took these
    /// five, and servers older than it refuse by name what they do not know. Fixed for good, while
    /// [`Capability::ALL`] grows.
    pub const UNADVERTISED: [Capability; 5] = [
        Capability::Failures,
        Capability::Contracts,
        Capability::SizesOfInterest,
        Capability::Measures,
        Capability::VersionAxes,
    ];

    /// The wire name, as advertised.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Failures => "failures",
            Capability::Contracts => "contracts",
            Capability::SizesOfInterest => "sizes_of_interest",
            Capability::Measures => "measures",
            Capability::VersionAxes => "version_axes",
            Capability::BuildHashes => "build_hashes",
            Capability::Controls => "controls",
            Capability::Profiles => "profiles",
            Capability::Architectures => "architectures",
        }
    }

    pub fn parse(s: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The run's fields that carry it, by their JSON names.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Capability::Failures => &["failure"],
            Capability::Contracts => &["contract", "not_provided"],
            Capability::SizesOfInterest => &["size_of_interest"],
            Capability::Measures => &["measure", "counter"],
            Capability::VersionAxes => &["version_from"],
            Capability::BuildHashes => &["build_hash"],
            Capability::Controls => &["control"],
            Capability::Profiles => &["profile"],
            Capability::Architectures => &[],
        }
    }

    /// The capability a field of the run belongs to; `None` for the first release's fields.
    pub fn of_field(field: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|c| c.fields().contains(&field))
    }

    /// The capability a server lacks when it refuses a run naming one of its fields as unknown
    /// (serde's ``unknown field `X` ``, which every release's strict parser answers with a 422).
    pub fn of_refusal(message: &str) -> Option<Capability> {
        let (_, rest) = message.split_once("unknown field `")?;
        let (field, _) = rest.split_once('`')?;
        Capability::of_field(field)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The capabilities one server accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepts(BTreeSet<Capability>);

impl Accepts {
    /// What a server of this release accepts.
    pub fn everything() -> Accepts {
        Capability::ALL.into_iter().collect()
    }

    /// What a server that answers 404 for its capabilities accepts.
    pub fn unadvertised() -> Accepts {
        Capability::UNADVERTISED.into_iter().collect()
    }

    pub fn contains(&self, c: Capability) -> bool {
        self.0.contains(&c)
    }

    /// Takes `c` out; false when it was not there.
    pub fn remove(&mut self, c: Capability) -> bool {
        self.0.remove(&c)
    }

    pub fn iter(&self) -> impl Iterator<Item = Capability> + '_ {
        self.0.iter().copied()
    }
}

impl FromIterator<Capability> for Accepts {
    fn from_iter<I: IntoIterator<Item = Capability>>(iter: I) -> Accepts {
        Accepts(iter.into_iter().collect())
    }
}

/// Reads a list of capability names, leaving out those this release does not know: a newer
/// server's are of no use to an agent that cannot send them.
pub(crate) fn known<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Capability>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    Ok(names.iter().filter_map(|n| Capability::parse(n)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_each_field_belongs_to_one_capability() {
        for c in Capability::ALL {
            assert_eq!(Capability::parse(c.as_str()), Some(c));
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
            for field in c.fields() {
                assert_eq!(Capability::of_field(field), Some(c), "{field}");
            }
        }
        assert_eq!(Capability::of_field("name"), None);
    }

    #[test]
    fn a_refusal_names_the_capability_of_its_unknown_field() {
        let cases = [
            ("workloads[1].failure: unknown field `failure`, expected one of `name`", Some(Capability::Failures)),
            ("workloads[0].not_provided: unknown field `not_provided`, expected …", Some(Capability::Contracts)),
            ("counter: unknown field `counter`, expected one of `run_id`", Some(Capability::Measures)),
            ("toolchain.version_from: unknown field `version_from`", Some(Capability::VersionAxes)),
            ("host.colour: unknown field `colour`, expected one of `name`", None),
            ("workloads[0].name: must not be empty", None),
            ("unknown field `failure", None),
        ];
        for (message, capability) in cases {
            assert_eq!(Capability::of_refusal(message), capability, "{message}");
        }
    }

    #[test]
    fn names_a_newer_server_advertises_are_left_out() {
        #[derive(Deserialize)]
        struct List {
            #[serde(deserialize_with = "known")]
            accepts: Vec<Capability>,
        }
        let list: List = serde_json::from_str(r#"{"accepts": ["failures", "flamegraphs", "measures"]}"#).unwrap();
        assert_eq!(list.accepts, [Capability::Failures, Capability::Measures]);
    }
}
