//! The calls and address-takings of AArch64 code, found by reading every executable section once,
//! an instruction per 4 bytes.
//!
//! A call site is a `bl` or a `b` (a tail call) whose target is a function looked for, directly or
//! through its PLT stub (`adrp x16, slot; ldr x17, [x16, #lo]; …; br x17`, after a `bti c` where
//! branch targets are marked), or a `blr`/`br` through a register loaded with its address (`adrp`
//! and `add`) or from its GOT slot (`adrp` and `ldr`), as `-fno-plt` builds call. A register so
//! loaded and then passed on rather than called (stored, moved, or live across a `bl`) is a
//! reference, as is a word of data pointing at the function.

use super::elf::Image;
use super::registers::Sites;
use super::slots::{self, Wanted};
use std::collections::HashMap;

/// `bti c`, which marks where an indirect call may land.
const BTI_C: u32 = 0xd503_245f;

/// One decoded instruction of the few that matter here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `bl target`
    Call(u64),
    /// `b target`
    Jump(u64),
    /// `adrp xd, page`
    Page { rd: u8, page: u64 },
    /// `add xd, xn, #imm` (64-bit, immediate)
    AddImm { rd: u8, rn: u8, imm: u64 },
    /// `ldr xt, [xn, #imm]` (64-bit, unsigned offset)
    Load { rt: u8, rn: u8, imm: u64 },
    /// `blr xn`
    CallRegister(u8),
    /// `br xn`
    JumpRegister(u8),
    /// `ret`
    Return,
    /// A conditional branch, a compare-and-branch, or a hint (`nop`, `bti`): it writes no
    /// register, and a test of a register is no use of what it holds.
    Nothing,
    /// Anything else; its register field at bits 0 to 4 (a destination, or a register stored).
    Other(u8),
}

/// Decodes the instruction `word` at `pc`.
fn op(word: u32, pc: u64) -> Op {
    let reg = |shift: u32| ((word >> shift) & 31) as u8;
    let branch = || pc.wrapping_add((((word & 0x03ff_ffff) as i32) << 6 >> 4) as i64 as u64);
    match word {
        w if w & 0xfc00_0000 == 0x9400_0000 => Op::Call(branch()),
        w if w & 0xfc00_0000 == 0x1400_0000 => Op::Jump(branch()),
        w if w & 0x9f00_0000 == 0x9000_0000 => {
            let imm = ((((w >> 5) & 0x7ffff) << 2) | ((w >> 29) & 3)) as i32;
            let pages = ((imm << 11) >> 11) as i64;
            Op::Page { rd: reg(0), page: (pc & !0xfff).wrapping_add((pages << 12) as u64) }
        }
        w if w & 0xff80_0000 == 0x9100_0000 => {
            let shift = if w & (1 << 22) != 0 { 12 } else { 0 };
            Op::AddImm { rd: reg(0), rn: reg(5), imm: u64::from((w >> 10) & 0xfff) << shift }
        }
        w if w & 0xffc0_0000 == 0xf940_0000 => {
            Op::Load { rt: reg(0), rn: reg(5), imm: u64::from((w >> 10) & 0xfff) * 8 }
        }
        w if w & 0xffff_fc1f == 0xd63f_0000 => Op::CallRegister(reg(5)),
        w if w & 0xffff_fc1f == 0xd61f_0000 => Op::JumpRegister(reg(5)),
        w if w & 0xffff_fc1f == 0xd65f_0000 => Op::Return,
        w if w & 0xff00_0010 == 0x5400_0000 || w & 0x7c00_0000 == 0x3400_0000 || w & 0xffff_f01f == 0xd503_201f => {
            Op::Nothing
        }
        _ => Op::Other(reg(0)),
    }
}

/// The 4-byte instructions of a section, with their addresses.
fn instructions<'a>(bytes: &'a [u8], base: u64) -> impl Iterator<Item = (u64, u32)> + 'a {
    let skip = ((4 - base % 4) % 4) as usize;
    bytes
        .get(skip..)
        .unwrap_or(&[])
        .chunks_exact(4)
        .enumerate()
        .map(move |(i, w)| (base + skip as u64 + 4 * i as u64, u32::from_le_bytes(w.try_into().unwrap_or_default())))
}

/// What a register holds, as far as it matters here.
#[derive(Debug, Clone, Copy)]
enum Held {
    /// A page address from `adrp`.
    Page(u64),
    /// A wanted function's address, loaded by the instruction at the address.
    Function(usize, u64),
}

