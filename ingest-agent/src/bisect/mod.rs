//! Bisection: the search, over ordered toolchain builds between a regression's last good and
//! first bad version, for the first bad build. The candidates are read from a file or a list of
//! versions (`candidates`), searched by measuring the fewest builds (`search`), and told a line a
//! step; the `bisect` command puts them together and records the answer on the regression.

pub(crate) mod candidates;
pub(crate) mod search;

use slopewatch_core::bisection::{BisectionSubmission, Outcome, Step};

/// One step as a line: `3  0.16.0-dev.15  bad   k 1.98 (strchr)  2.1 s`.
pub fn step_line(n: usize, s: &Step) -> String {
    let slope = match (&s.slope, &s.workload) {
        (Some(k), Some(w)) => format!("k {k:.2} ({w})"),
        _ => String::new(),
    };
    let note = s.note.as_deref().map(|n| format!("  {n}")).unwrap_or_default();
    format!("{n:>3}  {:<24} {:<7} {slope:<22} {:>6.1} s{note}", s.version, s.verdict.as_str(), s.seconds)
}

/// The last line: where the growth starts, or why the range could not be searched.
pub fn summary(b: &BisectionSubmission) -> String {
    let measured = b.steps.len();
    match b.outcome {
        Outcome::Found => format!(
            "first bad: {}, last good: {}, measured {measured} of {} candidates",
            b.first_bad.as_deref().unwrap_or("?"),
            b.last_good.as_deref().unwrap_or("?"),
            b.candidates
        ),
        Outcome::GoodIsBad => format!("the good end {} measured bad: nothing to search", b.good),
        Outcome::BadIsGood => format!("the bad end {} measured good: nothing to search", b.bad),
        Outcome::Inconclusive => {
            format!("inconclusive: the candidates left between a good and a bad one were all skipped (measured {measured} of {})", b.candidates)
        }
    }
}
