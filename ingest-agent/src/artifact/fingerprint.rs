//! Fingerprints: a catalogue function's body as a toolchain builds it, with the bits that linking
//! moves masked, so that the same function is recognised in an artifact that keeps no symbols (a
//! stripped release). Signature tools for stripped binaries (IDA's FLIRT, Ghidra's Function ID)
//! keep a database of a library's code; here the toolchain under test is asked to build the
//! functions again, so the signatures are always of the libc it really links.
//!
//! A linked binary keeps no relocations, so what linking moved is found by decoding the body
//! (see `mask`): relative calls and jumps that leave it, RIP-relative displacements and absolute
//! addresses on x86-64; `bl`, `b`, `adrp` and the `add` and load immediates that complete an
//! `adrp` on aarch64.

use super::elf::Image;
use super::mask;
use super::uses;
use serde::{Deserialize, Serialize};

/// One body of a catalogue function, as one build of a toolchain has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The catalogue name it goes by (the strongest of its names, as a scan names it).
    pub function: String,
    /// Every symbol name at its address in the build it was taken from, and whether each is
    /// global: a function recognised by it carries them all, as if the artifact had the symbols.
    pub symbols: Vec<(String, bool)>,
    /// The optimisation flag of the build it was taken from (`-O2`, `-Os`, `-O0`): Zig builds its
    /// libc in the mode of the program, so each mode has bodies of its own.
    pub modes: Vec<String>,
    /// Its bytes, as lowercase hex.
    #[serde(with = "hex::serde")]
    pub bytes: Vec<u8>,
    /// Per byte, the bits that must equal `bytes` in the artifact: 0xff where linking moves
    /// nothing, 0 (or fewer bits on aarch64) where it moves an address.
    #[serde(with = "hex::serde")]
    pub mask: Vec<u8>,
    /// Its calls of other catalogue functions: the offset of the call in the body, and the
    /// callee's catalogue name; a function too short to recognise alone is found through these.
    pub calls: Vec<(u32, String)>,
}

impl Fingerprint {
    /// How many of its bytes are fixed whole (not moved by linking).
    pub fn fixed(&self) -> usize {
        self.mask.iter().filter(|&&m| m == 0xff).count()
    }

    /// Whether it matches `code` from its start.
    pub fn matches(&self, code: &[u8]) -> bool {
        code.len() >= self.bytes.len()
            && self.bytes.iter().zip(&self.mask).zip(code).all(|((&b, &m), &c)| c & m == b & m)
    }
}

/// The fingerprints of every catalogue function among `functions` that `image` (a build with its
/// symbols, static) carries, taken from the build made with optimisation flag `mode`. A body
/// whose size no symbol gives runs to the next function, less the padding after its last
/// instruction.
pub fn take(image: &Image<'_>, functions: &[&str], mode: &str) -> Vec<Fingerprint> {
    let present = uses::present(image, functions);
    let names_at = |address: u64| present.wanted.at.get(&address).map(|&i| present.found[i].function.to_string());
    let mut prints = Vec::new();
    for (i, f) in image.functions.iter().enumerate() {
        let Some(function) = names_at(f.address) else { continue };
        let Some(section) = image.sections.iter().find(|s| s.executable() && s.holds(f.address)) else {
            continue;
        };
        let start = (f.address - section.address) as usize;
        let next = image.functions.get(i + 1).map_or(u64::MAX, |n| n.address);
        let end = if f.size > 0 { f.address.saturating_add(f.size) } else { next };
        let end = (end.min(section.address + section.bytes.len() as u64) - section.address) as usize;
        let Some(body) = section.bytes.get(start..end).filter(|b| !b.is_empty()) else { continue };
        let Some(masked) = mask::body(image, body, f.address, f.size == 0) else { continue };
        let calls = masked.calls.iter().filter_map(|&(at, target)| Some((at, names_at(target)?))).collect();
        prints.push(Fingerprint {
            function,
            symbols: f.names.iter().map(|n| (n.text.to_string(), n.global)).collect(),
            modes: vec![mode.to_string()],
            mask: masked.mask,
            bytes: body[..masked.len].to_vec(),
            calls,
        });
    }
    prints
}

/// `prints` with bodies that are the same in several modes kept once, naming every mode.
pub fn merge_modes(prints: Vec<Fingerprint>) -> Vec<Fingerprint> {
    let mut merged: Vec<Fingerprint> = Vec::new();
    for p in prints {
        match merged.iter_mut().find(|m| m.bytes == p.bytes && m.mask == p.mask && m.function == p.function) {
            Some(m) => {
                for mode in p.modes {
                    if !m.modes.contains(&mode) {
                        m.modes.push(mode);
                    }
                }
            }
            None => merged.push(p),
        }
    }
    merged
}
