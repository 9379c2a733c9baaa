//! The shared crate's integration tests, in one binary: a module per subject.

mod complexity_corpus;
mod wire_properties;
