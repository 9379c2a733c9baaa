//! A regression's root causes, worked out on read from what it already holds: its probes and
//! loops name the functions that broke and how; each profiled workload joins the broken functions
//! its added cost (or, alone, its instructions) went to, by the mapping "where the cost went"
//! makes (`profiles`); a cost regression whose cost went to a function that broke nothing makes a
//! cost-rise cause of it; every other workload stays unattributed. `group` reads no database;
//! `read` reads what it needs for a page that lists regressions.

use crate::format;
use crate::links;
use crate::model::{
    ArtifactReach, BrokenContract, CauseKind, CausedWorkload, RegressionDetail, RegressionWorkload, RootCause,
    RootCauses, Via, WhereCostWent,
};
use slopewatch_core::profile::{catalogue_name, CostShift};
use slopewatch_core::wire::{Contract, Failure, FailureKind, Metric, SizeUnit, CONTRACT_PREFIX};
use slopewatch_core::workloads::{function_of, Group};

/// The least share of a workload's added cost a broken function must take for the workload to
/// be listed under it; below half of it, the workload is listed as "partly".
pub const LEAST_SHARE: f64 = 0.1;
/// From this share up a function takes the cost; below, "partly".
pub const WHOLE_SHARE: f64 = 0.5;

/// How the agent's guarded probes say a crash on their guard page: "read past its bound of 2
/// bytes".
const READ_PAST: &str = "read past its bound";

/// A regression's workload as the causes read it, from its page's row or its webhook's.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    pub workload: &'a str,
    pub metric: Metric,
    /// `slope`, `failure` or `cost`.
    pub reason: &'a str,
    pub failure: Option<&'a Failure>,
    pub contract: Option<&'a Contract>,
    pub class_before: Option<&'a str>,
    pub class_after: Option<&'a str>,
    pub unit: SizeUnit,
}

impl<'a> From<&'a RegressionWorkload> for Member<'a> {
    fn from(w: &'a RegressionWorkload) -> Member<'a> {
        Member {
            workload: &w.workload,
            metric: w.metric,
            reason: &w.reason,
            failure: w.failure.as_ref(),
            contract: w.contract.as_ref(),
            class_before: w.class_before.as_deref(),
            class_after: w.class_after.as_deref(),
            unit: w.size_unit,
        }
    }
}

impl Member<'_> {
    /// How its own function broke, where it is a probe or a loop, in words after the function's
    /// name.
    fn own_break(&self) -> (CauseKind, String) {
        let step = format::class_step_of_text(self.class_before, self.class_after);
        if let Some(f) = self.failure.filter(|_| self.reason == "failure") {
            let what = format::failure(f, self.unit);
            return match f.kind {
                FailureKind::WrongResult => (CauseKind::WrongResult, format!("gives a wrong result ({what})")),
                FailureKind::Crashed if self.on_bound() || f.detail.starts_with(READ_PAST) => {
                    let line = f.detail.lines().next().unwrap_or_default();
                    let rest: String = line.strip_prefix(READ_PAST).unwrap_or_default().chars().take(80).collect();
                    (CauseKind::ReadPastBound, format!("reads past its bound{rest} ({what})"))
                }
                FailureKind::Crashed => (CauseKind::Crashed, format!("crashes ({what})")),
                _ => (CauseKind::Failed, format!("fails ({what})")),
            };
        }
        if self.reason == "cost" {
            return (CauseKind::CostRise, "costs more, no contract broken".to_string());
        }
        match self.contract {
            Some(c) => {
                let what = if c.broken.is_empty() {
                    format!("costs more than its {} contract", c.expected.label())
                } else {
                    c.broken.clone()
                };
                let step = step.map(|s| format!(" ({s})")).unwrap_or_default();
                (CauseKind::OverContract, format!("{what}{step}"))
            }
            None => {
                let step = step.map(|s| format!(": {s}")).unwrap_or_default();
                (CauseKind::OverLimit, format!("is over its limit in its loop{step}"))
            }
        }
    }

    /// A probe of the bound axis: a crash there is a read past what the function was given.
    fn on_bound(&self) -> bool {
        let axis = self.workload.strip_prefix(CONTRACT_PREFIX).and_then(|r| r.split(['.', '~']).nth(1));
        axis.is_some_and(|a| a == "bound") || self.contract.is_some_and(|c| c.axis == "bound")
    }

    fn caused(&self, via: Via, share: Option<f64>) -> CausedWorkload {
        let share = share.map(|s| s.clamp(0.0, 1.0));
        CausedWorkload {
            workload: self.workload.to_string(),
            metric: self.metric,
            group: Group::of(self.workload),
            via: Some(via),
            partly: share.is_some_and(|s| s < WHOLE_SHARE),
            share,
        }
    }
}

