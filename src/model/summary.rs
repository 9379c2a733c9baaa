//! A run's fits and a version's summary as `analysis` works them out and the store keeps them.

use slopewatch_core::complexity::Complexity;
use slopewatch_core::fit::Fit;

/// A workload's (size, median, number of samples) in one run: all its fit needs. The median is
/// of the run's metric: nanoseconds of wall or CPU time, or instructions counted.
pub type Medians = Vec<(u64, f64, usize)>;

/// The fit of one workload in a run, with the per-size medians it was fitted on, by size.
#[derive(Debug, Clone)]
pub struct WorkloadFit {
    pub workload: String,
    pub fit: Fit,
    pub medians: Medians,
}

/// A workload's summary at one version: its slopes across the version's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSummary {
    /// Median of the runs' slopes.
    pub slope: f64,
    pub slope_min: f64,
    pub slope_max: f64,
    /// Medians of the runs' interval bounds: one noisy run does not widen the version's interval.
    pub ci_low: f64,
    pub ci_high: f64,
    pub r2: f64,
    pub runs: usize,
    pub hosts: usize,
    /// (size, median over runs of the run's median ns, runs at that size), by size.
    pub sizes: Vec<(u64, f64, usize)>,
    /// The class of growth of `sizes`' medians (`analysis::classify_summary`).
    pub complexity: Option<Complexity>,
    /// The workload's source hash in the version's latest run, and how many distinct sources the
    /// summarised runs were built from.
    pub source_hash: Option<String>,
    pub source_count: usize,
    /// The one build every summarised run ran (`WorkloadRun::build_hash`); `None` when they ran
    /// several, or when one of them did not say.
    pub build_hash: Option<String>,
    /// The workload's time over the control's measured beside it, by size: (size, median over the
    /// runs that had the control, those runs), with the control lineage; `None` where no run had
    /// one. What a cost on times is judged by.
    pub beside: Option<Beside>,
}

/// A summary's time over its control's, by size, and the control lineage.
#[derive(Debug, Clone, PartialEq)]
pub struct Beside {
    pub lineage: String,
    pub sizes: Vec<(u64, f64, usize)>,
}

/// A stored summary's class with the medians it was worked out on.
pub type Classified = (Vec<(u64, f64)>, Option<Complexity>);
