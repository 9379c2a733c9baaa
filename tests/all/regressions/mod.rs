//! Regressions: their pages and editing, their independence from arrival order, attribution by a
//! control, bisections recorded on them, and findings, which are not regressions.

mod arrival_order;
mod attribution;
mod bisections;
mod findings;
mod pages_and_editing;
mod profiles;
