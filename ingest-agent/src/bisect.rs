//! `bisect`: from "this version is quadratic, that one was not" to the first bad toolchain build.
//!
//! The candidates are builds of one lineage in order, oldest first: a file of `VERSION=CC COMMAND`
//! lines, or versions with a script that fetches or builds each and prints its compiler command
//! (run only for the candidates measured). Both ends are measured first; then the range is halved
//! like `git bisect`, a candidate that cannot be built or run (or stays unsure when measured again)
//! skipped. Each candidate is measured only as far as its verdict needs: at the sizes the bad end
//! was measured at, where the growth already showed.

use crate::build::cache::BuildCache;
use crate::build::error::BuildError;
use crate::build::toolchain;
use crate::build::workloads::Workload;
use crate::config::{split_words, ToolchainSpec};
use crate::measure::gate::{Limits, Verdict};
use crate::measure::{self, Budget};
use crate::output::progress::Progress;
use crate::output::table;
use anyhow::{bail, Context, Result};
use slopewatch_core::bisection::{BisectionSubmission, Outcome, Step, StepVerdict};
use slopewatch_core::complexity::Class;
use slopewatch_core::wire::{RunSubmission, WorkloadRun};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;
use uuid::Uuid;

/// Where the candidates come from.
#[derive(Debug, Clone)]
pub enum Candidates {
    /// `VERSION=CC COMMAND`, in order.
    Listed(Vec<(String, String)>),
    /// Versions in order, and a script with `{version}` that prints the compiler command.
    Materialized { script: String, versions: Vec<String> },
}

impl Candidates {
    pub fn versions(&self) -> Vec<String> {
        match self {
            Candidates::Listed(l) => l.iter().map(|(v, _)| v.clone()).collect(),
            Candidates::Materialized { versions, .. } => versions.clone(),
        }
    }

    /// The compiler command of candidate `i`: listed, or printed by the script on its last line.
    fn command(&self, i: usize) -> Result<String, String> {
        match self {
            Candidates::Listed(l) => Ok(l[i].1.clone()),
            Candidates::Materialized { script, versions } => {
                let script = script.replace("{version}", &shell_quote(&versions[i]));
                let out = std::process::Command::new("sh")
                    .arg("-c")
                    .arg(&script)
                    .output()
                    .map_err(|e| format!("cannot run the materialize script: {e}"))?;
                let stdout = String::from_utf8_lossy(&out.stdout);
                if !out.status.success() {
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    return Err(format!(
                        "the materialize script exited with {}: {}",
                        out.status,
                        crate::measure::failure::detail(&stderr).lines().last().unwrap_or("")
                    ));
                }
                match stdout.lines().rev().map(str::trim).find(|l| !l.is_empty()) {
                    Some(command) => Ok(command.to_string()),
                    None => Err("the materialize script printed no compiler command".into()),
                }
            }
        }
    }
}

/// Reads a candidates file: one `VERSION=CC COMMAND` per line, oldest first; blank lines and
/// lines starting with `#` are skipped. Each error names the line.
pub fn read_candidates(path: &Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out: Vec<(String, String)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), n + 1);
        let Some((version, command)) = line.split_once('=') else {
            bail!(
                "{}: expected VERSION=CC COMMAND, e.g. 0.16.0-dev.1234+abc=/opt/zig/zig cc -target x86_64-linux-musl",
                at()
            );
        };
        let (version, command) = (version.trim(), command.trim());
        check_version(version).with_context(at)?;
        if split_words(command).with_context(at)?.is_empty() {
            bail!("{}: the compiler command is empty", at());
        }
        if out.iter().any(|(v, _)| v == version) {
            bail!("{}: version {version} is listed twice", at());
        }
        out.push((version.to_string(), command.to_string()));
    }
    if out.len() < 2 {
        bail!("{}: a bisection needs at least two candidates, found {}", path.display(), out.len());
    }
    Ok(out)
}

