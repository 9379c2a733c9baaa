//! What a regression follows from version to version for a workload: its slope, whether it runs,
//! or what it costs. The key of a regression's member, as the rules decide on it and the store
//! keeps it.

/// Why a workload is in a regression: its growth crossed the threshold, it failed, or its count
/// rose by the cost factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    Slope,
    Failure,
    Cost,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Slope => "slope",
            Reason::Failure => "failure",
            Reason::Cost => "cost",
        }
    }

    pub fn parse(s: &str) -> Option<Reason> {
        match s {
            "slope" => Some(Reason::Slope),
            "failure" => Some(Reason::Failure),
            "cost" => Some(Reason::Cost),
            _ => None,
        }
    }
}

/// What the rules follow from version to version: one workload's slope, whether it runs, or what
/// it costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Track {
    pub workload_id: i64,
    pub reason: Reason,
}

impl Track {
    pub fn slope(workload_id: i64) -> Track {
        Track { workload_id, reason: Reason::Slope }
    }

    pub fn failure(workload_id: i64) -> Track {
        Track { workload_id, reason: Reason::Failure }
    }

    pub fn cost(workload_id: i64) -> Track {
        Track { workload_id, reason: Reason::Cost }
    }
}
