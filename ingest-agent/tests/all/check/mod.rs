//! `check`, the gate a build runs: its limits, the control it compares with, and its report.

mod control;
mod gate;
mod report;
