//! What the decoders of every architecture share: the functions looked for, the GOT slots that
//! hold their addresses, and the words of data that point at them.

use super::elf::{Image, RelocationKind, Section, Target};
use super::registers::Sites;
use std::collections::HashMap;

/// What the decoder looks for: each function of interest, by its index among them.
pub struct Wanted {
    /// Addresses whose call is a call of the function: its start (each name's address), and an
    /// import's canonical PLT address.
    pub at: HashMap<u64, usize>,
    /// Imports, by their index in [`Image::imports`].
    pub imports: HashMap<usize, usize>,
}

impl Wanted {
    pub fn of(&self, target: Target) -> Option<usize> {
        match target {
            Target::Address(a) => self.at.get(&a).copied(),
            Target::Import(i) => self.imports.get(&i).copied(),
        }
    }
}

/// The executable sections of `image` that hold code: its PLTs (`.plt`, `.plt.sec`, `.plt.got`,
/// `.iplt`), read first so that calls to their stubs are known, and the rest.
pub fn code<'i, 'data>(image: &'i Image<'data>) -> (Vec<&'i Section<'data>>, Vec<&'i Section<'data>>) {
    image
        .sections
        .iter()
        .filter(|s| s.executable() && !s.bytes.is_empty())
        .partition(|s| s.name.starts_with(".plt") || s.name.starts_with(".iplt"))
}

/// The GOT slots of `image` that hold a wanted function's address, by the slot's address: those
/// the loader fills, and in a fixed-address executable those the linker filled (a static link's
/// `.got` holds the addresses themselves). A relocated word of data outside the GOT is a reference,
/// added to `sites`, as is a fixed-address executable's word of data that holds an address.
pub fn of(image: &Image<'_>, wanted: &Wanted, sites: &mut Sites) -> HashMap<u64, usize> {
    let got = |address: u64| image.sections.iter().any(|s| s.name.starts_with(".got") && s.holds(address));
    let mut slots: HashMap<u64, usize> = HashMap::new();
    for r in &image.relocations {
        let Some(f) = wanted.of(r.target) else { continue };
        if r.kind != RelocationKind::Word || got(r.offset) {
            slots.insert(r.offset, f);
        } else {
            sites.references.push((f, None));
        }
    }
    if image.fixed {
        for s in image.sections.iter().filter(|s| s.name.starts_with(".got")) {
            for at in (s.address..s.address.saturating_add(s.bytes.len() as u64)).step_by(8) {
                if let Some(&f) = s.word(at).and_then(|w| wanted.at.get(&w)) {
                    slots.entry(at).or_insert(f);
                }
            }
        }
        data_words(image, |word| wanted.at.get(&word).copied(), sites);
    }
    slots
}

/// The words of a fixed-address executable's data that hold a function's address, as `at` finds
/// it: a table of function pointers. The GOT is read as slots instead, and unwind tables hold no
/// pointers. A decoder calls it again with the PLT stubs it found: a static glibc's pointer to an
/// ifunc (`strlen`) is its stub's address.
pub fn data_words(image: &Image<'_>, at: impl Fn(u64) -> Option<usize>, sites: &mut Sites) {
    let data = image.sections.iter().filter(|s| {
        s.flags.contains(object::elf::SHF_ALLOC)
            && !s.executable()
            && s.kind == object::elf::SHT_PROGBITS
            && !s.name.starts_with(".got")
            && !s.name.starts_with(".eh_frame")
            && s.name != ".gcc_except_table"
    });
    for s in data {
        let skip = (8 - s.address % 8) % 8;
        let Some(aligned) = s.bytes.get(skip as usize..) else { continue };
        for word in aligned.chunks_exact(8) {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            if let Some(f) = at(word) {
                sites.references.push((f, None));
            }
        }
    }
}
