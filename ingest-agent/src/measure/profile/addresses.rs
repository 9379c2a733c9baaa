//! Names for what callgrind knows only by address: a stripped program's functions, which it calls
//! `0x00000000010015ea` (one such "function" per block entered by a jump from elsewhere). Each
//! address is named by the function that holds it, as the program's symbols, its libc's
//! fingerprints and its unwind tables give them ([`CodeNames`]); code they leave unnamed stays an
//! address range of the program, never a guess.

use crate::artifact::CodeNames;
use std::collections::HashMap;

/// The address a function name is, when callgrind had nothing better: `0x` and hex digits.
pub(super) fn address(name: &str) -> Option<u64> {
    let hex = name.strip_prefix("0x")?;
    if hex.is_empty() || hex.len() > 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// Names the addresses of one program as it ran.
pub(super) struct AddressNamer<'a> {
    code: &'a CodeNames,
    /// What the loader added to the file's addresses.
    bias: u64,
    /// The program's file name, for code nothing names.
    program: String,
}

impl<'a> AddressNamer<'a> {
    /// A namer for the program whose file is called `program`, its functions `code`, seen by
    /// callgrind at `seen` (which place a moved program, a PIE, at its load address).
    pub(super) fn new(code: &'a CodeNames, program: &str, seen: &[u64]) -> AddressNamer<'a> {
        let bias = match code.fixed {
            true => 0,
            false => load_bias(seen, &code.functions.iter().map(|f| f.0).collect::<Vec<u64>>()),
        };
        AddressNamer { code, bias, program: program.to_string() }
    }

    /// The name of the code callgrind saw at `address`: its function's, the range of a function
    /// only the unwind tables know, or the address itself where nothing knows the code; ranges
    /// and addresses are the file's. None below where the program was loaded, which is none of
    /// its code.
    pub(super) fn name(&self, address: u64) -> Option<String> {
        let address = address.checked_sub(self.bias)?;
        Some(match self.code.at(address) {
            Some((_, _, Some(name))) => name.clone(),
            Some((start, end, None)) => format!("{start:#x}–{:#x} in {}", end - 1, self.program),
            None => format!("{address:#x} in {}", self.program),
        })
    }
}

/// What the loader added to a moved program's addresses: the bias that puts the most of the
/// addresses callgrind `seen` on a function start of `starts` (a function's first block is
/// entered by its call). A loader moves a program by whole pages, so a candidate keeps the low 12
/// bits: each address less each start that shares them, and 0. On a tie, 0, then the smallest.
fn load_bias(seen: &[u64], starts: &[u64]) -> u64 {
    let mut by_page_offset: HashMap<u64, Vec<u64>> = HashMap::new();
    for &s in starts {
        by_page_offset.entry(s & 0xfff).or_default().push(s);
    }
    // A start is one function's, so each (address, start) pair is one address on a start.
    let mut on_a_start: HashMap<u64, usize> = HashMap::from([(0, 0)]);
    for &a in seen {
        for &s in by_page_offset.get(&(a & 0xfff)).into_iter().flatten().filter(|&&s| s <= a) {
            *on_a_start.entry(a - s).or_default() += 1;
        }
    }
    on_a_start.into_iter().max_by_key(|&(bias, hits)| (hits, bias == 0, std::cmp::Reverse(bias))).map_or(0, |(b, _)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_hex_address_is_one() {
        assert_eq!(address("0x00000000010015ea"), Some(0x10015ea));
        for name in ["strspn", "0x", "0x12g4", "0x10015ea'2", "0x00000000000000000"] {
            assert_eq!(address(name), None, "{name}");
        }
    }

    #[test]
    fn the_load_bias_puts_the_most_addresses_on_a_function_start() {
        let starts = [0x1040, 0x10a0, 0x1200, 0x2040];
        // Loaded at 0x5555_5555_4000: two first blocks on starts, one a later block.
        let seen = [0x5555_5555_5040, 0x5555_5555_50a0, 0x5555_5555_50b7];
        assert_eq!(load_bias(&seen, &starts), 0x5555_5555_4000);
        assert_eq!(load_bias(&[0x1040, 0x1200], &starts), 0, "not moved");
        assert_eq!(load_bias(&[0x7777], &starts), 0, "nothing on a start: not moved");
        // One address on a start either way: the tie keeps it unmoved.
        assert_eq!(load_bias(&[0x1040, 0x3200], &starts), 0);
    }

    #[test]
    fn a_moved_program_is_named_at_its_files_addresses() {
        let code = CodeNames {
            fixed: false,
            functions: vec![(0x1040, 0x10a0, Some("strspn".into())), (0x10a0, 0x1100, None)],
        };
        let namer = AddressNamer::new(&code, "prog", &[0x40_1040, 0x40_10a0]);
        assert_eq!(namer.name(0x40_1052).as_deref(), Some("strspn"));
        assert_eq!(namer.name(0x40_10b0).as_deref(), Some("0x10a0–0x10ff in prog"));
        assert_eq!(namer.name(0x40_2000).as_deref(), Some("0x2000 in prog"));
        assert_eq!(namer.name(0x1052), None, "below the program");
    }
}
