//! The control measured beside a workload: the same workload built by a control lineage (a second
//! implementation, e.g. musl-gcc), measured by the same agent invocation on the same host, its
//! median at each size. A time moves with the host; the workload's time over the control's does
//! much less, so the server may judge a cost on wall or CPU time by that quotient across versions
//! (docs/alerts.md, "Cost on times, against a control").

use crate::wire::{check_name, check_text, err, FieldError, MAX_SAMPLE_NS, MAX_SIZE, MAX_SIZES};
use serde::{Deserialize, Serialize};

/// The control's medians beside a workload.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Beside {
    /// The control lineage and its version, e.g. `musl-gcc` and `1.2.3`.
    pub lineage: String,
    pub version: String,
    /// By size, ascending: the control's median at each size it measured, in the run's metric.
    pub medians: Vec<BesideMedian>,
}

/// The control's median at one size.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BesideMedian {
    pub size: u64,
    pub median: f64,
}

impl Beside {
    /// Checks the fields, named under `at` (e.g. `workloads[3].control`).
    pub(crate) fn validate(&self, at: &str) -> Result<(), FieldError> {
        check_name(&format!("{at}.lineage"), &self.lineage)?;
        check_name(&format!("{at}.version"), &self.version)?;
        check_text(&format!("{at}.version"), &self.version)?;
        if self.medians.is_empty() || self.medians.len() > MAX_SIZES {
            return Err(err(format!("{at}.medians"), format!("must hold 1 to {MAX_SIZES} sizes")));
        }
        let mut previous = 0;
        for (i, m) in self.medians.iter().enumerate() {
            let field = format!("{at}.medians[{i}]");
            if m.size == 0 || m.size > MAX_SIZE || m.size <= previous {
                return Err(err(
                    format!("{field}.size"),
                    format!("sizes run from 1 to {MAX_SIZE}, ascending, each once"),
                ));
            }
            if !(m.median.is_finite() && m.median > 0.0 && m.median <= MAX_SAMPLE_NS) {
                return Err(err(format!("{field}.median"), "must be a positive number no larger than a week in ns"));
            }
            previous = m.size;
        }
        Ok(())
    }

    /// The median at `size`, where the control measured it.
    pub fn at(&self, size: u64) -> Option<f64> {
        self.medians.iter().find(|m| m.size == size).map(|m| m.median)
    }
}
