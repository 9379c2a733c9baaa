//! The webhooks: the events a summary pass or a recorded bisection announces, built from what the
//! rules decided (`events`, `payload`, `bisected`); their bodies, JSON or Slack, behind one render
//! (`body`); their signatures (`signing`); and the sender that delivers them from the outbox the
//! store keeps (`sender`).

pub mod bisected;
pub mod body;
pub mod events;
pub mod payload;
pub mod sender;
pub mod signing;

pub use body::{deliveries, Body};
