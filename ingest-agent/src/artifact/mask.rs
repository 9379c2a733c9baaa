//! Which bits of a function's body linking moves, found by decoding it: where the function lies
//! in another link, those bits differ and the rest do not.
//!
//! - x86-64: the displacement of a relative call, jump or branch that leaves the body; a
//!   RIP-relative displacement; an absolute displacement or immediate of 4 or 8 bytes that is an
//!   address of the image (a fixed-address executable writes addresses as plain numbers).
//! - aarch64: the offset of a `bl`, `b`, conditional branch or literal load that leaves the body;
//!   the page of every `adrp` and `adr`; the 12-bit immediate of an `add` or a load or store whose
//!   base register an `adrp` set (the low bits of the same address).

use super::elf::Image;
use iced_x86::{Decoder, DecoderOptions, Instruction, Mnemonic, Register};

/// A body's mask and what it calls.
pub struct Masked {
    /// How many of the body's bytes belong to it (trailing padding cut, where no size was given).
    pub len: usize,
    /// Per byte, the bits that stay put in another link.
    pub mask: Vec<u8>,
    /// The calls and jumps that leave the body, and on x86-64 the addresses it loads with a
    /// RIP-relative `lea` (an ifunc resolver's variants): (offset of the instruction, target).
    pub calls: Vec<(u32, u64)>,
}

/// The mask of `body`, the code at `address` in `image`; `padded` when its size was not given
/// and padding may follow its last instruction. None for a machine whose code is not decoded.
pub fn body(image: &Image<'_>, body: &[u8], address: u64, padded: bool) -> Option<Masked> {
    match image.machine {
        object::elf::EM_X86_64 => Some(x86(image, body, address, padded)),
        object::elf::EM_AARCH64 if image.bits64 => Some(aarch64(body, address, padded)),
        _ => None,
    }
}

/// The target of the call or jump at `address` in `code` (the artifact's bytes from there), when
/// it is a direct one, or on x86-64 the address a RIP-relative `lea` there loads: how a short
/// function is found through a recognised one that calls it, and an ifunc's resolver through the
/// variants it returns.
pub fn call_target(image: &Image<'_>, code: &[u8], address: u64) -> Option<u64> {
    match image.machine {
        object::elf::EM_X86_64 => {
            let mut decoder = Decoder::with_ip(64, code, address, DecoderOptions::NONE);
            let instr = decoder.decode();
            if instr.mnemonic() == Mnemonic::Lea && instr.is_ip_rel_memory_operand() {
                return Some(instr.ip_rel_memory_address());
            }
            (instr.is_call_near() || instr.is_jmp_short_or_near()).then(|| instr.near_branch_target())
        }
        object::elf::EM_AARCH64 => {
            let word = u32::from_le_bytes(code.get(..4)?.try_into().ok()?);
            (word & 0x7c00_0000 == 0x1400_0000).then(|| branch26(word, address))
        }
        _ => None,
    }
}

/// The range of addresses `image` loads: a number in it may be an address.
fn loaded(image: &Image<'_>) -> std::ops::Range<u64> {
    let alloc = image.sections.iter().filter(|s| s.flags.contains(object::elf::SHF_ALLOC) && s.address != 0);
    let start = alloc.clone().map(|s| s.address).min().unwrap_or(0);
    let end = alloc.map(|s| s.address.saturating_add(s.bytes.len().max(1) as u64)).max().unwrap_or(0);
    start..end
}

