//! How the agent exits: the documented statuses (0, 1, 3 and 75; 2 on a usage error, which clap
//! reports itself, and on input `exposure` cannot read), and how the statuses of several steps
//! combine.

/// The agent's exit status. A usage error exits with 2, which clap reports and exits with itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Everything asked for was done.
    Ok = 0,
    /// What was to be delivered could not be yet and waits in the spool (`EX_TEMPFAIL`).
    Spooled = 75,
    /// Something failed: a workload, a toolchain, a delivery the server refused, or (`check`) a
    /// limit.
    Failed = 1,
    /// `check`: nothing failed and nothing was over a limit, but a workload's verdict stayed
    /// unsure after measuring it twice. A job that must not pass unproven growth fails on it; one
    /// that accepts it passes 3 too.
    Unsure = 3,
    /// `exposure`: input it cannot read (an artifact that is not ELF, a bad suppression file), as
    /// a usage error, so that it is never taken for a verdict (0, 1 or 3).
    BadInput = 2,
}

impl ExitStatus {
    /// [`ExitStatus::Failed`] when `failed`, else [`ExitStatus::Ok`].
    pub fn failed_if(failed: bool) -> ExitStatus {
        if failed {
            ExitStatus::Failed
        } else {
            ExitStatus::Ok
        }
    }

    /// The status of two steps together: a failure over a delivery left in the spool over success.
    pub fn worst(self, other: ExitStatus) -> ExitStatus {
        match (self, other) {
            (ExitStatus::BadInput, _) | (_, ExitStatus::BadInput) => ExitStatus::BadInput,
            (ExitStatus::Failed, _) | (_, ExitStatus::Failed) => ExitStatus::Failed,
            (ExitStatus::Spooled, _) | (_, ExitStatus::Spooled) => ExitStatus::Spooled,
            (ExitStatus::Unsure, _) | (_, ExitStatus::Unsure) => ExitStatus::Unsure,
            (ExitStatus::Ok, ExitStatus::Ok) => ExitStatus::Ok,
        }
    }

    /// The number the process exits with.
    pub fn code(self) -> i32 {
        self as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_outweighs_a_spooled_delivery_which_outweighs_success() {
        use ExitStatus::{Failed, Ok as Done, Spooled};
        assert_eq!(Done.worst(Spooled), Spooled);
        assert_eq!(Spooled.worst(Failed), Failed);
        assert_eq!(Failed.worst(Done), Failed);
        assert_eq!(Spooled.worst(Done), Spooled);
        assert_eq!(Done.worst(Done), Done);
        assert_eq!(Done.worst(ExitStatus::Unsure), ExitStatus::Unsure);
        assert_eq!(ExitStatus::Unsure.worst(Failed), Failed);
        assert_eq!((Done.code(), Failed.code(), Spooled.code(), ExitStatus::Unsure.code()), (0, 1, 75, 3));
    }
}
