//! A comparison of two toolchain versions in one sentence: how many workloads went which way,
//! "zig-cc-musl 0.16.0 against 0.15.2: 6 workloads went O(n) → O(n²), 1 gives a wrong result, 5
//! unchanged.", each count with a verb that agrees with it.

use super::changes::{Change, Changes};
use slopewatch_core::wire::FailureKind;

impl Changes {
    /// The comparison in one sentence: "zig-cc-musl 0.16.0 against 0.15.2: 6 workloads went O(n) →
    /// O(n²), 1 gives a wrong result, 5 unchanged."
    pub fn headline(&self) -> String {
        let findings = self.rows.iter().filter(|r| r.finding).count();
        let Some(before) = self.before_name() else {
            let n = self.rows.len();
            let mut text = format!("{}, the first version measured: {n} {}", self.after.label(), workloads(n));
            if findings > 0 {
                text.push_str(&format!(", {findings} over their limit from the start (findings)"));
            }
            return text + ".";
        };
        let mut counts: Vec<((Change, String), usize)> = Vec::new();
        for r in &self.rows {
            let detail = match r.change {
                Change::Worse | Change::Better => r.change_text.clone(),
                Change::Fails => r.after.as_ref().and_then(|a| a.failure_kind).map_or("", |k| k.as_str()).to_string(),
                // Each workload's own limit, so workloads held to different ones are counted apart.
                Change::Steeper | Change::Flatter => self.rules.threshold_for(&r.workload).to_string(),
                Change::Costlier | Change::Cheaper => {
                    self.rules.cost_factor_for(&r.workload).map(|f| f.to_string()).unwrap_or_default()
                }
                _ => String::new(),
            };
            match counts.iter_mut().find(|(key, _)| key.0 == r.change && key.1 == detail) {
                Some((_, n)) => *n += 1,
                None => counts.push(((r.change, detail), 1)),
            }
        }
        counts.sort_by(|((ca, _), na), ((cb, _), nb)| ca.cmp(cb).then(nb.cmp(na)));
        let parts: Vec<String> = counts
            .iter()
            .enumerate()
            .map(|(i, ((change, detail), n))| {
                let noun = if i == 0 { format!(" {}", workloads(*n)) } else { String::new() };
                format!("{n}{noun} {}", phrase(*change, detail, *n == 1))
            })
            .collect();
        let mut text = format!("{} against {before}: ", self.after.label());
        if parts.is_empty() {
            text.push_str("no workload measured at either");
        } else {
            text.push_str(&parts.join(", "));
        }
        if findings > 0 {
            text.push_str(&format!("; {findings} {}", if findings == 1 { "finding" } else { "findings" }));
        }
        text + "."
    }
}

fn workloads(n: usize) -> &'static str {
    if n == 1 {
        "workload"
    } else {
        "workloads"
    }
}

/// What a count of workloads did, its verb agreeing with the count.
fn phrase(change: Change, detail: &str, one: bool) -> String {
    let verb = |singular: &str, plural: &str| if one { singular.to_string() } else { plural.to_string() };
    match change {
        Change::Worse | Change::Better => format!("went {detail}"),
        Change::Fails => match FailureKind::ALL.into_iter().find(|k| k.as_str() == detail) {
            Some(FailureKind::WrongResult) => verb("gives a wrong result", "give a wrong result"),
            Some(FailureKind::Crashed) => verb("crashes", "crash"),
            Some(FailureKind::TimedOut) => verb("times out", "time out"),
            Some(FailureKind::BuildFailed) => verb("does not build", "do not build"),
            Some(FailureKind::SetupFailed) | None => verb("fails to set up", "fail to set up"),
        },
        Change::Steeper => format!("went over k {detail} without a class step"),
        Change::Flatter => format!("came back under k {detail}"),
        Change::Costlier => verb("costs more", "cost more") + &format!(" (more than {detail}×)"),
        Change::Cheaper => verb("costs less", "cost less") + &format!(" (more than {detail}×)"),
        Change::StillFails => verb("still fails", "still fail"),
        Change::Passes => verb("passes again", "pass again"),
        Change::New => "new".into(),
        Change::Gone => "not measured".into(),
        Change::Unchanged => "unchanged".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_s_verb_agrees_with_how_many_failed() {
        assert_eq!(phrase(Change::Fails, "timed_out", false), "time out");
        assert_eq!(phrase(Change::Fails, "build_failed", true), "does not build");
        assert_eq!(phrase(Change::Fails, "wrong_result", false), "give a wrong result");
        assert_eq!(phrase(Change::StillFails, "", true), "still fails");
        assert_eq!(workloads(1), "workload");
    }
}
