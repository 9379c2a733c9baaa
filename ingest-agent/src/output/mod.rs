//! What the agent shows: the progress display while it measures, the table of slopes at the end,
//! and the Markdown report for a pull request.

pub mod format;
pub mod markdown;
pub mod progress;
pub mod table;
