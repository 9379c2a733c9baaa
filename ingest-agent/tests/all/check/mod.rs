//! `check`, the gate a build runs: its limits, the control it compares with, its report and its
//! JUnit XML.

mod control;
mod gate;
mod junit;
mod report;
