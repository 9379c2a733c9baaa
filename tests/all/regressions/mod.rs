//! Regressions: their pages and editing, their independence from arrival order, attribution by a
//! control, bisections recorded on them (who may, how often, and once per content), and findings,
//! which are not regressions.

mod arrival_order;
mod attribution;
mod bisection_tokens;
mod bisections;
mod findings;
mod pages_and_editing;
mod profiles;
mod root_causes;
mod zig_causes;
