//! A workload's profile: where its instructions go at one size, read from Valgrind's callgrind.
//!
//! The harness binary runs once at the size under callgrind, collecting inside the measured
//! function (`sw_run`) and what it calls, as the counted measure does; a command workload runs
//! once with every process it starts (`--trace-children`), each process's counts merged. Each function's own
//! instructions, its inclusive ones (its own and its calls'), its callers and their call sites
//! (where the binary has line information) are read from callgrind's output
//! (<https://valgrind.org/docs/manual/cl-format.html>), and cut to the functions that cover 99 %
//! of the instructions or the first 50 ([`slopewatch_core::profile`]). Names callgrind left
//! mangled are demangled (Rust, then C++). A stripped program's functions, which callgrind knows
//! only by address, are named by their code (`profile/addresses.rs`).
//!
//! The size is a quarter of the workload's own first size (or `--start-size`), [`size`]: the same
//! for every toolchain and version, so a good version's profile and a bad one's compare like for
//! like, and small enough that a quadratic version profiles in a fraction of a second. The
//! engine takes a toolchain's profiles after its measurements, several at once ([`ProfileWanted`]).

mod addresses;

use crate::artifact::{self, demangle, CodeNames, Fingerprint};
use crate::builds::fingerprints;
use crate::builds::toolchain::DetectedToolchain;
use crate::builds::workloads::Workload;
use crate::measure::meter;
use addresses::AddressNamer;
use slopewatch_core::profile::{Caller, Profile, ProfiledFunction, COVERED, MAX_CALLERS, MAX_FUNCTIONS};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Profiles `w`, built as `binary`, at `size`: one run under callgrind, at most `limit` long. A
/// harness workload is profiled inside its measured function; a command workload as its whole
/// process and every process it starts.
pub fn capture(binary: &Path, w: &Workload, size: u64, limit: Duration) -> Result<Tallies, String> {
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
    Ok(Tallies::read(&texts))
}

/// Profiles the workloads of a measurement that want one: those over a limit, or every one with
/// `--profile`; each toolchain's workload once, whatever measures it is judged on. Without
/// Valgrind it says so once and profiles nothing. A profile of a stripped program names the
/// functions callgrind knew only by address with the toolchain's libc fingerprints, built (or
/// read from the cache) the first time one needs them.
pub struct Profiler {
    all: bool,
    /// The agent's cache, where the fingerprints are kept.
    root: PathBuf,
    /// Whether Valgrind is there, once asked.
    available: Option<bool>,
    done: HashMap<(String, String), Option<Profile>>,
    /// The fingerprints of each toolchain's libc (by its fingerprint), or why there are none.
    prints: HashMap<String, Result<Vec<Fingerprint>, String>>,
}

/// Longest one profile may take.
pub const LIMIT: Duration = Duration::from_secs(120);

/// How far below its first size a workload is profiled: a profile reports shares, not counts, and
/// a quarter of the first size is the smallest the counted sweep measures (`Budget::sizes_for`),
/// where fixed costs no longer hide the growth. A quadratic version profiles 16 times faster there
/// than at the first size.
pub const BELOW_START: u64 = 4;

/// The size `w` is profiled at under `budget`: a quarter of its first size (or `--start-size`), at
/// least 1. It depends on the workload and the flags alone, never on what a version measured, so
/// every version of a lineage is profiled at the same size and their profiles compare.
pub fn size(w: &Workload, budget: &crate::measure::Budget) -> u64 {
    let start = budget.start.unwrap_or(w.start).min(budget.max.unwrap_or(w.max));
    start.div_ceil(BELOW_START).max(1)
}

/// Whether a workload's profile is to be taken.
pub enum ProfileWanted {
    /// Not profiled: under its limits, or Valgrind is not there.
    No,
    /// Profiled already, by another measure of the toolchain.
    Done(Option<Profile>),
    /// To be captured, then finished with [`Profiler::finish`].
    Capture,
}

impl Profiler {
    /// A profiler of every workload (`all`) or of those over a limit, keeping its fingerprints
    /// under the agent's cache `root`.
    pub fn new(all: bool, root: &Path) -> Profiler {
        Profiler { all, root: root.to_path_buf(), available: None, done: HashMap::new(), prints: HashMap::new() }
    }

