//! What the agent shows. Nothing here decides (`measure::judged` does), and numbers are written by
//! `slopewatch_core::format`, as on the server.

pub mod contracts;
pub mod control;
pub mod costs;
pub mod junit;
pub mod markdown;
pub mod table;
