//! `flush`: sends the runs and bisections waiting in the spool.

use crate::cli::{ServerArgs, SpoolArgs};
use crate::exit::ExitStatus;
use crate::server::deliver;
use anyhow::Result;

/// `flush`: everything in the spool, oldest first, until the server is out of reach.
pub fn flush(server: &ServerArgs, spool: &SpoolArgs) -> Result<ExitStatus> {
    deliver::flush(&server.client()?, &spool.open()?)
}