/// Each function's share of a shift, by the catalogue's name (Zig's `c.string.strspn` and a C
/// library's `strspn` are one), most first.
fn shares(shift: &CostShift) -> Vec<(&str, f64)> {
    let mut out: Vec<(&str, f64)> = Vec::new();
    for f in &shift.functions {
        let name = catalogue_name(&f.name);
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, share)) => *share += f.share,
            None => out.push((name, f.share)),
        }
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    out
}

/// The causes being gathered, with every break said of each function.
struct Gathered<'a> {
    lineage: &'a str,
    causes: Vec<RootCause>,
    breaks: Vec<(String, CauseKind, String)>,
}

impl Gathered<'_> {
    /// The cause of `function`, made when there is none yet, that broke as `kind` says in
    /// `sentence`; a break replaces a cost rise.
    fn cause(&mut self, function: &str, kind: CauseKind, sentence: &str) -> &mut RootCause {
        self.breaks.push((function.to_string(), kind, sentence.to_string()));
        let i = match self.causes.iter().position(|c| c.function == function) {
            Some(i) => i,
            None => {
                self.causes.push(RootCause {
                    function: function.to_string(),
                    kind,
                    sentence: String::new(),
                    probe: None,
                    probe_url: None,
                    workloads: Vec::new(),
                    artifacts: Vec::new(),
                    reaches_team: false,
                });
                self.causes.len() - 1
            }
        };
        let c = &mut self.causes[i];
        c.kind = c.kind.min(kind);
        c
    }

    /// Each cause's breaks in words, worst first: every contract it broke, one sentence of each
    /// kind of failure, its loop's slope only where no probe says more, and a cost rise only where
    /// nothing broke.
    fn say(&mut self) {
        self.breaks.sort_by_key(|(_, kind, _)| *kind);
        for c in &mut self.causes {
            let mut said: Vec<(CauseKind, &str)> = Vec::new();
            for (_, kind, sentence) in self.breaks.iter().filter(|(f, _, _)| *f == c.function) {
                let over = said.iter().any(|(k, _)| *k == CauseKind::OverContract);
                let again = match kind {
                    CauseKind::OverContract => said.iter().any(|(_, s)| s == sentence),
                    CauseKind::OverLimit => over || said.iter().any(|(k, _)| k == kind),
                    CauseKind::CostRise => c.kind.is_break() || !said.is_empty(),
                    _ => said.iter().any(|(k, _)| k == kind),
                };
                if !again {
                    said.push((*kind, sentence));
                }
            }
            c.sentence = said.iter().map(|(_, s)| *s).collect::<Vec<_>>().join("; ");
        }
    }

    fn probe(&mut self, function: &str, probe: &str, metric: Metric) {
        if let Some(c) = self.causes.iter_mut().find(|c| c.function == function && c.probe.is_none()) {
            c.probe_url = Some(links::series(probe, self.lineage, metric));
            c.probe = Some(probe.to_string());
        }
    }

    fn is_broken(&self, function: &str) -> bool {
        self.causes.iter().any(|c| c.function == function && c.kind.is_break())
    }
}

fn add(cause: &mut RootCause, w: CausedWorkload) {
    if !cause.workloads.iter().any(|c| c.workload == w.workload) {
        cause.workloads.push(w);
    }
}

