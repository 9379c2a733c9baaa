//! The slopewatch server.
