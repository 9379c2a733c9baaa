//! Toolchain versions: one version across every workload, what a lineage's versions count, and
//! one toolchain measured twice reading unchanged.

mod across_workloads;
mod agreement;
mod axis;
mod builds;
mod same_toolchain;