/// Reads a versions file for `--materialize`: one version per line, oldest first.
pub fn read_versions(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out: Vec<String> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let v = line.trim();
        if v.is_empty() || v.starts_with('#') {
            continue;
        }
        check_version(v).with_context(|| format!("{}:{}", path.display(), n + 1))?;
        if out.iter().any(|o| o == v) {
            bail!("{}:{}: version {v} is listed twice", path.display(), n + 1);
        }
        out.push(v.to_string());
    }
    if out.len() < 2 {
        bail!("{}: a bisection needs at least two versions, found {}", path.display(), out.len());
    }
    Ok(out)
}

fn check_version(v: &str) -> Result<()> {
    if v.is_empty() || v.len() > 128 || !v.chars().all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c)) {
        bail!("version {v:?} must be 1 to 128 letters, digits, '.', '_', '+' or '-'");
    }
    Ok(())
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The next candidate to measure strictly between `lo` (good) and `hi` (bad): the middle one, or
/// the nearest to it not yet skipped, alternating above and below. `None` when every candidate
/// between is skipped (or there is none).
pub fn next_candidate(lo: usize, hi: usize, skipped: &BTreeSet<usize>) -> Option<usize> {
    if hi <= lo + 1 {
        return None;
    }
    let mid = lo + (hi - lo) / 2;
    (0..hi - lo).flat_map(|d| [mid + d, mid.wrapping_sub(d)]).find(|&i| i > lo && i < hi && !skipped.contains(&i))
}

/// What one candidate measured to.
#[derive(Debug)]
struct Judged {
    verdict: StepVerdict,
    /// The steepest slope and its workload.
    slope: Option<(f64, String)>,
    note: Option<String>,
    run: Option<RunSubmission>,
}

/// Everything a bisection needs besides its candidates.
pub struct Plan<'a> {
    pub lineage: String,
    pub workloads: Vec<Workload>,
    pub good: String,
    pub bad: String,
    pub max_slope: f64,
    /// The most complex class allowed, when the class is judged too.
    pub max_class: Option<Class>,
    pub budget: Budget,
    pub cache: &'a BuildCache,
    pub scratch: PathBuf,
    pub flags: Vec<String>,
}

