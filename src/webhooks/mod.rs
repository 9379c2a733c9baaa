//! The webhooks: what a summary pass or a recorded bisection announces, from the event to the
//! signed request the sender delivers from the outbox.

pub mod bisected;
pub mod body;
pub mod events;
pub mod payload;
pub mod sender;
pub mod signing;

pub use body::{deliveries, Body};
