//! Finds the fingerprints of a toolchain's libc functions in an artifact's code.
//!
//! A body is recognised on its own only where it can be told apart: at least [`MIN_FIXED`] of its
//! bytes are fixed (a `ret`, a jump to another function or a three-instruction stub are not), and
//! it matches in exactly one place of the artifact's code, not inside a longer body recognised
//! there. A body that fails either test is recognised only through the call graph: where a body
//! recognised on its own calls it (the fingerprint says so, at a given offset), the call's target
//! in the artifact is checked against it. Nothing is guessed: a function matched nowhere, or in
//! two places that no call tells apart, is not named.
//!
//! The search reads each executable byte once: every body has an anchor, its first run of
//! [`ANCHOR`] fixed bytes, looked up by the 8 bytes at each position.

use super::elf::{Image, RelocationKind, Target};
use super::fingerprint::Fingerprint;
use super::mask;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The fixed bytes a body needs to be recognised on its own, without a call that leads to it.
pub const MIN_FIXED: usize = 24;

/// The length of the run of fixed bytes a body is looked up by.
const ANCHOR: usize = 8;

/// One function recognised by its code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recognised {
    pub address: u64,
    pub size: u64,
    /// The fingerprints that match there, by index in the slice searched: one body that several
    /// fingerprints share (the same code in two modes, or under two names).
    pub prints: Vec<usize>,
    /// How it was told apart.
    pub how: How,
}

/// How a recognised function was told apart from the rest of the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// Its body matches in this one place of the artifact.
    Unique,
    /// It is the target of a call, at a known offset, in the body of this recognised function
    /// (its catalogue name).
    CalledFrom(String),
    /// It is an ifunc's resolver (the target of an `IRELATIVE` relocation) whose body matches and
    /// loads the addresses of that function's recognised variants.
    Resolver,
}

/// One body, as fingerprints of possibly several modes or names share it.
struct Body<'p> {
    print: &'p Fingerprint,
    prints: Vec<usize>,
}

/// The functions of `prints` found in `image`'s executable code, sorted by address.
pub fn recognise(image: &Image<'_>, prints: &[Fingerprint]) -> Vec<Recognised> {
    let mut bodies: Vec<Body<'_>> = Vec::new();
    let mut same: HashMap<(&[u8], &[u8]), usize> = HashMap::new();
    for (i, p) in prints.iter().enumerate() {
        match same.get(&(p.bytes.as_slice(), p.mask.as_slice())) {
            Some(&b) => bodies[b].prints.push(i),
            None => {
                same.insert((&p.bytes, &p.mask), bodies.len());
                bodies.push(Body { print: p, prints: vec![i] });
            }
        }
    }
    let matches = search(image, &bodies);
    let mut found: Vec<Recognised> = Vec::new();
    // The bodies that match once, the surest (most fixed bytes) first.
    let mut alone: Vec<(usize, u64)> =
        matches.iter().filter(|(_, at)| at.len() == 1).map(|(&b, at)| (b, at[0])).collect();
    alone.sort_by_key(|&(b, at)| (std::cmp::Reverse(bodies[b].print.fixed()), at));
    // (start, end, fixed bytes, function) of each place taken.
    let mut claimed: Vec<(u64, u64, usize, &str)> = Vec::new();
    for (b, at) in alone {
        let print = bodies[b].print;
        let end = at + print.bytes.len() as u64;
        match claimed.iter().find(|&&(s, e, _, _)| at < e && s < end) {
            // The same function's body of another mode, the same from its start: one function.
            Some(&(s, _, _, f)) if s == at && f == print.function => {
                if let Some(r) = found.iter_mut().find(|r| r.address == at) {
                    r.prints.extend(&bodies[b].prints);
                }
            }
            // Another function's body as strong at the same place: neither is sure.
            Some(&(s, _, fixed, _)) if s == at && fixed == print.fixed() => found.retain(|r| r.address != at),
            Some(_) => {}
            None => {
                claimed.push((at, end, print.fixed(), &print.function));
                found.push(Recognised {
                    address: at,
                    size: end - at,
                    prints: bodies[b].prints.clone(),
                    how: How::Unique,
                });
            }
        }
    }
    through_calls(image, &bodies, &mut found);
    resolvers(image, &bodies, &mut found);
    found.sort_by_key(|r| r.address);
    found
}

