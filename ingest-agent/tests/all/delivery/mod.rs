//! Runs reaching a server without loss: retries and the spool, against a scripted listener and the
//! real server, and a spool that cannot keep them.

mod real_server;
mod scripted_listener;
mod spool_faults;