/// Decodes `image`'s executable sections and says where they call and reference what `wanted`
/// names.
pub fn decode(image: &Image<'_>, wanted: &Wanted) -> Sites {
    let mut sites = Sites::default();
    let slots = slots::of(image, wanted, &mut sites);
    let (plt, rest) = slots::code(image);
    // A PLT stub: the `adrp x16` (or the `bti c` before it) that begins a load of x17 from a
    // wanted function's slot.
    let mut stubs: HashMap<u64, usize> = HashMap::new();
    for s in plt {
        let mut previous: Option<(u64, u32)> = None;
        let mut page: Option<(u64, u64)> = None;
        for (pc, word) in instructions(s.bytes, s.address) {
            match op(word, pc) {
                Op::Page { rd: 16, page: p } => {
                    let start = previous.filter(|&(_, w)| w == BTI_C).map_or(pc, |(at, _)| at);
                    page = Some((start, p));
                }
                Op::Load { rt: 17, rn: 16, imm } => {
                    if let Some((start, p)) = page.take() {
                        if let Some(&f) = slots.get(&p.wrapping_add(imm)) {
                            stubs.insert(start, f);
                        }
                    }
                }
                _ => {}
            }
            previous = Some((pc, word));
        }
    }
    if image.fixed {
        slots::data_words(image, |word| stubs.get(&word).copied(), &mut sites);
    }
    let entry = |address: u64| wanted.at.get(&address).or_else(|| stubs.get(&address)).copied();
    let starts: Vec<u64> = image.functions.iter().map(|f| f.address).collect();
    for s in rest {
        let mut held: HashMap<u8, Held> = HashMap::new();
        let mut next = starts.partition_point(|&a| a <= s.address);
        for (pc, word) in instructions(s.bytes, s.address) {
            // A new function: what its predecessor held and never called was passed on.
            if starts.get(next).is_some_and(|&boundary| pc >= boundary) {
                pass_on(&mut held, |_| true, &mut sites);
                next = starts.partition_point(|&a| a <= pc);
            }
            match op(word, pc) {
                Op::Call(target) | Op::Jump(target) => {
                    if let Some(f) = entry(target) {
                        sites.calls.push((f, pc));
                    }
                    if matches!(op(word, pc), Op::Call(_)) {
                        // x0 to x18 are the callee's to change: what they held went to it.
                        pass_on(&mut held, |r| r <= 18, &mut sites);
                    }
                }
                Op::Page { rd, page } => {
                    pass_on(&mut held, |r| r == rd, &mut sites);
                    held.insert(rd, Held::Page(page));
                }
                Op::AddImm { rd, rn, imm } => {
                    let loaded = match held.get(&rn) {
                        Some(Held::Page(p)) => entry(p.wrapping_add(imm)),
                        _ => None,
                    };
                    pass_on(&mut held, |r| r == rd, &mut sites);
                    if let Some(f) = loaded {
                        held.insert(rd, Held::Function(f, pc));
                    }
                }
                Op::Load { rt, rn, imm } => {
                    let loaded = match held.get(&rn) {
                        Some(Held::Page(p)) => slots.get(&p.wrapping_add(imm)).copied(),
                        _ => None,
                    };
                    pass_on(&mut held, |r| r == rt, &mut sites);
                    if let Some(f) = loaded {
                        held.insert(rt, Held::Function(f, pc));
                    }
                }
                Op::CallRegister(rn) | Op::JumpRegister(rn) => {
                    if let Some(Held::Function(f, _)) = held.remove(&rn) {
                        sites.calls.push((f, pc));
                    }
                    if matches!(op(word, pc), Op::CallRegister(_)) {
                        pass_on(&mut held, |r| r <= 18, &mut sites);
                    }
                }
                Op::Return => pass_on(&mut held, |_| true, &mut sites),
                Op::Nothing => {}
                Op::Other(r) => pass_on(&mut held, |h| h == r, &mut sites),
            }
        }
        pass_on(&mut held, |_| true, &mut sites);
    }
    sites
}

/// Forgets what the registers `which` held; a function's address among them was passed on, not
/// called: a reference at the instruction that loaded it.
fn pass_on(held: &mut HashMap<u8, Held>, which: impl Fn(u8) -> bool, sites: &mut Sites) {
    held.retain(|&r, h| {
        if !which(r) {
            return true;
        }
        if let Held::Function(f, at) = *h {
            sites.references.push((f, Some(at)));
        }
        false
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branches_pages_and_loads_decode_to_their_targets() {
        // bl +8, b -4, adrp x16, +1 page, add x0, x1, #0x10, ldr x17, [x16, #0x18], blr x17, br x17, ret
        assert_eq!(op(0x9400_0002, 0x1000), Op::Call(0x1008));
        assert_eq!(op(0x17ff_ffff, 0x1000), Op::Jump(0xffc));
        assert_eq!(op(0xb000_0010, 0x1234), Op::Page { rd: 16, page: 0x2000 });
        assert_eq!(op(0x9100_4020, 0), Op::AddImm { rd: 0, rn: 1, imm: 0x10 });
        assert_eq!(op(0xf940_0e11, 0), Op::Load { rt: 17, rn: 16, imm: 0x18 });
        assert_eq!(op(0xd63f_0220, 0), Op::CallRegister(17));
        assert_eq!(op(0xd61f_0220, 0), Op::JumpRegister(17));
        assert_eq!(op(0xd65f_03c0, 0), Op::Return);
        // b.ne, cbz x17, tbnz w0, #3, nop, bti c
        for w in [0x5400_0041, 0xb400_0051, 0x3718_0040, 0xd503_201f, BTI_C] {
            assert_eq!(op(w, 0), Op::Nothing, "{w:#x}");
        }
        // adrp x0, -1 page
        assert_eq!(op(0xf0ff_ffe0, 0x5000), Op::Page { rd: 0, page: 0x4000 });
    }
}
