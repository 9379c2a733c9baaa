//! What the agent shows: the progress display while it measures, the table of slopes and the
//! table of contracts at the end, and the Markdown report for a pull request.

pub mod contracts;
pub mod control;
pub mod costs;
pub mod markdown;
pub mod progress;
pub mod table;