/// The root causes of a regression of `lineage` with `members`: `went` is where its profiled
/// workloads' cost went, `broken` the functions with a probe over its contract at its version,
/// `reaches` the stored artifacts that call the functions it names.
pub fn group(
    lineage: &str,
    members: &[Member<'_>],
    went: &[WhereCostWent],
    broken: &[BrokenContract],
    reaches: &[ArtifactReach],
) -> RootCauses {
    let mut g = Gathered { lineage, causes: Vec::new(), breaks: Vec::new() };
    // Probes and loops name their own function and how it broke.
    // Probes first: a cause links to its probe where it has one, else to its loop.
    let (probes, others): (Vec<&Member<'_>>, Vec<&Member<'_>>) =
        members.iter().partition(|m| m.workload.starts_with(CONTRACT_PREFIX));
    for m in probes.iter().chain(&others) {
        let Some(function) = function_of(m.workload) else { continue };
        let (kind, sentence) = m.own_break();
        let via = if m.workload.starts_with(CONTRACT_PREFIX) { Via::Probe } else { Via::Loop };
        add(g.cause(function, kind, &sentence), m.caused(via, None));
        if kind.is_break() {
            g.probe(function, m.workload, m.metric);
        }
    }
    // A function whose probe is over at the version but not in this regression broke too.
    let stored_break = |function: &str| broken.iter().find(|b| b.function == function);
    // Every profiled workload joins the broken functions its cost went to.
    for m in members.iter().filter(|m| !m.workload.starts_with(CONTRACT_PREFIX)) {
        let Some(w) = went.iter().find(|w| w.workload == m.workload) else { continue };
        let shares = shares(&w.shift);
        let own = function_of(m.workload);
        let hits: Vec<(&str, f64)> = shares
            .iter()
            .copied()
            .filter(|&(f, share)| share >= LEAST_SHARE && (g.is_broken(f) || stored_break(f).is_some()))
            .collect();
        for &(function, share) in hits.iter().filter(|(f, _)| Some(*f) != own) {
            if !g.is_broken(function) {
                if let Some(b) = stored_break(function) {
                    let cause =
                        g.cause(function, CauseKind::OverContract, &format!("broke its {} contract", b.expected));
                    (cause.probe, cause.probe_url) = (Some(b.probe.clone()), Some(b.series_url.clone()));
                }
            }
            if let Some(cause) = g.causes.iter_mut().find(|c| c.function == function) {
                add(cause, m.caused(Via::Profile, Some(share)));
            }
        }
        let Some(&(top, share)) = shares.first().filter(|_| hits.is_empty() && own.is_none() && m.reason == "cost")
        else {
            continue;
        };
        if share >= LEAST_SHARE {
            let (kind, sentence) = m.own_break();
            add(g.cause(top, kind, &sentence), m.caused(Via::Profile, Some(share)));
        }
    }
    g.say();
    let mut causes = g.causes;
    for c in &mut causes {
        c.artifacts = reaches
            .iter()
            .filter(|r| r.function == c.function)
            .map(|r| match (r.call_sites, r.referenced) {
                (Some(n), _) if n > 0 => format!("{} ({n} site{})", r.artifact, if n == 1 { "" } else { "s" }),
                (_, true) => format!("{} (referenced)", r.artifact),
                _ => r.artifact.clone(),
            })
            .collect();
        let exposed = reaches.iter().any(|r| r.function == c.function && r.breach.is_some() && r.accepted.is_none());
        c.reaches_team = exposed || c.workloads.iter().any(|w| w.group == Group::Team);
        c.workloads.sort_by(|a, b| {
            (a.rank(), a.partly)
                .cmp(&(b.rank(), b.partly))
                .then_with(|| b.share.unwrap_or(1.0).total_cmp(&a.share.unwrap_or(1.0)))
                .then_with(|| a.workload.cmp(&b.workload))
        });
    }
    causes.sort_by(|a, b| {
        let key = |c: &RootCause| (!c.reaches_team, std::cmp::Reverse(c.programs().count()), c.kind);
        key(a)
            .cmp(&key(b))
            .then_with(|| b.workloads.len().cmp(&a.workloads.len()))
            .then_with(|| a.function.cmp(&b.function))
    });
    let mut unattributed: Vec<CausedWorkload> = Vec::new();
    for m in members {
        let placed = causes.iter().any(|c| c.workloads.iter().any(|w| w.workload == m.workload));
        if !placed && !unattributed.iter().any(|u| u.workload == m.workload) {
            unattributed.push(CausedWorkload { via: None, ..m.caused(Via::Profile, None) });
        }
    }
    RootCauses { root_causes: causes, unattributed }
}

/// The root causes of the stored regression `r` with `members`, for a page that lists it: the
/// profiles of its workloads other than probes, the probes over at its version only where a
/// profile's cost went to a function its own probes and loops do not say broke, and with
/// `artifacts` up to that many stored artifacts that reach the functions it names.
pub async fn read(
    store: &crate::store::Store,
    r: &crate::model::RegressionRow,
    members: &[RegressionWorkload],
    artifacts: Option<i64>,
) -> Result<RootCauses, sqlx::Error> {
    let programs: Vec<(&str, SizeUnit)> = members
        .iter()
        .filter(|w| !w.workload.starts_with(CONTRACT_PREFIX))
        .map(|w| (w.workload.as_str(), w.size_unit))
        .collect();
    let shifts = crate::profiles::shifts_of(store, r, &programs).await?;
    let held: Vec<Member<'_>> = members.iter().map(Member::from).collect();
    let known: Vec<&str> =
        held.iter().filter(|m| m.own_break().0.is_break()).filter_map(|m| function_of(m.workload)).collect();
    let unknown = |w: &WhereCostWent| shares(&w.shift).iter().any(|&(f, s)| s >= LEAST_SHARE && !known.contains(&f));
    let broken = match shifts.iter().any(unknown) {
        true => crate::profiles::broken_at(store, &r.lineage, &r.version).await?,
        false => Vec::new(),
    };
    let reaches = match artifacts {
        Some(limit) => {
            let workloads = members.iter().map(|w| w.workload.as_str());
            crate::profiles::reaching(&mut &*store, &r.lineage, workloads, &shifts, limit).await?
        }
        None => Vec::new(),
    };
    Ok(group(&r.lineage, &held, &shifts, &broken, &reaches))
}

/// The root causes of a regression as its page read it: its workloads, where their cost went and
/// the artifacts that reach it, with `broken`, the functions over their contracts at its version.
pub fn of(d: &RegressionDetail, broken: &[BrokenContract]) -> RootCauses {
    let members: Vec<Member<'_>> = d.workloads.iter().map(Member::from).collect();
    group(&d.regression.lineage, &members, &d.where_cost_went, broken, &d.artifacts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::WhereCostWent;
    use slopewatch_core::exposure::Breakage;
    use slopewatch_core::profile::FunctionShift;
    use time::OffsetDateTime;

    fn contract(function: &str) -> Contract {
        Contract {
            expected: slopewatch_core::complexity::Class::Constant,
            function: function.into(),
            axis: "remaining".into(),
            broken: "reads the whole remaining string".into(),
            consequence: String::new(),
        }
    }

    fn failure(kind: &str, detail: &str) -> Failure {
        serde_json::from_value(
            serde_json::json!({"kind": kind, "size": 64, "detail": detail, "got": "0", "expected": "32", "signal": 11}),
        )
        .unwrap()
    }

    struct Held {
        name: &'static str,
        reason: &'static str,
        failure: Option<Failure>,
        contract: Option<Contract>,
        before: &'static str,
        after: &'static str,
    }

    fn slope(name: &'static str, before: &'static str, after: &'static str) -> Held {
        let contract = function_of(name).filter(|_| name.starts_with(CONTRACT_PREFIX)).map(contract);
        Held { name, reason: "slope", failure: None, contract, before, after }
    }

    fn failing(name: &'static str, kind: &str, detail: &str) -> Held {
        Held { name, reason: "failure", failure: Some(failure(kind, detail)), contract: None, before: "n", after: "n" }
    }

    fn members(held: &[Held]) -> Vec<Member<'_>> {
        held.iter()
            .map(|h| Member {
                workload: h.name,
                metric: Metric::Wall,
                reason: h.reason,
                failure: h.failure.as_ref(),
                contract: h.contract.as_ref(),
                class_before: Some(h.before),
                class_after: Some(h.after),
                unit: SizeUnit::Bytes,
            })
            .collect()
    }

    /// Where `workload`'s added cost went: `shares` by function.
    fn went(workload: &str, shares: &[(&str, f64)]) -> WhereCostWent {
        let functions: Vec<FunctionShift> = shares
            .iter()
            .map(|&(name, share)| FunctionShift { name: name.into(), before: None, after: None, ratio: None, share })
            .collect();
        let shift = CostShift {
            size: 4096,
            before: Some(100),
            after: 1000,
            sentence: String::new(),
            function: catalogue_name(&functions[0].name).to_string(),
            functions,
        };
        WhereCostWent {
            workload: workload.into(),
            bad_version: "0.16.0".into(),
            good_version: Some("0.15.2".into()),
            shift,
            contract: None,
        }
    }

    fn names(c: &RootCause) -> Vec<&str> {
        c.workloads.iter().map(|w| w.workload.as_str()).collect()
    }

    #[test]
    fn probes_loops_and_profiles_gather_under_the_functions_that_broke() {
        let held = [
            slope("contract.strspn.remaining", "1", "n"),
            slope("strspn", "n", "n^2"),
            slope("sqlite-json-each.spaced", "n", "n^2"),
            slope("sqlite-json-arrow.pretty", "n", "n^2"),
            slope("sqlite-like.long-text", "n", "n^2"),
            slope("contract.strcspn.remaining", "1", "n"),
            failing("contract.memccpy.bound", "wrong_result", "wrong result: 0 hits, expected 32"),
            failing("contract.memccpy.remaining", "wrong_result", "wrong result: 0 hits, expected 256"),
            failing("contract.memchr.remaining", "crashed", "read past its bound of 2 bytes"),
            failing("contract.strncmp.bound", "crashed", "segfault"),
            failing("strtol", "wrong_result", "wrong result"),
        ];
        let went = [
            went("sqlite-json-each.spaced", &[("c.string.strspn", 0.97), ("jsonTranslateTextToBlob", 0.01)]),
            went("sqlite-json-arrow.pretty", &[("strspn", 0.99)]),
            went("sqlite-like.long-text", &[("strcspn", 0.99)]),
            went("strspn", &[("strspn", 1.0)]),
        ];
        let c = group("zig", &members(&held), &went, &[], &[]);
        let functions = c.functions();
        assert_eq!(functions, ["strspn", "strcspn", "memccpy", "strtol", "memchr", "strncmp"]);
        assert!(functions.len() < held.len(), "fewer causes than workloads");
        let strspn = &c.root_causes[0];
        assert_eq!(
            names(strspn),
            ["sqlite-json-arrow.pretty", "sqlite-json-each.spaced", "strspn", "contract.strspn.remaining"]
        );
        assert_eq!(strspn.kind, CauseKind::OverContract);
        assert_eq!(strspn.sentence, "reads the whole remaining string (O(1) → O(n))", "the loop's slope says less");
        assert_eq!(strspn.probe.as_deref(), Some("contract.strspn.remaining"));
        assert_eq!(strspn.probe_url.as_deref(), Some("/series/contract.strspn.remaining/zig"));
        assert_eq!(strspn.workloads[1].share, Some(0.97));
        assert!(!strspn.workloads[1].partly);
        assert_eq!(names(&c.root_causes[1]), ["sqlite-like.long-text", "contract.strcspn.remaining"]);
        let memccpy = &c.root_causes[2];
        assert_eq!(memccpy.kind, CauseKind::WrongResult);
        assert_eq!(memccpy.sentence, "gives a wrong result (wrong result at 64 B: got 0, expected 32)", "said once");
        assert_eq!(c.root_causes[4].kind, CauseKind::ReadPastBound, "a guard's words say so");
        assert_eq!(c.root_causes[4].sentence, "reads past its bound of 2 bytes (crashed at 64 B: signal 11 (SIGSEGV))");
        assert_eq!(c.root_causes[5].kind, CauseKind::ReadPastBound, "a crash on the bound axis");
        assert_eq!(c.root_causes[3].probe.as_deref(), Some("strtol"), "a loop shows its break where no probe does");
        assert!(c.unattributed.is_empty());
        assert_eq!(c.headline().unwrap(), "broke 6 functions; 3 workloads trace to strspn and strcspn");
    }

    #[test]
    fn a_team_s_workload_comes_first_under_its_cause_and_its_cause_first() {
        let held = [
            slope("contract.strchr.remaining", "1", "n"),
            slope("sqlite-json-each.spaced", "n", "n^2"),
            slope("contract.strspn.remaining", "1", "n"),
            slope("tokens", "n", "n^2"),
        ];
        let went = [went("sqlite-json-each.spaced", &[("strspn", 0.9)]), went("tokens", &[("strchr", 0.8)])];
        let c = group("zig", &members(&held), &went, &[], &[]);
        assert_eq!(c.root_causes[0].function, "strchr", "it reaches the team's own workload");
        assert!(c.root_causes[0].reaches_team && !c.root_causes[1].reaches_team);
        assert_eq!(names(&c.root_causes[0]), ["tokens", "contract.strchr.remaining"]);
        assert_eq!(c.root_causes[0].workloads[0].group, Group::Team);
    }

    #[test]
    fn a_workload_whose_cost_lands_in_no_broken_function_is_unattributed_and_a_small_share_is_partly() {
        let held = [
            slope("contract.strspn.remaining", "1", "n"),
            slope("parser", "n", "n^2"),
            slope("mixed", "n", "n^2"),
            slope("tiny", "n", "n^2"),
            slope("unprofiled", "n", "n^2"),
        ];
        let went = [
            went("parser", &[("qsort", 0.95), ("strspn", 0.04)]),
            went("mixed", &[("memmove", 0.6), ("strspn", 0.32)]),
            went("tiny", &[("memmove", 0.92), ("strspn", 0.08)]),
        ];
        let c = group("zig", &members(&held), &went, &[], &[]);
        assert_eq!(c.root_causes.len(), 1, "qsort broke nothing: no cause of it for a slope");
        let mixed = c.root_causes[0].workloads.iter().find(|w| w.workload == "mixed").unwrap();
        assert!(mixed.partly && mixed.share == Some(0.32), "{mixed:?}");
        assert_eq!(
            c.root_causes[0].line(|s| s.to_string(), |s| s.to_string()).split(": ").nth(1).unwrap(),
            "2 workloads, mixed (partly, 32 %), contract.strspn.remaining"
        );
        let un: Vec<&str> = c.unattributed.iter().map(|w| w.workload.as_str()).collect();
        assert_eq!(un, ["parser", "tiny", "unprofiled"], "never forced under a cause");
        assert!(c.unattributed.iter().all(|w| w.via.is_none()));
    }

    #[test]
    fn a_cost_regression_s_added_cost_makes_a_cost_rise_of_a_function_that_broke_nothing() {
        let held = [Held { name: "api", reason: "cost", failure: None, contract: None, before: "n", after: "n" }];
        let went = [went("api", &[("memcpy", 0.7), ("strlen", 0.2)])];
        let c = group("zig", &members(&held), &went, &[], &[]);
        assert_eq!(c.root_causes.len(), 1);
        assert_eq!((c.root_causes[0].function.as_str(), c.root_causes[0].kind), ("memcpy", CauseKind::CostRise));
        assert_eq!(c.headline().unwrap(), "cost rose in memcpy");
    }

    #[test]
    fn a_stored_break_takes_workloads_and_artifacts_join_their_cause() {
        let held = [slope("sqlite-json-each.spaced", "n", "n^2")];
        let went = [went("sqlite-json-each.spaced", &[("strspn", 0.97)])];
        let broken = [BrokenContract {
            function: "strspn".into(),
            expected: "O(1)".into(),
            probe: "contract.strspn.remaining".into(),
            sentence: "strspn broke its O(1) contract at 0.16.0".into(),
            series_url: "/series/contract.strspn.remaining/zig".into(),
        }];
        let reach = |artifact: &str, sites: u32, breach: Option<Breakage>| ArtifactReach {
            artifact: artifact.into(),
            digest: String::new(),
            function: "strspn".into(),
            version: "0.16.0".into(),
            scanned_at: OffsetDateTime::UNIX_EPOCH,
            breach,
            call_sites: Some(sites),
            referenced: sites == 0,
            callers: Vec::new(),
            accepted: None,
            sentence: String::new(),
            version_url: String::new(),
        };
        let reaches = [reach("api-server", 4, Some(Breakage::OverContract)), reach("worker", 0, None)];
        let c = group("zig", &members(&held), &went, &broken, &reaches);
        let strspn = &c.root_causes[0];
        assert_eq!(
            (strspn.sentence.as_str(), strspn.probe.as_deref()),
            ("broke its O(1) contract", Some("contract.strspn.remaining"))
        );
        assert_eq!(strspn.artifacts, ["api-server (4 sites)", "worker (referenced)"]);
        assert!(strspn.reaches_team, "an exposed artifact is the team's own code");
        let line = strspn.line(|s| format!("`{s}`"), |s| s.to_string());
        assert_eq!(line, "`strspn` broke its O(1) contract: 1 workload, `sqlite-json-each.spaced`; called by api-server (4 sites), worker (referenced)");
    }

    #[test]
    fn without_profiles_the_probes_still_group_by_function() {
        let held = [
            slope("contract.strstr.needle", "n", "n^2"),
            slope("contract.strstr.remaining", "1", "n"),
            slope("strstr", "n", "n^2"),
            slope("sqlite-insert", "n", "n^2"),
        ];
        let c = group("zig", &members(&held), &[], &[], &[]);
        assert_eq!(c.root_causes.len(), 1);
        assert_eq!(names(&c.root_causes[0]), ["strstr", "contract.strstr.needle", "contract.strstr.remaining"]);
        assert_eq!(
            c.root_causes[0].sentence,
            "reads the whole remaining string (O(n) → O(n²)); reads the whole remaining string (O(1) → O(n))"
        );
        assert_eq!(c.unattributed[0].workload, "sqlite-insert");
        assert_eq!(c.headline().unwrap(), "broke 1 function");
    }
}