fn x86(image: &Image<'_>, body: &[u8], address: u64, padded: bool) -> Masked {
    let range = loaded(image);
    let end = address + body.len() as u64;
    let mut mask = vec![0xffu8; body.len()];
    let mut calls = Vec::new();
    let mut len = 0;
    let mut decoder = Decoder::with_ip(64, body, address, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    while decoder.can_decode() {
        decoder.decode_out(&mut instr);
        let at = (instr.ip() - address) as usize;
        if !padded || !matches!(instr.mnemonic(), Mnemonic::Nop | Mnemonic::Int3) {
            len = at + instr.len();
        }
        let offsets = decoder.get_constant_offsets(&instr);
        let mut clear = |offset: usize, size: usize| {
            for m in mask.iter_mut().skip(at + offset).take(size) {
                *m = 0;
            }
        };
        let branch = instr.is_call_near() || instr.is_jmp_short_or_near() || instr.is_jcc_short_or_near();
        if branch {
            let target = instr.near_branch_target();
            if !(address..end).contains(&target) {
                clear(offsets.immediate_offset(), offsets.immediate_size());
                calls.push((at as u32, target));
            }
            continue;
        }
        if offsets.has_displacement() {
            let absolute = instr.memory_base() == Register::None && range.contains(&instr.memory_displacement64());
            if instr.is_ip_rel_memory_operand() || absolute {
                clear(offsets.displacement_offset(), offsets.displacement_size());
            }
            if instr.mnemonic() == Mnemonic::Lea && instr.is_ip_rel_memory_operand() {
                let target = instr.ip_rel_memory_address();
                if !(address..end).contains(&target) {
                    calls.push((at as u32, target));
                }
            }
        }
        if offsets.has_immediate() && offsets.immediate_size() >= 4 {
            let value = (0..instr.op_count()).find_map(|i| match instr.op_kind(i) {
                iced_x86::OpKind::Immediate32 | iced_x86::OpKind::Immediate32to64 | iced_x86::OpKind::Immediate64 => {
                    Some(instr.immediate(i))
                }
                _ => None,
            });
            if value.is_some_and(|v| range.contains(&v)) {
                clear(offsets.immediate_offset(), offsets.immediate_size());
            }
        }
    }
    mask.truncate(len);
    Masked { len, mask, calls }
}

/// The target of a `b` or `bl` word at `pc`.
fn branch26(word: u32, pc: u64) -> u64 {
    pc.wrapping_add((((word & 0x03ff_ffff) as i32) << 6 >> 4) as i64 as u64)
}

/// The target of a 19-bit PC-relative offset at bits 5 to 23 (conditional branches, `cbz`,
/// literal loads).
fn offset19(word: u32, pc: u64) -> u64 {
    pc.wrapping_add(((((word >> 5) & 0x7ffff) as i32) << 13 >> 11) as i64 as u64)
}

fn aarch64(body: &[u8], address: u64, padded: bool) -> Masked {
    const NOP: u32 = 0xd503_201f;
    let end = address + body.len() as u64;
    let words = body.len() / 4;
    let mut mask = vec![0xffu8; words * 4];
    let mut calls = Vec::new();
    let mut len = 0;
    // The registers an `adrp` set: an `add` or load from them completes an address.
    let mut pages = 0u32;
    for i in 0..words {
        let word = u32::from_le_bytes(body[i * 4..i * 4 + 4].try_into().unwrap_or_default());
        let pc = address + 4 * i as u64;
        if !padded || (word != NOP && word != 0) {
            len = 4 * (i + 1);
        }
        let (rd, rn) = (word & 31, (word >> 5) & 31);
        let mut clear = |bits: u32| {
            for (b, m) in mask[i * 4..i * 4 + 4].iter_mut().enumerate() {
                *m &= !((bits >> (8 * b)) & 0xff) as u8;
            }
        };
        let leaves = |target: u64| !(address..end).contains(&target);
        if word & 0x7c00_0000 == 0x1400_0000 {
            // b, bl
            let target = branch26(word, pc);
            if leaves(target) {
                clear(0x03ff_ffff);
                calls.push((4 * i as u32, target));
            }
        } else if word & 0x1f00_0000 == 0x1000_0000 {
            // adrp, adr: the page or address is where the link put it.
            clear(0x60ff_ffe0);
            if word & 0x8000_0000 != 0 {
                pages |= 1 << rd;
            }
        } else if word & 0x7f80_0000 == 0x1100_0000 && pages & (1 << rn) != 0 {
            // add xd, xn, #:lo12:symbol
            clear(0x003f_fc00);
        } else if word & 0x3b00_0000 == 0x3900_0000 && pages & (1 << rn) != 0 {
            // ldr/str (unsigned offset) from [xn, #:lo12:symbol]
            clear(0x003f_fc00);
        } else if (word & 0xff00_0010 == 0x5400_0000
            || word & 0x7e00_0000 == 0x3400_0000
            || word & 0x3b00_0000 == 0x1800_0000)
            && leaves(offset19(word, pc))
        {
            // b.cond, cbz/cbnz, ldr (literal) out of the body
            clear(0x00ff_ffe0);
        }
    }
    mask.truncate(len);
    Masked { len, mask, calls }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_masks_what_moves_and_keeps_the_rest() {
        // call rel32 (leaves); lea rax, [rip+0x1000]; mov eax, 0x12345678 (not an address); jmp -2 (inside)
        let code = [
            0xe8, 0x10, 0x00, 0x00, 0x00, 0x48, 0x8d, 0x05, 0x00, 0x10, 0x00, 0x00, 0xb8, 0x78, 0x56, 0x34, 0x12, 0xeb,
            0xfe,
        ];
        let image = crate::artifact::tests::empty_image(object::elf::EM_X86_64);
        let m = x86(&image, &code, 0x40_0000, false);
        assert_eq!(m.mask[..5], [0xff, 0, 0, 0, 0], "the call's target moves");
        assert_eq!(m.mask[5..12], [0xff, 0xff, 0xff, 0, 0, 0, 0], "the RIP-relative displacement moves");
        assert!(m.mask[12..].iter().all(|&b| b == 0xff), "a constant and a jump within the body stay");
        assert_eq!(m.calls, [(0, 0x40_0015), (5, 0x40_100c)], "the call, and the address the lea loads");
    }

    #[test]
    fn aarch64_masks_branches_pages_and_their_low_bits() {
        // bl +0x100; adrp x1, page; add x1, x1, #0x10; ldr x2, [x1, #8]; add x3, x4, #5; b.ne -4 (inside)
        let words: [u32; 6] = [0x9400_0040, 0x9000_0001, 0x9100_4021, 0xf940_0422, 0x9100_1483, 0x54ff_ffe1];
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let m = aarch64(&code, 0x1000, false);
        let word_mask = |i: usize| u32::from_le_bytes(m.mask[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(word_mask(0), 0xfc00_0000);
        assert_eq!(word_mask(1), !0x60ff_ffe0);
        assert_eq!(word_mask(2), !0x003f_fc00, "add from the adrp'd register");
        assert_eq!(word_mask(3), !0x003f_fc00, "load from the adrp'd register");
        assert_eq!(word_mask(4), 0xffff_ffff, "add from another register is the function's own");
        assert_eq!(word_mask(5), 0xffff_ffff, "a branch within the body stays");
        assert_eq!(m.calls, [(0, 0x1100)]);
    }
}
