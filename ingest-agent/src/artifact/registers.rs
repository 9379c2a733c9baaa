//! What one function's code does with a wanted function's address it puts in a register: calls
//! through it (`mov rax, [rip+memcpy@GOT]` then `call rax`, as unoptimised Rust calls `memcpy`),
//! or passes it on (stores it, copies it, leaves it in an argument register at a call), which
//! takes the address.
//!
//! Followed in address order from each load to the register's next write, a call that may
//! overwrite it, or a `ret`, which covers straight-line code; there a load passed on and never
//! called counts as a reference. A load that nothing calls that way (a loop whose load sits at its
//! end, jumping back to the call) is followed again when the function ends, along its jumps and
//! branches within the function, and counts as a reference only where it reaches no call.

use iced_x86::{Decoder, DecoderOptions, Instruction, Mnemonic, OpKind, Register};
use std::collections::HashSet;

/// The general registers a System V call may overwrite; the first six pass its arguments.
const ARGUMENTS: [Register; 6] =
    [Register::RDI, Register::RSI, Register::RDX, Register::RCX, Register::R8, Register::R9];
const SCRATCH: [Register; 3] = [Register::RAX, Register::R10, Register::R11];

/// A wanted function's address in a register.
#[derive(Clone, Copy)]
struct Load {
    /// The register, as its full 64-bit name.
    register: Register,
    /// The function, by its index among those wanted.
    f: usize,
    /// The loading instruction.
    ip: u64,
    /// Whether a call went through it.
    called: bool,
    /// Whether it was read as a value: stored, copied, or left in an argument register at a call.
    passed: bool,
}

/// Where the code calls and references the functions looked for.
#[derive(Default)]
pub struct Sites {
    /// Each call site: (the function's index, the address of the calling instruction).
    pub calls: Vec<(usize, u64)>,
    /// Each reference: (the function's index, the instruction taking its address; none for a
    /// word of data).
    pub references: Vec<(usize, Option<u64>)>,
}

/// The code of the function being decoded: its section's bytes and the function's extent.
pub struct FunctionCode<'a> {
    pub bytes: &'a [u8],
    /// The address of `bytes[0]`.
    pub base: u64,
    pub start: u64,
    pub end: u64,
}

/// The registers of the function being decoded (`rax` 0 to `r15` 15).
#[derive(Default)]
pub struct Registers {
    held: [Option<Load>; 16],
    /// A bit per register in `held`, so that most instructions cost one test.
    holding: u16,
    /// Loads let go neither called nor passed on: (register, function, load site).
    loose: Vec<(Register, usize, u64)>,
    /// Calls already counted through a register, so that following a loose load counts none twice.
    counted: Vec<u64>,
}

fn index(register: Register) -> Option<usize> {
    let full = register.full_register() as usize;
    full.checked_sub(Register::RAX as usize).filter(|&i| i < 16)
}

impl Registers {
    /// Whether any register holds a wanted address: where none does, only loads matter.
    pub fn holding(&self) -> bool {
        self.holding != 0
    }

    /// `register` is loaded with function `f`'s address at `ip`.
    pub fn load(&mut self, register: Register, f: usize, ip: u64, sites: &mut Sites) {
        let Some(i) = index(register) else {
            sites.references.push((f, Some(ip)));
            return;
        };
        self.release(i, sites);
        self.held[i] = Some(Load { register: register.full_register(), f, ip, called: false, passed: false });
        self.holding |= 1 << i;
    }

    /// A call (or tail jump) through `register` at `ip`.
    pub fn call(&mut self, register: Register, ip: u64, sites: &mut Sites) {
        if let Some(Some(load)) = index(register).map(|i| &mut self.held[i]) {
            sites.calls.push((load.f, ip));
            self.counted.push(ip);
            load.called = true;
        }
    }

    /// `register` is read as a value (stored, copied, pushed): an address it holds is taken,
    /// unless a call goes through the register too (unoptimised code spills what it calls).
    pub fn read(&mut self, register: Register) {
        if let Some(Some(load)) = index(register).map(|i| &mut self.held[i]) {
            load.passed = true;
        }
    }

