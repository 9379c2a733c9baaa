//! A workload's profile: where its instructions go at one size, read from Valgrind's callgrind.
//!
//! The harness binary runs once at the size under callgrind, collecting inside the measured
//! function (`sw_run`) and what it calls, as the counted measure does; a command workload runs
//! once with every process it starts (`--trace-children`), each process's counts merged. Each function's own
//! instructions, its inclusive ones (its own and its calls'), its callers and their call sites
//! (where the binary has line information) are read from callgrind's output
//! (<https://valgrind.org/docs/manual/cl-format.html>), and cut to the functions that cover 99 %
//! of the instructions or the first 50 ([`slopewatch_core::profile`]). Names callgrind left
//! mangled are demangled (Rust, then C++).
//!
//! The size is the workload's own first size (or `--start-size`): the same for every toolchain
//! and version, so a good version's profile and a bad one's compare like for like, and small
//! enough that a quadratic version profiles in seconds.

use crate::artifact::demangle;
use crate::builds::workloads::Workload;
use crate::measure::meter;
use slopewatch_core::profile::{Caller, Profile, ProfiledFunction, COVERED, MAX_CALLERS, MAX_FUNCTIONS};
use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Profiles `w`, built as `binary`, at `size`: one run under callgrind, at most `limit` long. A
/// harness workload is profiled inside its measured function; a command workload as its whole
/// process and every process it starts.
pub fn capture(binary: &Path, w: &Workload, size: u64, limit: Duration) -> Result<Profile, String> {
    let dir = meter::counts_dir()?;
    let mut cmd = match w.command() {
        Some(c) => {
            let argv = c.argv(binary, size);
            let mut cmd =
                meter::under_valgrind(Path::new(&argv[0]), dir.path(), false).map_err(|e| format!("{e:#}"))?;
            cmd.args(&argv[1..]).current_dir(c.dir()).env("SLOPEWATCH_SIZE", size.to_string());
            cmd
        }
        None => {
            let mut cmd = meter::under_valgrind(binary, dir.path(), true).map_err(|e| format!("{e:#}"))?;
            let mode = meter::harness_mode(slopewatch_core::wire::Metric::InstructionsValgrind);
            cmd.arg(size.to_string()).arg("1").env("SLOPEWATCH_MEASURE", mode);
            if w.is_probe() {
                cmd.env("SLOPEWATCH_PROBE", &w.name);
            }
            cmd
        }
    };
    let mut child =
        cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().map_err(|e| format!("cannot start Valgrind: {e}"))?;
    let began = Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| format!("cannot wait for Valgrind: {e}"))? {
            Some(status) => break status,
            None if began.elapsed() > limit => {
                child.kill().ok();
                child.wait().ok();
                return Err(format!("the profile at {size} took longer than {} s", limit.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    if !status.success() {
        return Err(format!("the workload under callgrind exited with {status}"));
    }
    let mut texts = Vec::new();
    for e in std::fs::read_dir(dir.path()).map_err(|e| format!("cannot read callgrind's output: {e}"))?.flatten() {
        texts.push(std::fs::read_to_string(e.path()).map_err(|e| format!("cannot read callgrind's output: {e}"))?);
    }
    Ok(read(&texts, size))
}

/// Profiles the workloads of a measurement that want one: those over a limit, or every one with
/// `--profile`; each toolchain's workload once, whatever measures it is judged on. Without
/// Valgrind it says so once and profiles nothing.
pub struct Profiler {
    all: bool,
    /// Whether Valgrind is there, once asked.
    available: Option<bool>,
    done: HashMap<(String, String), Option<Profile>>,
}

/// Longest one profile may take.
const PROFILE_LIMIT: Duration = Duration::from_secs(120);

impl Profiler {
    pub fn new(all: bool) -> Profiler {
        Profiler { all, available: None, done: HashMap::new() }
    }

    /// The profile of `toolchain`'s `w`, built as `binary`, at `size`, when it is `over` a limit or
    /// every workload is profiled; `note` says what went without one, and why.
    pub fn of(
        &mut self,
        toolchain: &str,
        binary: &Path,
        w: &Workload,
        size: u64,
        over: bool,
        note: &dyn Fn(&str),
    ) -> Option<Profile> {
        if !(self.all || over) {
            return None;
        }
        let available = *self.available.get_or_insert_with(|| match meter::valgrind() {
            Ok(_) => true,
            Err(e) => {
                note(&format!("no profiles: {e:#}; the run goes on without them"));
                false
            }
        });
        if !available {
            return None;
        }
        let key = (toolchain.to_string(), w.name.clone());
        if let Some(done) = self.done.get(&key) {
            return done.clone();
        }
        let profile = match capture(binary, w, size, PROFILE_LIMIT) {
            Ok(p) => Some(p),
            Err(e) => {
                note(&format!("{toolchain} {}: no profile: {e}", w.name));
                None
            }
        };
        self.done.insert(key, profile.clone());
        profile
    }
}

/// What one function took, summed over every dump and process.
#[derive(Default)]
struct Tally {
    own: u64,
    /// Instructions of the calls it made.
    calls_out: u64,
    file: Option<String>,
    /// By caller: (calls, inclusive instructions, site of the costliest call).
    callers: HashMap<String, (u64, u64, Option<String>)>,
}

/// The profile at `size` of callgrind's outputs `texts` (each a dump, of any process).
pub fn read(texts: &[String], size: u64) -> Profile {
    let mut tallies: HashMap<String, Tally> = HashMap::new();
    let mut total = 0;
    for text in texts {
        total += read_one(text, &mut tallies);
    }
    let mut functions: Vec<(String, Tally)> = tallies.into_iter().filter(|(_, t)| t.own > 0).collect();
    functions.sort_by(|a, b| b.1.own.cmp(&a.1.own).then_with(|| a.0.cmp(&b.0)));
    let mut kept = Vec::new();
    let mut covered = 0u64;
    for (name, t) in functions {
        if kept.len() == MAX_FUNCTIONS || covered as f64 >= COVERED * total as f64 {
            break;
        }
        covered += t.own;
        let mut callers: Vec<Caller> = t
            .callers
            .into_iter()
            .map(|(name, (calls, inclusive, site))| Caller { name: demangle(&name), calls, inclusive, site })
            .collect();
        callers.sort_by(|a, b| b.inclusive.cmp(&a.inclusive).then_with(|| a.name.cmp(&b.name)));
        callers.truncate(MAX_CALLERS);
        kept.push(ProfiledFunction {
            name: demangle(&name),
            file: t.file,
            own: t.own,
            inclusive: t.own + t.calls_out,
            callers,
        });
    }
    Profile { size, total, functions: kept }
}

/// Adds one callgrind output to `tallies`; returns its total.
fn read_one(text: &str, tallies: &mut HashMap<String, Tally>) -> u64 {
    let mut files: HashMap<String, String> = HashMap::new();
    let mut names: HashMap<String, String> = HashMap::new();
    let (mut function, mut fn_file, mut file) = (String::new(), None::<String>, None::<String>);
    let mut callee: Option<String> = None;
    let mut call: Option<(String, u64)> = None;
    let mut line: i64 = 0;
    let mut total = 0;
    for l in text.lines() {
        if let Some((key, value)) = l.split_once('=') {
            match key {
                "fl" => {
                    fn_file = Some(compressed(&mut files, value));
                    file = fn_file.clone();
                }
                "fi" | "fe" => file = Some(compressed(&mut files, value)),
                "fn" => {
                    function = compressed(&mut names, value);
                    file = fn_file.clone();
                    let t = tallies.entry(function.clone()).or_default();
                    if t.file.is_none() {
                        t.file = fn_file.clone().filter(|f| f != "???");
                    }
                }
                "cfi" | "cfl" => {
                    compressed(&mut files, value);
                }
                "cfn" => callee = Some(compressed(&mut names, value)),
                "calls" => {
                    let count = value.split_whitespace().next().and_then(|c| c.parse().ok()).unwrap_or(0);
                    call = callee.clone().map(|c| (c, count));
                }
                _ => {}
            }
            continue;
        }
        if let Some(v) = l.strip_prefix("summary:").or_else(|| l.strip_prefix("totals:")) {
            if l.starts_with("summary:") || total == 0 {
                total = v.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(total);
            }
            continue;
        }
        let mut words = l.split_whitespace();
        let Some(position) = words.next().filter(|p| p.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c)))
        else {
            continue;
        };
        line = match position {
            "*" => line,
            p if p.starts_with('+') => line + p[1..].parse::<i64>().unwrap_or(0),
            p if p.starts_with('-') => line - p[1..].parse::<i64>().unwrap_or(0),
            p => p.parse().unwrap_or(line),
        };
        let cost: u64 = words.next().and_then(|c| c.parse().ok()).unwrap_or(0);
        match call.take() {
            Some((to, count)) => {
                let site = file.as_ref().filter(|f| *f != "???" && line > 0).map(|f| format!("{f}:{line}"));
                tallies.entry(function.clone()).or_default().calls_out += cost;
                let entry = tallies.entry(to).or_default().callers.entry(function.clone()).or_insert((0, 0, None));
                if cost > entry.1 / entry.0.max(1) || entry.2.is_none() {
                    entry.2 = site.or(entry.2.take());
                }
                entry.0 += count;
                entry.1 += cost;
            }
            None => tallies.entry(function.clone()).or_default().own += cost,
        }
    }
    total
}

/// A compressed name, `(id) name` defining `id` or `(id)` naming it again, or a plain name.
fn compressed(table: &mut HashMap<String, String>, value: &str) -> String {
    let value = value.trim();
    match value.strip_prefix('(').and_then(|v| v.split_once(')')) {
        Some((id, rest)) if rest.trim().is_empty() => table.get(id).cloned().unwrap_or_else(|| format!("({id})")),
        Some((id, rest)) => {
            table.insert(id.to_string(), rest.trim().to_string());
            rest.trim().to_string()
        }
        None => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Callgrind's output for a loop (`main` → `sw_run`) calling `strspn` 8,192 times.
    const OUTPUT: &str = "# callgrind format
version: 1
positions: line
events: Ir
summary: 1000000

ob=(1) /tmp/strspn
fl=(1) /src/bench.c
fn=(1) sw_run
10 5000
cfi=(2) /lib/c/string.zig
cfn=(2) strspn
calls=8192 146
12 980000
fl=(2)
fn=(2) strspn
146 900000
fi=(3) /lib/std/mem.zig
+4 80000
fl=(4) ???
fn=(3) _ZN4core3fmt5write17h0123456789abcdefE
0 4000
";

    #[test]
    fn own_inclusive_callers_and_sites_are_read_and_names_demangled() {
        let p = read(&[OUTPUT.to_string()], 65536);
        assert_eq!((p.size, p.total), (65536, 1_000_000));
        let names: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["strspn", "sw_run", "core::fmt::write"]);
        let strspn = &p.functions[0];
        assert_eq!(
            (strspn.own, strspn.inclusive, strspn.file.as_deref()),
            (980_000, 980_000, Some("/lib/c/string.zig"))
        );
        assert_eq!(
            strspn.callers,
            [Caller { name: "sw_run".into(), calls: 8192, inclusive: 980_000, site: Some("/src/bench.c:12".into()) }]
        );
        let sw_run = &p.functions[1];
        assert_eq!((sw_run.own, sw_run.inclusive), (5000, 985_000));
        assert_eq!(p.functions[2].file, None, "??? is no file");
        let (hottest, share) = p.hottest().unwrap();
        assert_eq!((hottest.name.as_str(), share), ("strspn", 0.98));
    }

    #[test]
    fn the_cut_keeps_what_covers_99_percent_or_50_functions() {
        let mut text = String::from("events: Ir\nsummary: 1000\nfl=(1) a.c\n");
        text.push_str("fn=(1) big\n1 985\n");
        for i in 0..15 {
            text.push_str(&format!("fn=(f{i}) small{i}\n1 1\n"));
        }
        let p = read(&[text], 1);
        assert_eq!(
            p.functions.len(),
            6,
            "985 + five of 1 reach 990: {:?}",
            p.functions.iter().map(|f| &f.name).collect::<Vec<_>>()
        );
        let mut many = String::from("events: Ir\nsummary: 100\nfl=(1) a.c\n");
        for i in 0..100 {
            many.push_str(&format!("fn=(f{i}) f{i}\n1 1\n"));
        }
        assert_eq!(read(&[many], 1).functions.len(), MAX_FUNCTIONS);
    }
}
