//! SQLite built with the toolchain under test: its amalgamation, and the article's JSON regression.

mod amalgamation;
mod json;
