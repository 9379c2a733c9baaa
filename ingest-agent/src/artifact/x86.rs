//! The calls and address-takings of x86-64 code, found by decoding every executable section once.
//!
//! A call site is a `call` or a `jmp`/`jcc` (a tail call) whose target is a function looked for,
//! directly (`call rel32`), through its PLT stub (`.plt`, `.plt.sec` after `endbr64`, `.plt.got`,
//! and static glibc's stubs for its ifuncs), or through its GOT slot (`call [rip+slot]`, as
//! `-fno-plt` builds call), or through a register it was loaded into (see `registers`). A
//! reference is its address taken: `lea reg, [rip+f]`, a load of its GOT slot, or an immediate
//! equal to its address in a fixed-address executable, where the register is passed on rather
//! than called; or a word of data pointing at it (a relocation, or in a fixed-address executable
//! the word itself).

use super::elf::Image;
pub use super::registers::Sites;
use super::registers::{FunctionCode, Registers};
use super::slots::{self, Wanted};
use iced_x86::{Code, Decoder, DecoderOptions, Instruction, Mnemonic, OpKind};
use std::collections::HashMap;

/// Decodes `image`'s executable sections and says where they call and reference what `wanted`
/// names.
pub fn decode(image: &Image<'_>, wanted: &Wanted) -> Sites {
    let mut sites = Sites::default();
    let slots = slots::of(image, wanted, &mut sites);

    // The PLT first, so that calls to its stubs are known when the rest is decoded.
    let (plt, rest) = slots::code(image);
    let mut stubs: HashMap<u64, usize> = HashMap::new();
    let mut instr = Instruction::default();
    for s in plt {
        let mut decoder = Decoder::with_ip(64, s.bytes, s.address, DecoderOptions::NONE);
        let mut endbr = None;
        while decoder.can_decode() {
            decoder.decode_out(&mut instr);
            if instr.is_jmp_near_indirect() && instr.is_ip_rel_memory_operand() {
                if let Some(&f) = slots.get(&instr.ip_rel_memory_address()) {
                    stubs.insert(instr.ip(), f);
                    // A stub with indirect branch tracking begins at its `endbr64`.
                    if let Some(start) = endbr.filter(|&e| e + 4 == instr.ip()) {
                        stubs.insert(start, f);
                    }
                }
            }
            endbr = (instr.code() == Code::Endbr64).then(|| instr.ip());
        }
    }
    if image.fixed {
        slots::data_words(image, |word| stubs.get(&word).copied(), &mut sites);
    }
    let entry = |address: u64| wanted.at.get(&address).or_else(|| stubs.get(&address)).copied();
    let starts: Vec<u64> = image.functions.iter().map(|f| f.address).collect();
    let mut registers = Registers::default();
    for s in rest {
        let mut decoder = Decoder::with_ip(64, s.bytes, s.address, DecoderOptions::NONE);
        let mut next = starts.partition_point(|&a| a <= s.address);
        // Where the function being decoded starts: registers are followed within it.
        let mut start = s.address;
        while decoder.can_decode() {
            decoder.decode_out(&mut instr);
            let ip = instr.ip();
            if starts.get(next).is_some_and(|&boundary| ip >= boundary) {
                registers.finish(&FunctionCode { bytes: s.bytes, base: s.address, start, end: ip }, &mut sites);
                next = starts.partition_point(|&a| a <= ip);
                start = ip;
            }
            if instr.is_call_near() || instr.is_jmp_short_or_near() || instr.is_jcc_short_or_near() {
                if let Some(f) = entry(instr.near_branch_target()) {
                    sites.calls.push((f, ip));
                }
                if instr.is_call_near() {
                    registers.call_made(&mut sites);
                }
                continue;
            }
            if instr.is_call_near_indirect() || instr.is_jmp_near_indirect() {
                if instr.op0_kind() == OpKind::Register {
                    registers.call(instr.op0_register(), ip, &mut sites);
                } else if instr.is_ip_rel_memory_operand() {
                    if let Some(&f) = slots.get(&instr.ip_rel_memory_address()) {
                        sites.calls.push((f, ip));
                    }
                }
                if instr.is_call_near_indirect() {
                    registers.call_made(&mut sites);
                }
                continue;
            }
            let mnemonic = instr.mnemonic();
            if mnemonic == Mnemonic::Ret {
                registers.returned(&mut sites);
                continue;
            }
            let loaded = if instr.is_ip_rel_memory_operand() {
                let address = instr.ip_rel_memory_address();
                match mnemonic {
                    Mnemonic::Lea => entry(address),
                    Mnemonic::Mov => slots.get(&address).copied(),
                    _ => None,
                }
            } else if image.fixed && matches!(mnemonic, Mnemonic::Mov | Mnemonic::Push) {
                immediate(&instr).and_then(entry)
            } else {
                None
            };
            if registers.holding() {
                let first_read = if mnemonic == Mnemonic::Push { 0 } else { 1 };
                for i in first_read..instr.op_count() {
                    if instr.op_kind(i) == OpKind::Register {
                        registers.read(instr.op_register(i));
                    }
                }
            }
            let register = (instr.op_count() > 0 && instr.op0_kind() == OpKind::Register)
                .then(|| instr.op0_register())
                .filter(|_| !matches!(mnemonic, Mnemonic::Cmp | Mnemonic::Test | Mnemonic::Push));
            match (register, loaded) {
                (Some(r), Some(f)) => registers.load(r, f, ip, &mut sites),
                (Some(r), None) => registers.write(r, &mut sites),
                (None, Some(f)) => sites.references.push((f, Some(ip))),
                (None, None) => {}
            }
        }
        let end = s.address.saturating_add(s.bytes.len() as u64);
        registers.finish(&FunctionCode { bytes: s.bytes, base: s.address, start, end }, &mut sites);
    }
    sites
}

/// The immediate of a `mov`/`push` wide enough to be an address.
fn immediate(instr: &Instruction) -> Option<u64> {
    (0..instr.op_count()).find_map(|i| match instr.op_kind(i) {
        OpKind::Immediate32 | OpKind::Immediate32to64 | OpKind::Immediate64 => Some(instr.immediate(i)),
        _ => None,
    })
}