    /// Whether `toolchain`'s `w` is profiled: when it is `over` a limit or every workload is, and
    /// Valgrind is there; `note` says once when it is not.
    pub fn wants(&mut self, toolchain: &str, w: &Workload, over: bool, note: &dyn Fn(&str)) -> ProfileWanted {
        if !(self.all || over) {
            return ProfileWanted::No;
        }
        let available = *self.available.get_or_insert_with(|| match meter::valgrind() {
            Ok(_) => true,
            Err(e) => {
                note(&format!("no profiles: {e:#}; the run goes on without them"));
                false
            }
        });
        if !available {
            return ProfileWanted::No;
        }
        match self.done.get(&(toolchain.to_string(), w.name.clone())) {
            Some(done) => ProfileWanted::Done(done.clone()),
            None => ProfileWanted::Capture,
        }
    }

    /// The profile of `tc`'s `w`, built as `binary`, from what its capture at `size` gave: its
    /// functions named where callgrind knew only addresses; `note` says what went without one,
    /// or without names, and why.
    pub fn finish(
        &mut self,
        tc: &DetectedToolchain,
        binary: &Path,
        w: &Workload,
        size: u64,
        captured: Result<Tallies, String>,
        note: &dyn Fn(&str),
    ) -> Option<Profile> {
        let toolchain = &tc.spec.name;
        let profile = match captured {
            Ok(mut tallies) => {
                if let Err(e) = self.name_addresses(&mut tallies, tc, binary, note) {
                    note(&format!("{toolchain} {}: its profile keeps callgrind's addresses: {e}", w.name));
                }
                Some(tallies.profile(size))
            }
            Err(e) => {
                note(&format!("{toolchain} {}: no profile: {e}", w.name));
                None
            }
        };
        self.done.insert((toolchain.to_string(), w.name.clone()), profile.clone());
        profile
    }

    /// Names what `tallies` know only by an address in `binary`, `tc`'s build, when there is
    /// such a thing: a profile of a program with its symbols costs nothing more.
    fn name_addresses(
        &mut self,
        tallies: &mut Tallies,
        tc: &DetectedToolchain,
        binary: &Path,
        note: &dyn Fn(&str),
    ) -> Result<(), String> {
        let ours = std::fs::canonicalize(binary).unwrap_or_else(|_| binary.to_path_buf());
        let Some(object) = tallies
            .objects_with_addresses()
            .into_iter()
            .find(|o| std::fs::canonicalize(o).unwrap_or_else(|_| PathBuf::from(o)) == ours)
            .map(str::to_string)
        else {
            return Ok(());
        };
        if !self.prints.contains_key(&tc.fingerprint) {
            note(&format!(
                "{}: a profiled program keeps no names; taking the fingerprints of its libc to name them (once per \
                 toolchain, cached)",
                tc.spec.name
            ));
        }
        let prints = self
            .prints
            .entry(tc.fingerprint.clone())
            .or_insert_with(|| fingerprints::of(tc, &self.root).map_err(|e| format!("{e:#}")))
            .as_ref()
            .map_err(|e| format!("its libc could not be fingerprinted: {e}"))?;
        let code = artifact::code_names(binary, prints).map_err(|e| e.to_string())?;
        tallies.name_addresses(&object, &code);
        Ok(())
    }
}

/// A function as callgrind's outputs name it. A name that is only an address (a stripped
/// program's) is kept with its object too, so that one address in two programs stays two
/// functions until [`Tallies::name_addresses`] names it.
#[derive(Clone, PartialEq, Eq, Hash)]
struct FunctionId {
    name: String,
    object: Option<String>,
}

impl FunctionId {
    /// `name` in `object`.
    fn new(name: String, object: Option<&String>) -> FunctionId {
        let object = addresses::address(&name).and(object.cloned());
        FunctionId { name, object }
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
    callers: HashMap<FunctionId, (u64, u64, Option<String>)>,
}

/// What every function of callgrind's outputs took, before the cut.
pub struct Tallies {
    by_function: HashMap<FunctionId, Tally>,
    total: u64,
}

impl Tallies {
    /// The tallies of callgrind's outputs `texts` (each a dump, of any process).
    pub fn read(texts: &[String]) -> Tallies {
        let mut tallies = Tallies { by_function: HashMap::new(), total: 0 };
        for text in texts {
            tallies.total += read_one(text, &mut tallies.by_function);
        }
        tallies
    }

