//! Where the functions of a stripped artifact begin and end, from its unwind tables: `.eh_frame`
//! keeps a frame description for every function that may be unwound through, and a strip keeps
//! it, since a C++ exception or a Rust panic needs it at run time. A call site in a function no
//! symbol names is then given by that function's address rather than left unknown.

use super::elf::Image;
use addr2line::gimli::{self, BaseAddresses, CieOrFde, EhFrame, UnwindSection};

/// The ranges of code `.eh_frame` describes, as (start, length), sorted and without duplicates;
/// empty where it has none or cannot be read.
pub fn ranges(image: &Image<'_>) -> Vec<(u64, u64)> {
    let Some(eh) = image.sections.iter().find(|s| s.name == ".eh_frame" && !s.bytes.is_empty()) else {
        return Vec::new();
    };
    let endian = if image.little { gimli::RunTimeEndian::Little } else { gimli::RunTimeEndian::Big };
    let mut frame = EhFrame::new(eh.bytes, endian);
    frame.set_address_size(if image.bits64 { 8 } else { 4 });
    let mut bases = BaseAddresses::default().set_eh_frame(eh.address);
    if let Some(text) = image.sections.iter().find(|s| s.name == ".text") {
        bases = bases.set_text(text.address);
    }
    let mut out = Vec::new();
    let mut entries = frame.entries(&bases);
    while let Ok(Some(entry)) = entries.next() {
        if let CieOrFde::Fde(partial) = entry {
            if let Ok(fde) = partial.parse(EhFrame::cie_from_offset) {
                if fde.len() > 0 {
                    out.push((fde.initial_address(), fde.len()));
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup_by_key(|r| r.0);
    out
}
