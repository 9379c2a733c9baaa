//! The source line of an address, from the artifact's DWARF line tables, where it has them.
//! Read only for the call sites a scan reports, so an artifact with large debug information costs
//! the units those sites lie in, not all of them.

use super::elf::Image;
use addr2line::gimli::{self, EndianSlice, RunTimeEndian};
use std::borrow::Cow;
use std::io::Read;

/// The artifact's debug sections, decompressed where they were compressed with zlib (`-gz`).
pub struct DebugSections<'data> {
    sections: Vec<(&'data str, Cow<'data, [u8]>)>,
}

/// The line tables of [`DebugSections`], ready to answer.
pub struct Lines<'a> {
    context: Option<addr2line::Context<EndianSlice<'a, RunTimeEndian>>>,
}

impl<'data> DebugSections<'data> {
    /// The `.debug_*` sections of `image`; a section compressed some way other than zlib is left
    /// out, and the lines it would give are then not found.
    pub fn of(image: &Image<'data>) -> DebugSections<'data> {
        let sections = image
            .sections
            .iter()
            .filter(|s| s.name.starts_with(".debug_"))
            .filter_map(|s| {
                if !s.flags.contains(object::elf::SHF_COMPRESSED) {
                    return Some((s.name, Cow::Borrowed(s.bytes)));
                }
                zlib_section(s.bytes).map(|bytes| (s.name, Cow::Owned(bytes)))
            })
            .collect();
        DebugSections { sections }
    }

    /// Their line tables; none where there is no `.debug_info` or it cannot be read.
    pub fn lines(&self) -> Lines<'_> {
        if !self.sections.iter().any(|(name, _)| *name == ".debug_info") {
            return Lines { context: None };
        }
        let section = |id: gimli::SectionId| {
            let bytes = self.sections.iter().find(|(name, _)| *name == id.name()).map_or(&[][..], |(_, b)| b);
            Ok::<_, gimli::Error>(EndianSlice::new(bytes, RunTimeEndian::Little))
        };
        let context = gimli::Dwarf::load(section).ok().and_then(|dwarf| addr2line::Context::from_dwarf(dwarf).ok());
        Lines { context }
    }
}

impl Lines<'_> {
    /// `file:line` of `address` in the function that holds it, where the line tables cover it:
    /// where code was inlined there (Rust's `ptr::copy_nonoverlapping` becoming a `memcpy`
    /// call), the line of the outermost call, not the inlined function's own.
    pub fn location(&self, address: u64) -> Option<String> {
        let context = self.context.as_ref()?;
        let mut outermost = None;
        if let Ok(mut frames) = context.find_frames(address).skip_all_loads() {
            while let Ok(Some(frame)) = frames.next() {
                outermost = frame.location.or(outermost);
            }
        }
        let location = match outermost {
            Some(location) => location,
            None => context.find_location(address).ok()??,
        };
        Some(format!("{}:{}", location.file?, location.line?))
    }
}

/// A section compressed as `SHF_COMPRESSED` with zlib, decompressed; its header is an
/// `Elf64_Chdr` (type, reserved, size, alignment).
fn zlib_section(bytes: &[u8]) -> Option<Vec<u8>> {
    let header = bytes.get(..24)?;
    if u32::from_le_bytes(header[..4].try_into().ok()?) != object::elf::ELFCOMPRESS_ZLIB.0 {
        return None;
    }
    let size = u64::from_le_bytes(header[8..16].try_into().ok()?);
    let mut out = Vec::with_capacity(usize::try_from(size).ok()?.min(1 << 30));
    flate2::read::ZlibDecoder::new(&bytes[24..]).read_to_end(&mut out).ok()?;
    Some(out)
}
