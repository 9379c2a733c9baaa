//! What a workload's run says of itself that the server only keeps, reads back and exports: its
//! facts (the build it ran, the control measured beside it). The server files its name, unit,
//! source, measurements, metadata, failure, contract and profile apart, each where it is queried;
//! the facts go in one JSON object per fit, so a wire field that the server only keeps joins
//! [`Facts`] here and reaches the store, its reads and every export without a line of the
//! server's changing (docs/architecture.md, "A new field of a run").

use super::{Beside, WorkloadRun};
use serde::{Deserialize, Serialize};

/// A workload run's facts, as the server stores them: every field optional, and a stored object
/// with a field this release does not know (written by a newer server) still reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    /// The code it ran ([`WorkloadRun::build_hash`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_hash: Option<String>,
    /// The control measured beside it ([`WorkloadRun::control`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<Beside>,
}

impl Facts {
    /// As stored: a JSON object, `{}` without any.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("facts serialize")
    }

    /// The facts without the fields named, by their JSON names: what a server that lacks their
    /// capability takes.
    pub fn without(self, fields: &[&str]) -> Facts {
        if fields.is_empty() {
            return self;
        }
        let mut value = serde_json::to_value(&self).expect("facts serialize");
        if let Some(object) = value.as_object_mut() {
            object.retain(|name, _| !fields.contains(&name.as_str()));
        }
        serde_json::from_value(value).expect("facts without some fields still read")
    }
}

impl WorkloadRun {
    /// A workload run of `measurements` and nothing more: no build, control, profile, metadata,
    /// failure or contract. The struct's update syntax adds what a run has.
    pub fn new(
        name: String,
        size_unit: super::SizeUnit,
        source_hash: String,
        measurements: Vec<super::Measurement>,
    ) -> WorkloadRun {
        WorkloadRun {
            name,
            size_unit,
            source_hash,
            build_hash: None,
            control: None,
            profile: None,
            measurements,
            metadata: Default::default(),
            failure: None,
            contract: None,
            not_provided: false,
            size_of_interest: None,
        }
    }

    /// Its facts.
    pub fn facts(&self) -> Facts {
        Facts { build_hash: self.build_hash.clone(), control: self.control.clone() }
    }

    /// The run with `facts` for its own.
    pub fn with_facts(self, facts: Facts) -> WorkloadRun {
        let Facts { build_hash, control } = facts;
        WorkloadRun { build_hash, control, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{BesideMedian, SizeUnit};

    fn hashed() -> WorkloadRun {
        WorkloadRun {
            build_hash: Some(format!("sha256:{}", "0a".repeat(32))),
            control: Some(Beside {
                lineage: "gcc-glibc".into(),
                version: "12.2.0".into(),
                medians: vec![BesideMedian { size: 1024, median: 10.0 }],
            }),
            ..WorkloadRun::new("strchr".into(), SizeUnit::Bytes, "sha256:src".into(), Vec::new())
        }
    }

    #[test]
    fn facts_go_to_json_and_back_onto_a_run_whole() {
        let run = hashed();
        let stored = run.facts().to_json();
        let read: Facts = serde_json::from_str(&stored).unwrap();
        let bare = WorkloadRun::new("strchr".into(), SizeUnit::Bytes, "sha256:src".into(), Vec::new());
        assert_eq!(bare.with_facts(read), run);
        assert_eq!(Facts::default().to_json(), "{}");
    }

    #[test]
    fn every_fact_is_a_field_of_the_wire_under_the_same_name() {
        // A fact named differently from its wire field would be exported under a name the wire
        // refuses: each fact's key must be one of the run's own keys, with the same value.
        let run = serde_json::to_value(hashed()).unwrap();
        let facts = serde_json::to_value(hashed().facts()).unwrap();
        let facts = facts.as_object().unwrap();
        assert!(!facts.is_empty());
        for (name, value) in facts {
            assert_eq!(run.get(name), Some(value), "{name}");
        }
    }

    #[test]
    fn a_stored_fact_this_release_does_not_know_still_reads_and_one_can_be_left_out() {
        let read: Facts = serde_json::from_str(r#"{"build_hash":"sha256:x","from_a_newer_server":1}"#).unwrap();
        assert_eq!(read.build_hash.as_deref(), Some("sha256:x"));
        let without = hashed().facts().without(&["control"]);
        assert_eq!((without.build_hash.is_some(), without.control), (true, None));
    }
}
