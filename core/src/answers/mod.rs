//! What the server answers, read by the agent with the same types the server writes: a stored run,
//! a recorded bisection, an error, the capabilities, and (in [`reads`]) the reads the agent uses.
//!
//! Each answer reads an older server's too: a field a server may not have sent yet has a default,
//! and fields a reader does not know are skipped, never refused.

pub mod reads;

use crate::wire::{Accepts, Capability, Metric};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The answer to a run that is stored, now or before.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunAccepted {
    /// The run's id, as submitted.
    pub run_id: Uuid,
    /// True when the run was stored by this request; false when it was already stored.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub created: bool,
    /// The metric the run's series are kept under (its measure with its counter): `wall`, `cpu`,
    /// `instructions-perf` or `instructions-valgrind`. The slopes are fitted from its values.
    // Servers from before measures answered without it: their runs were all of wall time.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub measure: Metric,
    /// The slope fitted for each workload.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub fits: Vec<WorkloadSlope>,
    /// The run's page on the dashboard, relative to the server.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub url: String,
}

/// One workload's fit in a stored run.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSlope {
    pub workload: String,
    /// k in time ∝ size^k.
    pub slope: f64,
    /// Lower bound of the slope's 95% confidence interval.
    pub ci_low: f64,
    /// Upper bound of the slope's 95% confidence interval.
    pub ci_high: f64,
    /// Coefficient of determination of the log-log fit.
    pub r2: f64,
    /// Number of sizes fitted. Complexity classes are worked out where a run is read
    /// (`GET /api/v1/runs/{id}`), not in this answer: storing a run does not wait for them.
    pub n_sizes: i32,
}

/// The answer to a bisection that is stored, now or before.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BisectionAccepted {
    /// The bisection's id, as submitted.
    pub bisection_id: Uuid,
    pub regression_id: i64,
    /// The bisection on its regression's page, relative to the server.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub url: String,
    /// What the caller should change, though the bisection was accepted: today, that an ingest
    /// token recorded it, which a later release refuses. Absent when there is nothing to say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The answer to an exposure scan that is stored, now or before.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExposureAccepted {
    /// The scan's id, as submitted.
    pub scan_id: Uuid,
    /// True when the scan was stored by this request; false when it was already stored.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub created: bool,
    /// The page of the toolchain version the scan was judged by, which lists the artifacts scanned
    /// there, relative to the server.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub url: String,
}

/// The answer to found probes that are stored: every probe of the submission is, now or before.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundProbesAccepted {
    /// How many probes the submission held.
    pub stored: u32,
    /// Of those, how many the server did not have yet. A probe it had keeps its first finding:
    /// the toolchain, version and time of the search that found it first.
    pub new: u32,
}

/// The body of every error answer.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// The HTTP status, repeated.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub status: u16,
    /// A stable code: `unauthorized`, `forbidden`, `not_found`, `conflict`, `payload_too_large`,
    /// `unsupported_media_type`, `bad_request`, `invalid_field`, `unavailable`, `storage_full`,
    /// `storage_io`, `storage_locked`, `storage_read_only`, `storage_exhausted` or `internal`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true, example = "invalid_field"))]
    pub code: String,
    /// What went wrong, for people; 5xx messages say nothing internal.
    pub message: String,
    /// For `invalid_field`: the path of the offending field, e.g. `workloads[0].measurements[1].size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// For `invalid_field`: the rule the field broke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What this server accepts in a run beyond the parts every release took, and its version.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capabilities {
    /// The parts of a run this server accepts. An agent leaves out what is not listed, or does not
    /// send a run it cannot do without; it skips names it does not know.
    #[serde(deserialize_with = "crate::wire::known")]
    pub accepts: Vec<Capability>,
    /// The server's version, e.g. `0.1.0`.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true, example = "0.1.0"))]
    pub version: String,
}

impl Capabilities {
    /// What a server of this release, at `version`, answers.
    pub fn of_this_release(version: &str) -> Capabilities {
        Capabilities { accepts: Capability::ALL.to_vec(), version: version.to_string() }
    }

    /// The capabilities listed, as a set.
    pub fn accepted(&self) -> Accepts {
        self.accepts.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_servers_run_answer_reads_with_what_it_left_out_defaulted() {
        let id = "0b8e6a52-6f7e-4b8e-9a39-0d3c7d1e9f10";
        let old: RunAccepted = serde_json::from_str(&format!(
            r#"{{"run_id":"{id}","created":true,"fits":[],"url":"/runs/{id}","later":1}}"#
        ))
        .unwrap();
        assert_eq!((old.measure, old.created, old.url.as_str()), (Metric::Wall, true, format!("/runs/{id}").as_str()));
        assert!(serde_json::from_str::<RunAccepted>(r#"{"created":true}"#).is_err(), "the run id is the answer");
    }

    #[test]
    fn an_error_body_needs_only_its_message() {
        let body: ErrorBody = serde_json::from_str(r#"{"error":{"message":"no","extra":[1]}}"#).unwrap();
        assert_eq!((body.error.message.as_str(), body.error.status, body.error.field), ("no", 0, None));
        let full = ErrorBody {
            error: ErrorDetail {
                status: 422,
                code: "invalid_field".into(),
                message: "x: y".into(),
                field: Some("x".into()),
                reason: Some("y".into()),
            },
        };
        assert_eq!(serde_json::from_value::<ErrorBody>(serde_json::to_value(&full).unwrap()).unwrap(), full);
    }

    #[test]
    fn capabilities_read_back_and_skip_names_not_known() {
        let now = Capabilities::of_this_release("0.1.0");
        let json = serde_json::to_value(&now).unwrap();
        assert_eq!(
            json["accepts"],
            serde_json::json!([
                "failures",
                "contracts",
                "sizes_of_interest",
                "measures",
                "version_axes",
                "build_hashes",
                "controls",
                "profiles",
                "architectures"
            ])
        );
        assert_eq!(serde_json::from_value::<Capabilities>(json).unwrap(), now);
        let newer: Capabilities =
            serde_json::from_str(r#"{"accepts":["flamegraphs","failures"],"version":"9.0.0","later":{}}"#).unwrap();
        assert_eq!(newer.accepted(), Accepts::from_iter([Capability::Failures]));
    }
}
