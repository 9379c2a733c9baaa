//! From symbols and decoded sites to what a scan reports: which catalogue functions an artifact
//! carries or imports, and for each, its call sites, whether its address is taken, and who calls
//! it from where.

use super::elf::{Function, Image};
use super::lines::DebugSections;
use super::names::{catalogue_name, demangle, is_libc_internal, is_zig_libc, underscored, unversioned, zig_alias};
use super::registers::Sites;
use super::slots::Wanted;
use super::{Caller, FunctionUse};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};

/// The catalogue functions an artifact carries or imports.
pub struct Present<'f> {
    /// Each body or import that is a catalogue function: its catalogue name and its names.
    pub found: Vec<FoundBody<'f>>,
    /// What the decoder looks for, by index in `found`.
    pub wanted: Wanted,
    /// The catalogue name of each function (by its index in [`Image::functions`]) that has one.
    named: HashMap<usize, &'f str>,
}

/// One catalogue function's body in the artifact, or its import.
pub struct FoundBody<'f> {
    /// Its catalogue name.
    pub function: &'f str,
    /// Every name it carries: the symbols at its address, or the import's name.
    pub aliases: Vec<String>,
}

/// The catalogue functions `image` carries (its defined functions) or imports.
pub fn present<'f>(image: &Image<'_>, functions: &[&'f str]) -> Present<'f> {
    let mut named: HashMap<usize, &'f str> = HashMap::new();
    for (i, f) in image.functions.iter().enumerate() {
        if let Some(name) = strongest(f, functions) {
            named.insert(i, name);
        }
    }
    // A bare `__name` alias stands for `name` only where no other body carries `name`.
    let beside: Vec<&str> = named.values().copied().collect();
    for (i, f) in image.functions.iter().enumerate() {
        if let Entry::Vacant(unnamed) = named.entry(i) {
            if let Some(name) = f.names.iter().find_map(|n| underscored(n.text, functions, &beside)) {
                unnamed.insert(name);
            }
        }
    }
    let mut found = Vec::new();
    let mut wanted = Wanted { at: HashMap::new(), imports: HashMap::new() };
    let mut by_address: Vec<(&usize, &&'f str)> = named.iter().collect();
    by_address.sort();
    for (&i, &function) in by_address {
        let f = &image.functions[i];
        wanted.at.insert(f.address, found.len());
        found.push(FoundBody { function, aliases: f.names.iter().map(|n| n.text.to_string()).collect() });
    }
    let imported: Vec<&str> = image.imports.iter().filter_map(|i| catalogue_name(i.name, functions)).collect();
    for (index, import) in image.imports.iter().enumerate() {
        let Some(function) =
            catalogue_name(import.name, functions).or_else(|| underscored(import.name, functions, &imported))
        else {
            continue;
        };
        wanted.imports.insert(index, found.len());
        if import.address != 0 {
            wanted.at.insert(import.address, found.len());
        }
        found.push(FoundBody { function, aliases: vec![unversioned(import.name).to_string()] });
    }
    Present { found, wanted, named }
}

/// The catalogue name one body goes by: of the catalogue names its symbols carry, the one Zig's
/// `c.*` alias gives, else a global's, else the shortest.
fn strongest<'f>(f: &Function<'_>, functions: &[&'f str]) -> Option<&'f str> {
    f.names
        .iter()
        .filter_map(|n| {
            let function = catalogue_name(n.text, functions)?;
            let rank = if is_zig_libc(n.text) {
                0
            } else if n.global {
                1
            } else {
                2
            };
            Some((rank, function.len(), function))
        })
        .min()
        .map(|(_, _, function)| function)
}

/// What one catalogue function gathers across its bodies and imports.
#[derive(Default)]
struct UseTally {
    aliases: Vec<String>,
    call_sites: u32,
    referenced: bool,
    /// Per calling function (by index in [`Image::functions`]; none where no symbol covers the
    /// site): its sites and its first site.
    callers: HashMap<Option<usize>, (u32, u64)>,
}

/// The uses and the unused of the catalogue functions `present` found, given the `sites` the code
/// was decoded for (`decoded` false: none was, and every function present counts as a use).
pub fn tally(
    image: &Image<'_>,
    functions: &[&str],
    present: &Present<'_>,
    sites: &Sites,
    decoded: bool,
) -> (Vec<FunctionUse>, Vec<String>) {
    let mut tallies: BTreeMap<&str, UseTally> = BTreeMap::new();
    for found in &present.found {
        let tally = tallies.entry(found.function).or_default();
        tally.aliases.extend(found.aliases.iter().cloned());
    }
    // A function's calls of itself, or of its own variants from its ifunc resolver, are not uses.
    let outside = |f: usize, site: u64| {
        let caller = caller_of(image, site);
        let own = caller.and_then(|c| present.named.get(&c)).is_some_and(|name| *name == present.found[f].function);
        (!own).then_some(caller)
    };
    for &(f, site) in &sites.calls {
        if let Some(caller) = outside(f, site) {
            let tally = tallies.entry(present.found[f].function).or_default();
            tally.call_sites += 1;
            let entry = tally.callers.entry(caller).or_insert((0, site));
            entry.0 += 1;
            entry.1 = entry.1.min(site);
        }
    }
    // The libc taking its own functions' addresses (glibc's list of ifunc variants) is plumbing,
    // not a table of the program's.
    for &(f, site) in &sites.references {
        if site
            .is_none_or(|site| outside(f, site).is_some_and(|c| !c.is_some_and(|c| named_in_libc(image, c, functions))))
        {
            tallies.entry(present.found[f].function).or_default().referenced = true;
        }
    }

    let debug = (!sites.calls.is_empty()).then(|| DebugSections::of(image));
    let lines = debug.as_ref().map(DebugSections::lines);
    let mut uses = Vec::new();
    let mut unused = Vec::new();
    for (function, mut tally) in tallies {
        if decoded && tally.call_sites == 0 && !tally.referenced {
            unused.push(function.to_string());
            continue;
        }
        tally.aliases.sort();
        tally.aliases.dedup();
        let mut callers: Vec<Caller> = tally
            .callers
            .iter()
            .map(|(&caller, &(sites, first))| {
                let location = lines.as_ref().and_then(|l| l.location(first));
                let in_libc = caller.is_some_and(|c| named_in_libc(image, c, functions))
                    || location.as_deref().is_some_and(in_libc_sources);
                let name = caller.map_or_else(
                    || "unknown".to_string(),
                    |c| match display_name(&image.functions[c]) {
                        // A function only the unwind tables know: by its address.
                        "" => format!("{:#x}", image.functions[c].address),
                        name => demangle(name),
                    },
                );
                Caller { name, sites, location, in_libc }
            })
            .collect();
        callers.sort_by(|a, b| b.sites.cmp(&a.sites).then_with(|| a.name.cmp(&b.name)));
        uses.push(FunctionUse {
            function: function.to_string(),
            aliases: tally.aliases,
            call_sites: tally.call_sites,
            referenced: tally.referenced,
            callers,
            found_by: super::FoundBy::Symbol,
        });
    }
    (uses, unused)
}

/// The function whose code holds `site`: the last to start at or before it, where its size
/// reaches the site, or (in a full symbol table) where its size is not given.
fn caller_of(image: &Image<'_>, site: u64) -> Option<usize> {
    let i = image.functions.partition_point(|f| f.address <= site).checked_sub(1)?;
    let f = &image.functions[i];
    (site - f.address < f.size || (f.size == 0 && image.symtab)).then_some(i)
}

/// The name people know a function by: not a Zig alias, a global before a local, the fewest
/// leading underscores, the shortest.
pub fn display_name<'data>(f: &Function<'data>) -> &'data str {
    f.names
        .iter()
        .min_by_key(|n| {
            let underscores = n.text.len() - n.text.trim_start_matches('_').len();
            (zig_alias(n.text).is_some(), !n.global, underscores, n.text.len(), n.text)
        })
        .map_or("", |n| n.text)
}

/// Whether the function at `index` in [`Image::functions`] is the libc's by one of its names: a
/// catalogue function's, or one only a libc carries.
fn named_in_libc(image: &Image<'_>, index: usize, functions: &[&str]) -> bool {
    image.functions[index].names.iter().any(|n| catalogue_name(n.text, functions).is_some() || is_libc_internal(n.text))
}

/// Whether a `file:line` lies in a libc's sources: musl's, glibc's, Zig's libc and compiler-rt.
fn in_libc_sources(location: &str) -> bool {
    ["/musl/", "/musl-", "/glibc", "sysdeps/", "/libc/", "/lib/c/", "/compiler_rt/", "/compiler_rt.zig"]
        .iter()
        .any(|marker| location.contains(marker))
}
