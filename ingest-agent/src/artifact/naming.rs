//! Names for the code of an artifact whose own symbol table lacks them: from a file that carries
//! its symbols (`--symbols`: the unstripped twin of a stripped release, or a separate debug file),
//! from the fingerprints of its toolchain's libc (see `fingerprint`), and for the functions that
//! neither names, their address ranges from the unwind tables (see `frames`).

use super::elf::{Function, Image, SymbolName};
use super::fingerprint::Fingerprint;
use super::frames;
use super::recognise;
use std::path::Path;

/// What names an artifact's code besides its own symbols.
#[derive(Default, Clone, Copy)]
pub struct Naming<'a> {
    /// The fingerprints of the libc functions of the toolchain that built it; empty for none.
    pub prints: &'a [Fingerprint],
    /// A file with the symbols (and debug information) of the same code.
    pub symbols: Option<&'a Path>,
}

/// A catalogue function recognised by its code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeMatch {
    /// Its catalogue name.
    pub function: String,
    /// The optimisation modes whose bodies match (`-O2`), as the fingerprints say.
    pub modes: Vec<String>,
}

/// Takes the symbols and debug sections of `twin` into `image`, after checking that the two are
/// one build: where the twin keeps its code (an unstripped build), the code is the same, byte for
/// byte at the same addresses; where it keeps none (a separate debug file), the GNU build IDs
/// are equal.
pub fn take_symbols<'d>(image: &mut Image<'d>, twin: Image<'d>) -> Result<(), String> {
    let code = |i: &Image<'d>| -> Vec<(u64, &'d [u8])> {
        i.sections.iter().filter(|s| s.executable() && !s.bytes.is_empty()).map(|s| (s.address, s.bytes)).collect()
    };
    let theirs = code(&twin);
    if !theirs.is_empty() {
        if code(image) != theirs {
            return Err("its code is not the artifact's: it is another build".into());
        }
    } else if let (Some(a), Some(b)) = (&image.build_id, &twin.build_id) {
        if a != b {
            return Err(format!(
                "another build: its build ID is {}, the artifact's {}",
                hex::encode(b),
                hex::encode(a)
            ));
        }
    }
    if twin.functions.is_empty() {
        return Err("it has no symbols either".into());
    }
    image.functions = twin.functions;
    image.symtab = twin.symtab;
    image.sections.extend(twin.sections.into_iter().filter(|s| s.name.starts_with(".debug_")));
    Ok(())
}

/// The separate debug file the `.gnu_debuglink` of `image` (the artifact at `path`) names, where
/// it lies where debuggers look for it (beside the artifact, in `.debug/` there, or under
/// `/usr/lib/debug/` with the artifact's directory) and its CRC-32 is the one the link records.
pub fn debug_link(image: &Image<'_>, path: &Path) -> Option<std::path::PathBuf> {
    let link = image.sections.iter().find(|s| s.name == ".gnu_debuglink")?.bytes;
    let end = link.iter().position(|&b| b == 0)?;
    let name = std::str::from_utf8(&link[..end]).ok().filter(|n| !n.is_empty() && !n.contains('/'))?;
    let crc_at = (end + 4) & !3;
    let crc = u32::from_le_bytes(link.get(crc_at..crc_at + 4)?.try_into().ok()?);
    let dir = path.parent().unwrap_or(Path::new("."));
    let absolute = std::fs::canonicalize(dir).ok();
    let mut places = vec![dir.join(name), dir.join(".debug").join(name)];
    if let Some(d) = absolute.as_deref().and_then(|d| d.strip_prefix("/").ok()) {
        places.push(Path::new("/usr/lib/debug").join(d).join(name));
    }
    places
        .into_iter()
        .filter(|p| p.as_path() != path)
        .find(|p| std::fs::read(p).is_ok_and(|bytes| crc32fast::hash(&bytes) == crc))
}

/// Recognises the functions of `prints` in `image`, and names those no symbol names: each as
/// its fingerprint's symbols. Where the artifact keeps no symbol table, the functions its unwind
/// tables describe and nothing names are added without names, so that a call from one is given
/// by its address. Returns what was recognised (named already or not).
pub fn recognise<'d>(image: &mut Image<'d>, prints: &'d [Fingerprint]) -> Vec<CodeMatch> {
    let found = recognise::recognise(image, prints);
    let mut matches = Vec::new();
    let mut added: Vec<Function<'d>> = Vec::new();
    for r in found {
        let first = &prints[r.prints[0]];
        let mut modes: Vec<String> = r.prints.iter().flat_map(|&p| prints[p].modes.iter().cloned()).collect();
        modes.sort();
        modes.dedup();
        matches.push(CodeMatch { function: first.function.clone(), modes });
        if image.functions.binary_search_by_key(&r.address, |f| f.address).is_err() {
            let mut names: Vec<SymbolName<'d>> = Vec::new();
            for &p in &r.prints {
                for (text, global) in &prints[p].symbols {
                    if !names.iter().any(|n| n.text == text) {
                        names.push(SymbolName { text, global: *global });
                    }
                }
            }
            added.push(Function { address: r.address, size: r.size, names });
        }
    }
    if !image.symtab {
        for (address, size) in frames::ranges(image) {
            let named = |f: &Function<'_>| f.address == address;
            if !image.functions.iter().any(named) && !added.iter().any(named) {
                added.push(Function { address, size, names: Vec::new() });
            }
        }
    }
    image.functions.extend(added);
    image.functions.sort_by_key(|f| f.address);
    matches
}