    /// `register` is overwritten (or restored by a `pop`).
    pub fn write(&mut self, register: Register, sites: &mut Sites) {
        if let Some(i) = index(register) {
            self.release(i, sites);
        }
    }

    /// A call: the registers it may overwrite are let go, and an address left in an argument
    /// register is passed to it.
    pub fn call_made(&mut self, sites: &mut Sites) {
        for r in ARGUMENTS {
            self.read(r);
            self.write(r, sites);
        }
        for r in SCRATCH {
            self.write(r, sites);
        }
    }

    /// A `ret`: nothing held flows past it.
    pub fn returned(&mut self, sites: &mut Sites) {
        for i in 0..16 {
            self.release(i, sites);
        }
    }

    /// The function's end: each loose load followed along the function's jumps, its calls
    /// counted, and counted as a reference where it reaches none.
    pub fn finish(&mut self, function: &FunctionCode<'_>, sites: &mut Sites) {
        self.returned(sites);
        for &(register, f, ip) in &self.loose {
            let calls = follow(function, ip, register);
            if calls.is_empty() {
                sites.references.push((f, Some(ip)));
            }
            let fresh: Vec<u64> = calls.into_iter().filter(|c| !self.counted.contains(c)).collect();
            self.counted.extend(&fresh);
            sites.calls.extend(fresh.into_iter().map(|c| (f, c)));
        }
        self.loose.clear();
        self.counted.clear();
    }

    fn release(&mut self, i: usize, sites: &mut Sites) {
        if let Some(load) = self.held[i].take() {
            match (load.called, load.passed) {
                (true, _) => {}
                (false, true) => sites.references.push((load.f, Some(load.ip))),
                (false, false) => self.loose.push((load.register, load.f, load.ip)),
            }
        }
        self.holding &= !(1 << i);
    }
}

/// The calls through `register` reached from the load at `load`, along every path within the
/// function until the register is overwritten.
fn follow(function: &FunctionCode<'_>, load: u64, register: Register) -> Vec<u64> {
    let volatile = ARGUMENTS.contains(&register) || SCRATCH.contains(&register);
    let mut decoder = Decoder::with_ip(64, function.bytes, function.base, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    let mut calls = Vec::new();
    let mut seen = HashSet::new();
    let mut todo = vec![load];
    let mut first = true;
    while let Some(mut ip) = todo.pop() {
        while ip >= function.start && ip < function.end && seen.insert(ip) {
            let Ok(at) = usize::try_from(ip - function.base) else { break };
            if decoder.set_position(at).is_err() {
                break;
            }
            decoder.set_ip(ip);
            decoder.decode_out(&mut instr);
            if instr.is_invalid() {
                break;
            }
            ip = instr.next_ip();
            if std::mem::take(&mut first) {
                continue;
            }
            if instr.is_call_near_indirect() || instr.is_jmp_near_indirect() {
                if instr.op0_kind() == OpKind::Register && instr.op0_register().full_register() == register {
                    calls.push(instr.ip());
                }
                if instr.is_jmp_near_indirect() || volatile {
                    break;
                }
                continue;
            }
            if instr.is_call_near() {
                if volatile {
                    break;
                }
                continue;
            }
            if instr.is_jmp_short_or_near() {
                todo.push(instr.near_branch_target());
                break;
            }
            if instr.is_jcc_short_or_near() {
                todo.push(instr.near_branch_target());
                continue;
            }
            let mnemonic = instr.mnemonic();
            if mnemonic == Mnemonic::Ret {
                break;
            }
            let written = instr.op_count() > 0
                && instr.op0_kind() == OpKind::Register
                && instr.op0_register().full_register() == register
                && !matches!(mnemonic, Mnemonic::Cmp | Mnemonic::Test | Mnemonic::Push);
            if written {
                break;
            }
        }
    }
    calls
}