    /// The objects (as callgrind names them) that hold functions named only by an address.
    pub fn objects_with_addresses(&self) -> BTreeSet<&str> {
        self.by_function.keys().filter_map(|f| f.object.as_deref()).collect()
    }

    /// Names the functions callgrind named by an address in `object`, the program whose code
    /// `code` names: each by the function that holds it, so the blocks of one function are one
    /// function again. A jump between two of its blocks, which callgrind counted as a call, is no
    /// call: its instructions are the function's own already.
    pub fn name_addresses(&mut self, object: &str, code: &CodeNames) {
        let ours = |f: &FunctionId| f.object.as_deref() == Some(object);
        let seen: Vec<u64> =
            self.by_function.keys().filter(|f| ours(f)).filter_map(|f| addresses::address(&f.name)).collect();
        let program = Path::new(object).file_name().map_or_else(|| object.into(), |n| n.to_string_lossy());
        let namer = AddressNamer::new(code, &program, &seen);
        let renamed = |f: &FunctionId| {
            let name = addresses::address(&f.name).filter(|_| ours(f)).and_then(|a| namer.name(a));
            name.map_or_else(|| f.clone(), |name| FunctionId { name, object: None })
        };
        let mut merged: HashMap<FunctionId, Tally> = HashMap::new();
        let mut within: HashMap<FunctionId, u64> = HashMap::new();
        for (f, t) in std::mem::take(&mut self.by_function) {
            let to = renamed(&f);
            let m = merged.entry(to.clone()).or_default();
            m.own += t.own;
            m.calls_out += t.calls_out;
            m.file = m.file.take().or(t.file);
            for (caller, (calls, inclusive, site)) in t.callers {
                let from = renamed(&caller);
                if from == to {
                    *within.entry(to.clone()).or_default() += inclusive;
                    continue;
                }
                let entry = m.callers.entry(from).or_insert((0, 0, None));
                if inclusive > entry.1 || entry.2.is_none() {
                    entry.2 = site.or(entry.2.take());
                }
                entry.0 += calls;
                entry.1 += inclusive;
            }
        }
        for (f, inclusive) in within {
            if let Some(t) = merged.get_mut(&f) {
                t.calls_out = t.calls_out.saturating_sub(inclusive);
            }
        }
        self.by_function = merged;
    }