/// Runs the bisection, both ends first, then halving, and returns its record. `on_step` sees each
/// step as it is decided, with the candidate's run (to print it, or to submit the run and return
/// its id).
pub fn bisect(
    plan: &Plan,
    candidates: &Candidates,
    mut on_step: impl FnMut(&Step, Option<&RunSubmission>) -> Option<Uuid>,
) -> Result<BisectionSubmission> {
    let versions = candidates.versions();
    let index = |v: &str, which: &str| {
        versions.iter().position(|c| c == v).with_context(|| {
            format!("the {which} version {v} is not among the candidates; list it, so it can be measured first")
        })
    };
    let (good, bad) = (index(&plan.good, "good")?, index(&plan.bad, "bad")?);
    if good >= bad {
        bail!("the good version {} must come before the bad version {} among the candidates", plan.good, plan.bad);
    }
    let started_at = time::OffsetDateTime::now_utc();
    let began = Instant::now();
    let limits = Limits { max_slope: Some(plan.max_slope), max_class: plan.max_class, ..Limits::default() };
    let progress = Progress::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut sizes: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut step = |i: usize,
                    sizes: &BTreeMap<String, (u64, u64)>,
                    steps: &mut Vec<Step>|
     -> (StepVerdict, Option<RunSubmission>) {
        let t = Instant::now();
        let judged = judge(plan, candidates, &versions[i], i, sizes, &limits, &progress);
        let step = Step {
            version: versions[i].clone(),
            verdict: judged.verdict,
            slope: judged.slope.as_ref().map(|(k, _)| *k),
            workload: judged.slope.as_ref().map(|(_, w)| w.clone()),
            seconds: t.elapsed().as_secs_f64(),
            run_id: None,
            note: judged.note.clone(),
        };
        let run_id = on_step(&step, judged.run.as_ref());
        steps.push(Step { run_id, ..step });
        (judged.verdict, judged.run)
    };

    let (good_verdict, _) = step(good, &sizes, &mut steps);
    let (bad_verdict, bad_run) = step(bad, &sizes, &mut steps);
    if let Some(run) = &bad_run {
        // The sizes where the bad end's growth showed are the ones that tell good from bad.
        for w in &run.workloads {
            let (Some(lo), Some(hi)) = (w.measurements.first(), w.measurements.last()) else { continue };
            sizes.insert(w.name.clone(), (lo.size.min(hi.size), lo.size.max(hi.size)));
        }
    }
    let outcome = match (good_verdict, bad_verdict) {
        (StepVerdict::Bad, _) => Some(Outcome::GoodIsBad),
        (_, StepVerdict::Good) => Some(Outcome::BadIsGood),
        (StepVerdict::Skipped, _) | (_, StepVerdict::Skipped) => {
            bail!(
                "an end of the range could not be judged ({}); fix it or pick other ends",
                steps
                    .iter()
                    .filter(|s| s.verdict == StepVerdict::Skipped)
                    .map(|s| format!("{}: {}", s.version, s.note.as_deref().unwrap_or("skipped")))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
        _ => None,
    };
    let (mut lo, mut hi) = (good, bad);
    let mut skipped = BTreeSet::new();
    if outcome.is_none() {
        while let Some(i) = next_candidate(lo, hi, &skipped) {
            match step(i, &sizes, &mut steps).0 {
                StepVerdict::Good => lo = i,
                StepVerdict::Bad => hi = i,
                StepVerdict::Skipped => {
                    skipped.insert(i);
                }
            }
        }
    }
    drop(progress);
    let outcome = outcome.unwrap_or(if hi == lo + 1 { Outcome::Found } else { Outcome::Inconclusive });
    let found = outcome == Outcome::Found;
    let record = BisectionSubmission {
        bisection_id: Uuid::new_v4(),
        agent_version: crate::AGENT_VERSION.to_string(),
        started_at,
        seconds: began.elapsed().as_secs_f64(),
        host: crate::host::detect(),
        lineage: plan.lineage.clone(),
        workloads: plan.workloads.iter().map(|w| w.name.clone()).collect(),
        max_slope: plan.max_slope,
        max_class: plan.max_class,
        good: plan.good.clone(),
        bad: plan.bad.clone(),
        candidates: (bad - good + 1) as u32,
        outcome,
        first_bad: found.then(|| versions[hi].clone()),
        last_good: found.then(|| versions[lo].clone()),
        steps,
    };
    record.validate().context("the bisection's record is invalid")?;
    Ok(record)
}

/// Builds and measures candidate `i` on every workload, stopping at the first one over the limit.
/// An unsure verdict is measured once more; still unsure, or a candidate that cannot be built or
/// run, is skipped with the reason.
fn judge(
    plan: &Plan,
    candidates: &Candidates,
    version: &str,
    i: usize,
    sizes: &BTreeMap<String, (u64, u64)>,
    limits: &Limits,
    progress: &Progress,
) -> Judged {
    let skipped = |note: String| Judged { verdict: StepVerdict::Skipped, slope: None, note: Some(note), run: None };
    progress.set_toolchain(&format!("{} {version}", plan.lineage));
    let command = match candidates.command(i) {
        Ok(c) => c,
        Err(e) => return skipped(e),
    };
    let spec = match ToolchainSpec::for_bisect(&plan.lineage, &command, &plan.flags, version) {
        Ok(s) => s,
        Err(e) => return skipped(format!("{e:#}")),
    };
    let tc = match toolchain::detect(&spec, &plan.scratch) {
        Ok(tc) => tc,
        Err(e) => return skipped(first_line(&format!("{e:#}"))),
    };
    let started_at = time::OffsetDateTime::now_utc();
    let mut measured: Vec<WorkloadRun> = Vec::new();
    let mut steepest: Option<(f64, String)> = None;
    let mut verdict = StepVerdict::Good;
    let mut notes = Vec::new();
    for w in &plan.workloads {
        let bin = match plan.cache.binary(&tc, w) {
            Ok(b) => b,
            Err(BuildError::Compiler(e)) => {
                return skipped(format!("{} failed to build: {}", w.name, first_line(&e.output)))
            }
            Err(e) => return skipped(format!("{}: {e}", w.name)),
        };
        let budget = match sizes.get(&w.name) {
            Some(&(start, max)) => Budget { start: Some(start), max: Some(max), ..plan.budget.clone() },
            None => plan.budget.clone(),
        };
        let mut run = measure::measure(&bin, w, &budget, limits, progress).run;
        let mut row = table::row(&plan.lineage, &run);
        if matches!(row.verdict(limits), Verdict::Unsure(_)) && run.failure.is_none() {
            run = measure::measure(&bin, w, &budget, limits, progress).run;
            row = table::row(&plan.lineage, &run);
        }
        if let Some(f) = &run.failure {
            return skipped(format!("{}: {}", w.name, table::failure_summary(f, w.unit)));
        }
        if let Ok(fit) = &row.fit {
            if steepest.as_ref().is_none_or(|(k, _)| fit.slope > *k) {
                steepest = Some((fit.slope, w.name.clone()));
            }
        }
        match row.verdict(limits) {
            Verdict::Over { .. } => verdict = StepVerdict::Bad,
            Verdict::Ok => {}
            Verdict::Unsure(why) => {
                notes.push(format!("{} unsure after measuring twice ({why})", w.name));
                if verdict == StepVerdict::Good {
                    verdict = StepVerdict::Skipped;
                }
            }
        }
        measured.push(run);
        if verdict == StepVerdict::Bad {
            break;
        }
    }
    let run = RunSubmission {
        run_id: Uuid::new_v4(),
        agent_version: crate::AGENT_VERSION.to_string(),
        started_at,
        host: crate::host::detect(),
        toolchain: tc.wire(),
        workloads: measured,
    };
    let note = (verdict == StepVerdict::Skipped).then(|| notes.join("; "));
    Judged { verdict, slope: steepest, note, run: run.validate().is_ok().then_some(run) }
}

/// A compiler's or a tool's output in a line: its first line, and the first error it reports when
/// that is another line.
fn first_line(s: &str) -> String {
    let mut lines = s.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    let line = match lines.find(|l| l.contains("error")) {
        Some(error) => format!("{} {error}", first.trim_end_matches(':')),
        None => first.to_string(),
    };
    line.chars().take(300).collect()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_halves_and_steps_around_skipped_candidates() {
        let none = BTreeSet::new();
        assert_eq!(next_candidate(0, 31, &none), Some(15));
        assert_eq!(next_candidate(15, 31, &none), Some(23));
        assert_eq!(next_candidate(18, 19, &none), None);
        let skipped = BTreeSet::from([15]);
        assert_eq!(next_candidate(0, 31, &skipped), Some(16));
        let skipped = BTreeSet::from([15, 16]);
        assert_eq!(next_candidate(0, 31, &skipped), Some(14));
        let all = BTreeSet::from([1, 2]);
        assert_eq!(next_candidate(0, 3, &all), None);
    }

    #[test]
    fn a_32_build_range_with_one_broken_build_takes_at_most_8_measurements() {
        // Builds from 19 on are bad; 15 cannot be built.
        let (mut lo, mut hi, mut skipped, mut measured) = (0, 31, BTreeSet::new(), 2);
        while let Some(i) = next_candidate(lo, hi, &skipped) {
            measured += 1;
            match i {
                15 => {
                    skipped.insert(i);
                }
                i if i >= 19 => hi = i,
                i => lo = i,
            }
        }
        assert_eq!((lo, hi), (18, 19));
        assert!(measured <= 8, "{measured}");
    }

    #[test]
    fn candidate_files_are_checked_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.txt");
        std::fs::write(&path, "# oldest first\n0.15.2=gcc\n\n0.16.0-dev.3+abc=gcc -O2\n").unwrap();
        assert_eq!(read_candidates(&path).unwrap()[1], ("0.16.0-dev.3+abc".into(), "gcc -O2".into()));
        for (text, why) in [
            ("0.1=gcc\njust gcc\n", "c.txt:2: expected VERSION=CC COMMAND"),
            ("0.1=gcc\n0.1=clang\n", "listed twice"),
            ("0.1=gcc\n0 1=gcc\n", "must be 1 to 128"),
            ("0.1=gcc\n", "at least two"),
            ("0.1=gcc\n0.2=\n", "empty"),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = format!("{:#}", read_candidates(&path).unwrap_err());
            assert!(e.contains(why), "{text:?}: {e}");
        }
    }
}
