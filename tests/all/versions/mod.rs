//! Toolchain versions: one version across every workload, and what a lineage's versions count.

mod across_workloads;
mod axis;
