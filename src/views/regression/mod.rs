//! What a regression's page shows beyond its rows: editors' Markdown notes rendered safe, the
//! postmortem document, and what editors may write (which an import of their edits obeys too).

pub mod edits;
pub mod markdown;
pub mod postmortem;
