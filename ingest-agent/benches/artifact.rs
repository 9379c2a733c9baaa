//! The time an exposure scan takes to read one large artifact: every catalogue function looked
//! for, the code decoded once, the callers' lines read from DWARF. Prints the artifact's size, the
//! median and fastest of a few scans, the megabytes read per second, and what was found; the
//! target is under 2 s for a 20 MB binary, printed beside, never asserted.
//!
//! `cargo bench -p slopewatch-agent --bench artifact -- [ARTIFACT] [--rounds N] [--show FUNCTION]…
//! [--prints FILE]`
//!
//! `--show` prints a function's callers with their lines. `--prints` searches the code for the
//! fingerprints of a toolchain's libc as well, as a scan of a stripped artifact does: FILE is
//! one the agent keeps under its cache (`fingerprints/FINGERPRINT.json`).
//!
//! Without an artifact: the largest of the workspace's built server and agent binaries (release,
//! then debug) and this bench's own binary, which is always there.

use slopewatch_agent::artifact;
use slopewatch_agent::builds::{contracts, fingerprints};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The target: a 20 MB binary scanned in under 2 s.
const TARGET_SECONDS_PER_20_MB: f64 = 2.0;

fn main() {
    let mut artifact_path = None;
    let mut rounds = 5;
    let mut show = Vec::new();
    let mut prints_path = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--show" => show.push(args.next().expect("--show needs a function")),
            "--prints" => prints_path = Some(PathBuf::from(args.next().expect("--prints needs a file"))),
            "--rounds" => rounds = args.next().and_then(|n| n.parse().ok()).expect("--rounds needs a number"),
            // cargo bench passes --bench to every bench binary.
            "--bench" => {}
            path => artifact_path = Some(PathBuf::from(path)),
        }
    }
    let path = artifact_path.unwrap_or_else(largest_binary);
    let size = std::fs::metadata(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).len();
    let functions = contracts::functions();
    let prints = match &prints_path {
        Some(p) => fingerprints::read(p).unwrap_or_else(|e| panic!("{e:#}")),
        None => Vec::new(),
    };
    let naming = artifact::Naming { prints: &prints, symbols: None };

    let mut times = Vec::new();
    let mut found = None;
    for _ in 0..rounds.max(1) {
        let start = Instant::now();
        let scanned = artifact::scan(&path, &functions, naming).unwrap_or_else(|e| panic!("{e}"));
        times.push(start.elapsed());
        found = Some(scanned);
    }
    let found = found.expect("one round at least");
    let start = Instant::now();
    let libc = artifact::identify_libc(&path).unwrap_or_else(|e| panic!("{e}"));
    let identify = start.elapsed();

    times.sort();
    let median = times[times.len() / 2];
    let megabytes = size as f64 / 1e6;
    let sites: u32 = found.uses.iter().map(|u| u.call_sites).sum();
    let callers: usize = found.uses.iter().map(|u| u.callers.len()).sum();
    let located = found.uses.iter().flat_map(|u| &u.callers).filter(|c| c.location.is_some()).count();
    println!("artifact     {}", path.display());
    println!(
        "size         {megabytes:.1} MB ({} {}, libc {}: {})",
        found.arch,
        found.linkage.as_str(),
        libc.name,
        libc.evidence
    );
    println!(
        "scan         median {:.3} s, fastest {:.3} s over {} rounds ({:.0} MB/s)",
        secs(median),
        secs(times[0]),
        times.len(),
        megabytes / secs(median)
    );
    println!(
        "target       {:.2} s for this size ({TARGET_SECONDS_PER_20_MB} s per 20 MB): median at {:.2} of it",
        TARGET_SECONDS_PER_20_MB * megabytes / 20.0,
        secs(median) / (TARGET_SECONDS_PER_20_MB * megabytes / 20.0)
    );
    println!("identify     {:.3} s (libc only)", secs(identify));
    if prints_path.is_some() {
        println!(
            "fingerprints {} searched for, {} catalogue functions recognised by code",
            prints.len(),
            found.by_code.len()
        );
    }
    println!(
        "found        {} catalogue functions used, {} present unused, {sites} call sites, {callers} callers ({located} with a line)",
        found.uses.len(),
        found.unused.len()
    );
    let mut busiest: Vec<_> = found.uses.iter().collect();
    busiest.sort_by(|a, b| b.call_sites.cmp(&a.call_sites).then_with(|| a.function.cmp(&b.function)));
    for u in busiest.iter().take(8) {
        let referenced = if u.referenced { ", address taken" } else { "" };
        println!("  {:<12} {:>6} call sites, {:>5} callers{referenced}", u.function, u.call_sites, u.callers.len());
    }
    for u in found.uses.iter().filter(|u| show.contains(&u.function)) {
        println!("{} ({:?}): {} call sites", u.function, u.aliases, u.call_sites);
        for c in &u.callers {
            let libc = if c.in_libc { ", in the libc" } else { "" };
            println!("  {} ({}, {}{libc})", c.name, c.sites, c.location.as_deref().unwrap_or("no line"));
        }
    }
}

/// The largest of the workspace's built binaries and this bench's own.
fn largest_binary() -> PathBuf {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    let built = ["release/slopewatch", "release/slopewatch-agent", "debug/slopewatch", "debug/slopewatch-agent"]
        .iter()
        .map(|p| target.join(p));
    built
        .chain(std::env::current_exe().ok())
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.len(), p)))
        .max()
        .map(|(_, p)| p)
        .expect("this bench's own binary is there")
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}