/// Adds the resolvers of ifuncs (a static glibc's `strspn` chooses among `__strspn_sse42` and
/// others): a resolver is too short and too alike its neighbours to be told by its body, but it is
/// the target of an `IRELATIVE` relocation, and the variants it loads are recognised.
fn resolvers(image: &Image<'_>, bodies: &[Body<'_>], found: &mut Vec<Recognised>) {
    let targets: Vec<u64> = image
        .relocations
        .iter()
        .filter(|r| r.kind == RelocationKind::Resolved)
        .filter_map(|r| match r.target {
            Target::Address(a) => Some(a),
            Target::Import(_) => None,
        })
        .collect();
    for at in targets {
        if found.iter().any(|r| r.address == at) {
            continue;
        }
        let Some(code) = code_at(image, at) else { continue };
        let named_at = |address: u64| {
            found
                .iter()
                .find(|r| r.address == address)
                .and_then(|r| bodies.iter().find(|b| b.prints.contains(&r.prints[0])))
        };
        let fits: Vec<&Body<'_>> = bodies
            .iter()
            .filter(|b| !b.print.calls.is_empty() && b.print.matches(code))
            .filter(|b| {
                b.print.calls.iter().all(|(offset, callee)| {
                    let site = at + u64::from(*offset);
                    let target = code_at(image, site).and_then(|c| mask::call_target(image, c, site));
                    target.and_then(named_at).is_some_and(|t| &t.print.function == callee)
                })
            })
            .collect();
        let mut functions: Vec<&str> = fits.iter().map(|b| b.print.function.as_str()).collect();
        functions.dedup();
        if let ([only], Some(b)) = (functions.as_slice(), fits.iter().max_by_key(|b| b.print.fixed())) {
            debug_assert_eq!(*only, b.print.function);
            found.push(Recognised {
                address: at,
                size: b.print.bytes.len() as u64,
                prints: b.prints.clone(),
                how: How::Resolver,
            });
        }
    }
}

/// Adds the functions the recognised ones call, where the callee's body matches at the target.
fn through_calls(image: &Image<'_>, bodies: &[Body<'_>], found: &mut Vec<Recognised>) {
    let mut next = 0;
    while next < found.len() {
        let caller = found[next].clone();
        next += 1;
        let callers = bodies.iter().filter(|b| b.prints.iter().any(|p| caller.prints.contains(p)));
        for (print, (offset, callee)) in callers.flat_map(|b| b.print.calls.iter().map(move |c| (b.print, c))) {
            let site = caller.address + u64::from(*offset);
            let Some(target) = code_at(image, site).and_then(|code| mask::call_target(image, code, site)) else {
                continue;
            };
            if found.iter().any(|r| r.address == target) {
                continue;
            }
            let Some(code) = code_at(image, target) else { continue };
            let fits = bodies
                .iter()
                .filter(|b| &b.print.function == callee && b.print.matches(code))
                .max_by_key(|b| b.print.fixed());
            if let Some(b) = fits {
                found.push(Recognised {
                    address: target,
                    size: b.print.bytes.len() as u64,
                    prints: b.prints.clone(),
                    how: How::CalledFrom(print.function.clone()),
                });
            }
        }
    }
}

/// The executable bytes of `image` from `address` to the end of its section.
fn code_at<'i>(image: &'i Image<'_>, address: u64) -> Option<&'i [u8]> {
    let s = image.sections.iter().find(|s| s.executable() && s.holds(address))?;
    s.bytes.get((address - s.address) as usize..)
}

