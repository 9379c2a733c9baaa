//! A regression's root causes: its workloads grouped under the libc functions that broke at its
//! version (or, for a cost regression, the function its added cost went to), as its page, its
//! JSON, its webhooks, its postmortem, the version page and the overview tell it. `causes` works
//! them out on read.

use serde::Serialize;
use slopewatch_core::wire::Metric;
use slopewatch_core::workloads::Group;
use utoipa::ToSchema;

/// How a function broke, worst first: a wrong answer before a read past a bound, before a crash,
/// before a cost over the function's contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// Its probe or loop counted something other than a correct libc counts.
    WrongResult,
    /// Its probe of the bound axis crashed: it read past the end of what it was given.
    ReadPastBound,
    /// Its probe or loop crashed otherwise.
    Crashed,
    /// A probe of it grew past its contract's class.
    OverContract,
    /// Its loop grew past its slope limit, with no probe over to say how.
    OverLimit,
    /// Its probe or loop could not build, set up or finish in time.
    Failed,
    /// No contract broke: a workload's added cost went to it.
    CostRise,
}

impl CauseKind {
    /// How a list names the kind.
    pub fn label(self) -> &'static str {
        match self {
            CauseKind::WrongResult => "wrong result",
            CauseKind::ReadPastBound => "reads past its bound",
            CauseKind::Crashed => "crashes",
            CauseKind::OverContract => "over its contract",
            CauseKind::OverLimit => "over its limit",
            CauseKind::Failed => "fails",
            CauseKind::CostRise => "cost rise, no contract broken",
        }
    }

    /// As the API writes it, and as a page's class names it.
    pub fn as_str(self) -> &'static str {
        match self {
            CauseKind::WrongResult => "wrong_result",
            CauseKind::ReadPastBound => "read_past_bound",
            CauseKind::Crashed => "crashed",
            CauseKind::OverContract => "over_contract",
            CauseKind::OverLimit => "over_limit",
            CauseKind::Failed => "failed",
            CauseKind::CostRise => "cost_rise",
        }
    }

    /// Whether the function itself broke, rather than a cost landing in it.
    pub fn is_break(self) -> bool {
        self != CauseKind::CostRise
    }
}

/// How a workload traces to its cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// It is a probe of the function.
    Probe,
    /// It is the built-in loop over the function.
    Loop,
    /// Its profile puts the added cost (or, alone, most of its instructions) in the function.
    Profile,
}

/// One workload under a cause, or unattributed.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CausedWorkload {
    pub workload: String,
    /// The metric of the series it was found on.
    #[serde(rename = "measure")]
    pub metric: Metric,
    /// Whose it is: `team`, `builtin` or `contract`.
    #[schema(value_type = String)]
    pub group: Group,
    /// How it traces to the cause; none when unattributed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<Via>,
    /// For one traced by its profile, the function's share of the added instructions (or of all
    /// of them, where the last good version has no profile to compare with), 0 to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// The function takes less than half of it: listed as "partly", with its share.
    pub partly: bool,
}

impl CausedWorkload {
    /// A team's workloads first, then the built-in paths, the loops, and the probes.
    pub fn rank(&self) -> u8 {
        match (self.group, self.via) {
            (Group::Team, _) => 0,
            (Group::Builtin, Some(Via::Loop)) => 2,
            (Group::Builtin, _) => 1,
            (Group::Contract, _) => 3,
        }
    }

    /// Neither a probe nor a loop: a program whose cost traced here.
    pub fn is_program(&self) -> bool {
        self.rank() < 2
    }

    /// Its name, and "partly, 32 %" where the function takes less than half of its cost.
    pub fn text(&self, name: impl Fn(&str) -> String) -> String {
        match self.share.filter(|_| self.partly) {
            Some(share) => format!("{} (partly, {:.0} %)", name(&self.workload), share * 100.0),
            None => name(&self.workload),
        }
    }
}