    /// The profile at `size`: the functions that cover 99 % of the instructions, or the first 50.
    pub fn profile(self, size: u64) -> Profile {
        let total = self.total;
        let mut functions: Vec<(String, Tally)> =
            self.by_function.into_iter().filter(|(_, t)| t.own > 0).map(|(f, t)| (f.name, t)).collect();
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
                .map(|(f, (calls, inclusive, site))| Caller { name: demangle(&f.name), calls, inclusive, site })
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
}

/// Adds one callgrind output to `tallies`; returns its total.
fn read_one(text: &str, tallies: &mut HashMap<FunctionId, Tally>) -> u64 {
    let mut files: HashMap<String, String> = HashMap::new();
    let mut names: HashMap<String, String> = HashMap::new();
    let mut objects: HashMap<String, String> = HashMap::new();
    let (mut fn_file, mut file) = (None::<String>, None::<String>);
    let mut function = FunctionId { name: String::new(), object: None };
    // The object of the function, and of the next callee where it is another (`cob=`).
    let (mut object, mut callee_object) = (None::<String>, None::<String>);
    let mut callee: Option<FunctionId> = None;
    let mut call: Option<(FunctionId, u64)> = None;
    let mut line: i64 = 0;
    let mut total = 0;
    for l in text.lines() {
        if let Some((key, value)) = l.split_once('=') {
            match key {
                "ob" => object = Some(compressed(&mut objects, value)),
                "cob" => callee_object = Some(compressed(&mut objects, value)),
                "fl" => {
                    fn_file = Some(compressed(&mut files, value));
                    file = fn_file.clone();
                }
                "fi" | "fe" => file = Some(compressed(&mut files, value)),
                "fn" => {
                    function = FunctionId::new(compressed(&mut names, value), object.as_ref());
                    file = fn_file.clone();
                    let t = tallies.entry(function.clone()).or_default();
                    if t.file.is_none() {
                        t.file = fn_file.clone().filter(|f| f != "???");
                    }
                }
                "cfi" | "cfl" => {
                    compressed(&mut files, value);
                }
                "cfn" => {
                    let name = compressed(&mut names, value);
                    let in_object = callee_object.take().or_else(|| object.clone());
                    callee = Some(FunctionId::new(name, in_object.as_ref()));
                }
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
        let p = Tallies::read(&[OUTPUT.to_string()]).profile(65536);
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
        let p = Tallies::read(&[text]).profile(1);
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
        assert_eq!(Tallies::read(&[many]).profile(1).functions.len(), MAX_FUNCTIONS);
    }

    /// Callgrind's output for a stripped program (`/tmp/spans`) loaded at `base`: its `main`
    /// (which only the unwind tables know) calls `strspn` 100 times, and `strspn`'s loop is a
    /// block callgrind took for a function of its own, entered from its first block; `main` also
    /// runs code nothing names, and calls into a stripped library (`libz.so`).
    fn stripped(base: u64) -> String {
        let at = |a: u64| format!("{:#018x}", base + a);
        format!(
            "events: Ir
summary: 1000000

ob=(1) /tmp/spans
fl=(1) ???
fn=(1) {main}
0 50000
cfn=(2) {strspn}
calls=100 0
0 900000
cob=(2) /lib/libz.so
cfn=(4) 0x0000000000001000
calls=1 0
0 20000
fn=(2)
0 200000
cfn=(3) {strspn_loop}
calls=100 0
0 700000
fn=(3)
0 700000
fn=(5) {unnamed}
0 30000
ob=(2)
fn=(4)
0 20000
",
            main = at(0x1000),
            strspn = at(0x1a20),
            strspn_loop = at(0x1a44),
            unnamed = at(0x3000),
        )
    }

    /// What names the stripped program's code, its file's addresses from `base`: `strspn`
    /// recognised by its fingerprint, `main` known to the unwind tables alone; nothing knows
    /// `base + 0x3000`. A `fixed` program runs at its file's addresses.
    fn spans(base: u64, fixed: bool) -> CodeNames {
        let function = |start: u64, end: u64, name: Option<&str>| (base + start, base + end, name.map(str::to_string));
        CodeNames {
            fixed,
            functions: vec![
                function(0x1000, 0x1080, None),
                function(0x1a20, 0x1aa0, Some("strspn")),
                function(0x2000, 0x2040, None),
            ],
        }
    }

    /// The profile of `text` with the addresses in `/tmp/spans` named by `code`.
    fn named(text: String, code: &CodeNames) -> Profile {
        let mut tallies = Tallies::read(&[text]);
        assert_eq!(tallies.objects_with_addresses(), BTreeSet::from(["/lib/libz.so", "/tmp/spans"]));
        tallies.name_addresses("/tmp/spans", code);
        tallies.profile(4096)
    }

    #[test]
    fn the_blocks_of_a_stripped_function_are_one_function_under_its_recognised_name() {
        let p = named(stripped(0x40_0000), &spans(0x40_0000, true));
        let names: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["strspn", "0x401000–0x40107f in spans", "0x403000 in spans", "0x0000000000001000"],
            "the library's address is its own"
        );
        let strspn = &p.functions[0];
        assert_eq!((strspn.own, strspn.inclusive), (900_000, 900_000), "its loop's jump is no call: {strspn:?}");
        assert_eq!(
            strspn.callers,
            [Caller { name: "0x401000–0x40107f in spans".into(), calls: 100, inclusive: 900_000, site: None }],
            "not a caller of itself"
        );
        let main = &p.functions[1];
        assert_eq!((main.own, main.inclusive), (50_000, 970_000));
        assert_eq!(p.total, 1_000_000);
    }

    #[test]
    fn a_moved_program_is_named_once_its_load_bias_is_inferred() {
        // Valgrind loads a PIE at 0x108000.
        let p = named(stripped(0x10_8000), &spans(0, false));
        let names: Vec<&str> = p.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["strspn", "0x1000–0x107f in spans", "0x3000 in spans", "0x0000000000001000"]);
        assert_eq!((p.functions[0].own, p.functions[0].inclusive), (900_000, 900_000));
    }

    #[test]
    fn without_names_for_its_code_a_profile_keeps_callgrinds_addresses() {
        let p = Tallies::read(&[stripped(0x40_0000)]).profile(4096);
        assert_eq!(p.functions[0].name, "0x0000000000401a44");
        assert_eq!(p.functions[0].callers[0].name, "0x0000000000401a20");
    }
}