/// Where each body that can be recognised alone matches, by its index in `bodies`.
fn search(image: &Image<'_>, bodies: &[Body<'_>]) -> HashMap<usize, Vec<u64>> {
    let mut anchors: HashMap<u64, Vec<(usize, usize)>, BuildHasherDefault<WordHasher>> = HashMap::default();
    // A first look at 2^16 bits of each word, before the map is asked.
    let mut seen = vec![0u64; 1 << 10];
    let bit = |word: u64| (word.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as usize;
    for (b, body) in bodies.iter().enumerate() {
        let p = body.print;
        if p.fixed() < MIN_FIXED {
            continue;
        }
        let Some(at) =
            (0..p.mask.len().saturating_sub(ANCHOR - 1)).find(|&i| p.mask[i..i + ANCHOR].iter().all(|&m| m == 0xff))
        else {
            continue;
        };
        let word = u64::from_le_bytes(p.bytes[at..at + ANCHOR].try_into().unwrap_or_default());
        anchors.entry(word).or_default().push((b, at));
        seen[bit(word) / 64] |= 1 << (bit(word) % 64);
    }
    let mut matches: HashMap<usize, Vec<u64>> = HashMap::new();
    for s in image.sections.iter().filter(|s| s.executable() && s.bytes.len() >= ANCHOR) {
        for (i, window) in s.bytes.windows(ANCHOR).enumerate() {
            let word = u64::from_le_bytes(window.try_into().unwrap_or_default());
            if seen[bit(word) / 64] & (1 << (bit(word) % 64)) == 0 {
                continue;
            }
            let Some(list) = anchors.get(&word) else { continue };
            for &(b, at) in list {
                let Some(start) = i.checked_sub(at) else { continue };
                if bodies[b].print.matches(&s.bytes[start..]) {
                    matches.entry(b).or_default().push(s.address + start as u64);
                }
            }
        }
    }
    matches
}

/// Hashes a word already as random as the code it is read from by one multiplication.
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = word.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::elf::Section;

    /// A body of 40 fixed bytes (`mov` of distinct constants) that calls `short` at offset 30.
    fn long_body() -> Vec<u8> {
        let mut code = Vec::new();
        for i in 0..6u8 {
            code.extend([0xb8, 0x10 + i, 0x20 + i, 0x30 + i, 0x40 + i]); // mov eax, imm32
        }
        code.extend([0xe8, 0, 0, 0, 0]); // call short (rel32 set where placed)
        code.extend([0x48, 0x31, 0xc0, 0xc3, 0x90]); // xor rax, rax; ret; nop
        code
    }

    /// A body too short to be told apart alone: xor eax, eax; inc rax; ret.
    const SHORT: [u8; 6] = [0x31, 0xc0, 0x48, 0xff, 0xc0, 0xc3];

    fn print(function: &str, bytes: &[u8], mask: Vec<u8>, calls: Vec<(u32, String)>) -> Fingerprint {
        Fingerprint {
            function: function.into(),
            symbols: vec![(function.into(), true)],
            modes: vec!["-O2".into()],
            bytes: bytes.to_vec(),
            mask,
            calls,
        }
    }

    fn prints() -> Vec<Fingerprint> {
        let long = long_body();
        let mut mask = vec![0xff; long.len()];
        mask[31..35].fill(0);
        vec![
            print("strspn", &long, mask, vec![(30, "strlen".into())]),
            print("strlen", &SHORT, vec![0xff; SHORT.len()], Vec::new()),
        ]
    }

    /// Code at 0x1000 with the long body at each of `longs` (offsets) calling a copy of the short
    /// one at 0x1800, and another copy of the short one at 0x1900.
    fn code(longs: &[usize]) -> Vec<u8> {
        let mut code = vec![0xccu8; 0x1000];
        for &at in longs {
            let mut body = long_body();
            let rel = (0x800i64 - (at as i64 + 35)) as i32;
            body[31..35].copy_from_slice(&rel.to_le_bytes());
            code[at..at + body.len()].copy_from_slice(&body);
        }
        code[0x800..0x806].copy_from_slice(&SHORT);
        code[0x900..0x906].copy_from_slice(&SHORT);
        code
    }

    fn found(code: &[u8]) -> Vec<Recognised> {
        let mut image = crate::artifact::tests::empty_image(object::elf::EM_X86_64);
        image.sections.push(Section {
            name: ".text",
            address: 0x1000,
            bytes: code,
            kind: object::elf::SHT_PROGBITS,
            flags: object::elf::SHF_ALLOC.with(object::elf::SHF_EXECINSTR),
        });
        recognise(&image, &prints())
    }

    #[test]
    fn a_body_found_once_is_recognised_and_the_short_one_it_calls_through_the_call() {
        let r = found(&code(&[0x100]));
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[0].address, r[0].prints.as_slice(), &r[0].how), (0x1100, &[0][..], &How::Unique));
        assert_eq!((r[1].address, &r[1].how), (0x1800, &How::CalledFrom("strspn".into())), "not its twin at 0x1900");
    }

    #[test]
    fn bodies_of_one_function_in_two_modes_matching_at_one_place_are_one_function() {
        let mut all = prints();
        let mut other_mode = all[0].clone();
        other_mode.modes = vec!["-O0".into()];
        other_mode.mask[0] = 0; // masked differently, still the same bytes where both are fixed
        all.push(other_mode);
        let code = code(&[0x100]);
        let mut image = crate::artifact::tests::empty_image(object::elf::EM_X86_64);
        image.sections.push(Section {
            name: ".text",
            address: 0x1000,
            bytes: &code,
            kind: object::elf::SHT_PROGBITS,
            flags: object::elf::SHF_ALLOC.with(object::elf::SHF_EXECINSTR),
        });
        let r = recognise(&image, &all);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!((r[0].address, r[0].prints.len()), (0x1100, 2), "{r:?}");
        assert_eq!(r[1].how, How::CalledFrom("strspn".into()));
    }

    #[test]
    fn a_body_found_twice_or_too_short_gives_no_verdict_on_its_own() {
        assert!(found(&code(&[0x100, 0x400])).is_empty(), "two places, and nothing tells them apart");
        assert!(found(&code(&[])).is_empty(), "the short body alone, twice or once, is never enough");
        let mut once = code(&[]);
        once[0x900..0x906].fill(0xcc);
        assert!(found(&once).is_empty(), "a short body found once is still too short");
        assert!(prints()[1].fixed() < MIN_FIXED);
    }
}