/// A function that broke at the regression's version, or that a cost regression's added cost
/// went to, with the workloads that trace to it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RootCause {
    /// As the catalogue names it: `strspn`.
    pub function: String,
    /// The worst of its breaks.
    #[serde(rename = "break")]
    pub kind: CauseKind,
    /// The breaks in words, after the function's name: "reads the whole remaining string
    /// (O(1) → O(n))", "gives a wrong result (wrong result at 64 KiB: got 3, expected 0)".
    pub sentence: String,
    /// Its probe over its contract (or failing), and that probe's series page.
    pub probe: Option<String>,
    pub probe_url: Option<String>,
    /// A team's workloads first, then built-in paths, loops and probes.
    pub workloads: Vec<CausedWorkload>,
    /// The stored artifacts whose latest scan calls it: "api-server (4 sites)".
    pub artifacts: Vec<String>,
    /// It reaches a team's own workload, or an artifact scanned as exposed and not accepted:
    /// such causes are listed first.
    pub reaches_team: bool,
}

impl RootCause {
    /// The workloads that are neither probes nor loops.
    pub fn programs(&self) -> impl Iterator<Item = &CausedWorkload> {
        self.workloads.iter().filter(|w| w.is_program())
    }

    /// The cause in one line: "`strspn` reads the whole remaining string (O(1) → O(n)): 6
    /// workloads, sqlite-json-each.spaced, …; called by api-server (4 sites)". `name` writes a
    /// function's or workload's name (a code span), `text` escapes words.
    pub fn line(&self, name: impl Fn(&str) -> String, text: impl Fn(&str) -> String) -> String {
        let n = self.workloads.len();
        let listed: Vec<String> = self.workloads.iter().map(|w| w.text(&name)).collect();
        let mut line = format!(
            "{} {}: {n} workload{}, {}",
            name(&self.function),
            text(&self.sentence),
            if n == 1 { "" } else { "s" },
            listed.join(", ")
        );
        if !self.artifacts.is_empty() {
            line.push_str(&format!("; called by {}", text(&self.artifacts.join(", "))));
        }
        line
    }
}

/// A regression's workloads under their causes, and those that trace to none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema)]
pub struct RootCauses {
    /// Worst first: those that reach a team's own workloads or artifacts, then by how many
    /// programs they reach, then by the kind of break.
    pub root_causes: Vec<RootCause>,
    /// The workloads that trace to no cause: never forced under one.
    pub unattributed: Vec<CausedWorkload>,
}

impl RootCauses {
    pub fn is_empty(&self) -> bool {
        self.root_causes.is_empty()
    }

    /// The causes' functions, worst first.
    pub fn functions(&self) -> Vec<&str> {
        self.root_causes.iter().map(|c| c.function.as_str()).collect()
    }

    /// The causes in a phrase, for the overview: "broke 24 functions; 5 workloads trace to strspn
    /// and strcspn". None without a cause.
    pub fn headline(&self) -> Option<String> {
        if self.root_causes.is_empty() {
            return None;
        }
        let broke = self.root_causes.iter().filter(|c| c.kind.is_break()).count();
        let rose: Vec<&str> =
            self.root_causes.iter().filter(|c| !c.kind.is_break()).map(|c| c.function.as_str()).collect();
        let mut parts = Vec::new();
        if broke > 0 {
            parts.push(format!("broke {broke} function{}", if broke == 1 { "" } else { "s" }));
        }
        let mut programs: Vec<&str> = Vec::new();
        let mut reached: Vec<&str> = Vec::new();
        for c in self.root_causes.iter().filter(|c| c.kind.is_break()) {
            for w in c.programs() {
                if !programs.contains(&w.workload.as_str()) {
                    programs.push(&w.workload);
                }
                if !reached.contains(&c.function.as_str()) {
                    reached.push(&c.function);
                }
            }
        }
        if !programs.is_empty() {
            let n = programs.len();
            parts.push(format!(
                "{n} workload{} trace to {}",
                if n == 1 { "" } else { "s" },
                crate::format::and_list(&reached)
            ));
        }
        if !rose.is_empty() {
            parts.push(format!("cost rose in {}", crate::format::and_list(&rose)));
        }
        Some(parts.join("; "))
    }
}
