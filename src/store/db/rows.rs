//! Rows that the backends read for the summary pass, one named type per shape, below both the
//! backends and the resource files that use them.

use super::decode_json;
use crate::model::{MetricColumn, Slope};
use slopewatch_core::wire::{Facts, Metric};
use time::OffsetDateTime;
use uuid::Uuid;

/// A pending run taken in by a summary pass, one row per workload it measured.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedFit {
    pub run_id: Uuid,
    pub lineage: String,
    pub version: String,
    pub host_id: i64,
    pub started_at: OffsetDateTime,
    pub received_at: OffsetDateTime,
    pub workload_id: i64,
    pub workload: String,
}

/// A run's fit of a workload as a summary pass reads it, its medians still JSON.
#[derive(sqlx::FromRow)]
pub(in crate::store) struct WindowFitRow {
    run_id: Uuid,
    workload_id: i64,
    medians: String,
    source_hash: String,
    facts: String,
    #[sqlx(flatten)]
    slope: Slope,
    metric: MetricColumn,
}

/// A run's fit of a workload that may enter its version's window.
#[derive(Debug, Clone)]
pub struct WindowFit {
    pub run_id: Uuid,
    pub workload_id: i64,
    /// (size, median ns), by size.
    pub medians: Vec<(u64, f64)>,
    /// The workload's source as the run built it.
    pub source_hash: String,
    /// What the agent said of the run: the code it ran, the control measured beside it.
    pub facts: Facts,
    pub slope: Slope,
    /// What the workload's series measures: how its medians are classified.
    pub metric: Metric,
}

impl WindowFitRow {
    pub(in crate::store) fn decode(self) -> Result<WindowFit, sqlx::Error> {
        Ok(WindowFit {
            run_id: self.run_id,
            workload_id: self.workload_id,
            medians: decode_json(&self.medians)?,
            source_hash: self.source_hash,
            facts: decode_json(&self.facts)?,
            slope: self.slope,
            metric: Metric::try_from(self.metric).map_err(|e| sqlx::Error::Decode(e.into()))?,
        })
    }
}
