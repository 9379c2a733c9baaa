//! An ELF artifact read into what a scan needs, for any machine and either class: its sections,
//! its functions grouped by address, its imports, its dynamic relocations, and what it says of how
//! it was linked (interpreter, needed libraries, build ID, `.comment`).

use object::elf;
use object::read::elf::{Dyn, ElfFile, FileHeader, ProgramHeader, Rela, SectionHeader, Sym};
use object::{Endianness, Object, SectionIndex, SymbolIndex};
use std::collections::HashMap;

/// What a scan reads of one ELF file.
pub struct Image<'data> {
    /// `e_machine`, e.g. `EM_X86_64`.
    pub machine: elf::Machine,
    /// Whether it is of ELF's 64-bit class.
    pub bits64: bool,
    /// Whether it is little-endian (`ppc64le`, `mipsel` rather than `ppc64`, `mips`).
    pub little: bool,
    /// `ET_EXEC`: code and data sit at the addresses the link gave them, so an address written
    /// as a plain number (an immediate, a data word) is an address.
    pub fixed: bool,
    /// `PT_INTERP`: none for a static executable or a shared library.
    pub interpreter: Option<String>,
    /// The `DT_NEEDED` libraries, in order.
    pub needed: Vec<String>,
    /// The bytes of its `.note.gnu.build-id`.
    pub build_id: Option<Vec<u8>>,
    /// Every section; where the file has no section headers, its loadable segments in their place.
    pub sections: Vec<Section<'data>>,
    /// The defined functions, one entry per address, sorted by address.
    pub functions: Vec<Function<'data>>,
    /// Whether `functions` came from a `.symtab` (else from `.dynsym`, which a strip keeps).
    pub symtab: bool,
    /// Whether it has a `.dynsym`: a dynamic artifact names its imports there even stripped.
    pub dynsym: bool,
    /// The functions it imports: the undefined symbols of `.dynsym`.
    pub imports: Vec<Import<'data>>,
    /// Its dynamic relocations (`.rela.dyn`, `.rela.plt`, `.relr.dyn`) that name a target.
    pub relocations: Vec<Relocation>,
    /// The strings of `.comment`: the compilers and linkers that made it.
    pub comment: Vec<String>,
}

/// A section, or a loadable segment standing in for one in a file without section headers.
pub struct Section<'data> {
    /// Its name; empty for a segment.
    pub name: &'data str,
    pub address: u64,
    /// Its bytes in the file: empty where it has none (`SHT_NOBITS`).
    pub bytes: &'data [u8],
    /// `sh_type`: `SHT_PROGBITS` for a segment.
    pub kind: elf::SectionType,
    /// `sh_flags`: `SHF_ALLOC`, `SHF_EXECINSTR`, `SHF_COMPRESSED`, ….
    pub flags: elf::SectionFlags,
}

impl Section<'_> {
    /// Whether it holds code that runs.
    pub fn executable(&self) -> bool {
        self.flags.contains(elf::SHF_EXECINSTR.with(elf::SHF_ALLOC))
    }

    /// Whether `address` lies in its bytes.
    pub fn holds(&self, address: u64) -> bool {
        address >= self.address && address - self.address < self.bytes.len() as u64
    }

    /// The 8-byte little-endian word at `address`, where it lies in its bytes.
    pub fn word(&self, address: u64) -> Option<u64> {
        let at = usize::try_from(address.checked_sub(self.address)?).ok()?;
        Some(u64::from_le_bytes(self.bytes.get(at..at.checked_add(8)?)?.try_into().ok()?))
    }
}

/// The names a symbol table gives one address, and how far its code reaches.
pub struct Function<'data> {
    pub address: u64,
    /// The largest `st_size` among its names; 0 where none says (hand-written assembly often).
    pub size: u64,
    pub names: Vec<SymbolName<'data>>,
}

/// One symbol name of a function.
pub struct SymbolName<'data> {
    pub text: &'data str,
    /// `STB_GLOBAL`: exported as the function's own name (not a weak alias, not local).
    pub global: bool,
}

/// One undefined function symbol of `.dynsym`.
pub struct Import<'data> {
    /// Its name, without the symbol version `.gnu.version` gives it (`GLIBC_2.2.5`).
    pub name: &'data str,
    /// Its `st_value`: in an `ET_EXEC` whose code takes the function's address, the PLT entry
    /// that stands for the function (its canonical address); else 0.
    pub address: u64,
}

/// A dynamic relocation: a word at `offset` the loader sets to point at `target`.
pub struct Relocation {
    pub offset: u64,
    pub kind: RelocationKind,
    pub target: Target,
}

/// What a relocation does, across machines.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RelocationKind {
    /// A GOT slot for a symbol (`GLOB_DAT`, `JUMP_SLOT`): what code calls or loads through.
    Slot,
    /// The resolver of an ifunc (`IRELATIVE`): the slot gets what the resolver returns.
    Resolved,
    /// A word of data pointing at a symbol or an address (`R_X86_64_64`, `RELATIVE`, RELR).
    Word,
}

/// Where a relocation, or a call, leads.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Target {
    /// An address in the artifact.
    Address(u64),
    /// An import, by its index in [`Image::imports`].
    Import(usize),
}

/// `data` read as ELF of either class; the error says what is cut short or inconsistent.
pub fn read(data: &[u8]) -> Result<Image<'_>, String> {
    match data.get(4) {
        Some(1) => read_class::<elf::FileHeader32<Endianness>>(data),
        _ => read_class::<elf::FileHeader64<Endianness>>(data),
    }
}

/// `data` read as ELF of the class `E`.
fn read_class<E: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<Image<'_>, String> {
    let header = E::parse(data).map_err(|e| {
        if data.len() < std::mem::size_of::<E>() {
            format!("its ELF header is cut short at {} bytes", data.len())
        } else {
            said(e)
        }
    })?;
    let endian = header.endian().map_err(said)?;
    check_tables(header, endian, data.len() as u64)?;
    let file = ElfFile::<E>::parse(data).map_err(said)?;
    let table = file.elf_section_table();
    let mut sections = Vec::new();
    for s in table.iter() {
        let name = table.section_name(endian, s).ok().and_then(|n| std::str::from_utf8(n).ok()).unwrap_or("");
        let bytes = if s.sh_type(endian) == elf::SHT_NOBITS {
            &[][..]
        } else {
            s.data(endian, data).map_err(|_| format!("section {name:?} runs past the end of the file"))?
        };
        let (address, kind, flags) = (s.sh_addr(endian).into(), s.sh_type(endian), s.sh_flags(endian));
        sections.push(Section { name, address, bytes, kind, flags });
    }
    let segments = file.elf_program_headers();
    if table.is_empty() {
        for p in segments.iter().filter(|p| p.p_type(endian) == elf::PT_LOAD) {
            let bytes = p.data(endian, data).map_err(|_| "a loadable segment runs past the end of the file")?;
            let mut flags = elf::SHF_ALLOC;
            if p.p_flags(endian).contains(elf::PF_X) {
                flags = flags.with(elf::SHF_EXECINSTR);
            }
            sections.push(Section {
                name: "",
                address: p.p_vaddr(endian).into(),
                bytes,
                kind: elf::SHT_PROGBITS,
                flags,
            });
        }
    }
    let mut interpreter = None;
    for p in segments {
        if let Some(path) = p.interpreter(endian, data).map_err(said)? {
            interpreter = Some(String::from_utf8_lossy(path).into_owned());
        }
    }
    let (imports, import_of) = imports(&file, endian);
    let relocations = relocations(&file, header.e_machine(endian), &import_of, &sections)?;
    let symtab = !file.elf_symbol_table().is_empty();
    Ok(Image {
        machine: header.e_machine(endian),
        bits64: header.is_type_64(),
        little: header.is_little_endian(),
        fixed: header.e_type(endian) == elf::ET_EXEC,
        interpreter,
        needed: needed(&file, endian, data)?,
        build_id: file.build_id().ok().flatten().map(<[u8]>::to_vec),
        comment: comment(&sections),
        sections,
        functions: functions(&file, endian, symtab),
        symtab,
        dynsym: !file.elf_dynamic_symbol_table().is_empty(),
        imports,
        relocations,
    })
}

/// What `object` says is wrong, as the rest of a sentence: "invalid ELF symbol index".
fn said(e: object::Error) -> String {
    let text = e.to_string();
    let mut chars = text.chars();
    chars.next().map_or(text.clone(), |first| first.to_lowercase().chain(chars).collect())
}

/// The distinct strings of `.comment`.
fn comment(sections: &[Section<'_>]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for text in sections.iter().filter(|s| s.name == ".comment").flat_map(|s| s.bytes.split(|&b| b == 0)) {
        let text = String::from_utf8_lossy(text).trim().to_string();
        if !text.is_empty() && !all.contains(&text) {
            all.push(text);
        }
    }
    all
}

/// The functions defined in code, grouped by address and sorted: from `.symtab`, or where
/// `symtab` is false (it was stripped), from `.dynsym`.
fn functions<'data, E: FileHeader<Endian = Endianness>>(
    file: &ElfFile<'data, E>,
    endian: Endianness,
    symtab: bool,
) -> Vec<Function<'data>> {
    let table = file.elf_section_table();
    let symbols = if symtab { file.elf_symbol_table() } else { file.elf_dynamic_symbol_table() };
    let mut defined: Vec<(u64, u64, SymbolName<'data>)> = Vec::new();
    for sym in symbols.iter() {
        let in_code = match sym.st_shndx(endian) {
            elf::SHN_UNDEF | elf::SHN_ABS | elf::SHN_COMMON => false,
            i => table.section(SectionIndex(i.0.into())).is_ok_and(|s| s.sh_flags(endian).contains(elf::SHF_EXECINSTR)),
        };
        if !in_code || !matches!(sym.st_type(), elf::STT_FUNC | elf::STT_GNU_IFUNC | elf::STT_NOTYPE) {
            continue;
        }
        let Some(text) = symbols.symbol_name(endian, sym).ok().and_then(|n| std::str::from_utf8(n).ok()) else {
            continue;
        };
        // Assembler labels and mapping symbols name places inside functions, not functions.
        if text.is_empty() || text.starts_with(".L") || text.starts_with('$') {
            continue;
        }
        let name = SymbolName { text, global: sym.st_bind() == elf::STB_GLOBAL };
        defined.push((sym.st_value(endian).into(), sym.st_size(endian).into(), name));
    }
    defined.sort_by_key(|(address, _, _)| *address);
    let mut functions: Vec<Function<'data>> = Vec::new();
    for (address, size, name) in defined {
        match functions.last_mut() {
            Some(f) if f.address == address => {
                f.size = f.size.max(size);
                if !f.names.iter().any(|n| n.text == name.text) {
                    f.names.push(name);
                }
            }
            _ => functions.push(Function { address, size, names: vec![name] }),
        }
    }
    functions
}

/// Says which table runs past the end of the file, before `object` says only that one is invalid.
fn check_tables<E: FileHeader<Endian = Endianness>>(header: &E, endian: Endianness, len: u64) -> Result<(), String> {
    let tables = [
        ("program headers", header.e_phoff(endian).into(), header.e_phnum(endian), header.e_phentsize(endian)),
        ("section headers", header.e_shoff(endian).into(), header.e_shnum(endian), header.e_shentsize(endian)),
    ];
    for (what, offset, count, size) in tables {
        let end = offset.saturating_add(u64::from(count) * u64::from(size));
        if offset != 0 && end > len {
            return Err(format!(
                "its {what} ({count} of {size} bytes at offset {offset}) run past its end at {len} bytes"
            ));
        }
    }
    Ok(())
}

/// The undefined function symbols of `.dynsym`, and the import index of each symbol index.
fn imports<'data, E: FileHeader<Endian = Endianness>>(
    file: &ElfFile<'data, E>,
    endian: Endianness,
) -> (Vec<Import<'data>>, HashMap<usize, usize>) {
    let symbols = file.elf_dynamic_symbol_table();
    let (mut imports, mut import_of) = (Vec::new(), HashMap::new());
    for (index, sym) in symbols.enumerate() {
        if !sym.is_undefined(endian)
            || index.0 == 0
            || sym.st_type() == elf::STT_OBJECT
            || sym.st_type() == elf::STT_TLS
        {
            continue;
        }
        let Some(name) = symbols.symbol_name(endian, sym).ok().and_then(|n| std::str::from_utf8(n).ok()) else {
            continue;
        };
        import_of.insert(index.0, imports.len());
        imports.push(Import { name, address: sym.st_value(endian).into() });
    }
    (imports, import_of)
}

/// The dynamic relocations that lead somewhere: `RELA` and `RELR` sections that are loaded (a
/// static glibc's `.rela.plt` of `IRELATIVE` entries links `.symtab`; `--emit-relocs` leaves
/// relocation sections that are not loaded).
fn relocations<E: FileHeader<Endian = Endianness>>(
    file: &ElfFile<'_, E>,
    machine: elf::Machine,
    import_of: &HashMap<usize, usize>,
    sections: &[Section<'_>],
) -> Result<Vec<Relocation>, String> {
    let (endian, data) = (file.endian(), file.data());
    let dynsym = file.elf_dynamic_symbol_table();
    let is_mips64el = file.elf_header().is_mips64el(endian);
    let mut out = Vec::new();
    for s in file.elf_section_table().iter() {
        if !s.sh_flags(endian).contains(elf::SHF_ALLOC) {
            continue;
        }
        // Symbol indexes mean something only in a section linked to `.dynsym`.
        let symbolic = !dynsym.is_empty() && s.link(endian) == dynsym.section();
        if let Some((relas, _)) = s.rela(endian, data).map_err(said)? {
            for r in relas {
                let Some(kind) = kind_of(machine, r.r_type(endian, is_mips64el)) else { continue };
                let addend: i64 = r.r_addend(endian).into();
                let target = match (kind, r.r_sym(endian, is_mips64el)) {
                    (RelocationKind::Resolved, _) | (_, 0) => Target::Address(addend as u64),
                    _ if !symbolic => continue,
                    (_, index) => match import_of.get(&(index as usize)) {
                        Some(&import) => Target::Import(import),
                        None => {
                            let sym = dynsym.symbol(SymbolIndex(index as usize)).map_err(said)?;
                            Target::Address(sym.st_value(endian).into().wrapping_add(addend as u64))
                        }
                    },
                };
                out.push(Relocation { offset: r.r_offset(endian).into(), kind, target });
            }
        }
        if let Some(relrs) = s.relr(endian, data).map_err(said)? {
            // A packed relative relocation keeps its addend in the word it relocates.
            for offset in relrs {
                let offset: u64 = offset.into();
                if let Some(word) = sections.iter().find(|s| s.holds(offset)).and_then(|s| s.word(offset)) {
                    out.push(Relocation { offset, kind: RelocationKind::Word, target: Target::Address(word) });
                }
            }
        }
    }
    Ok(out)
}

/// What a relocation type of `machine` does, for the types that lead to a function.
fn kind_of(machine: elf::Machine, r_type: elf::RelocationType) -> Option<RelocationKind> {
    use RelocationKind::*;
    match (machine, r_type) {
        (elf::EM_X86_64, elf::R_X86_64_GLOB_DAT | elf::R_X86_64_JUMP_SLOT) => Some(Slot),
        (elf::EM_X86_64, elf::R_X86_64_IRELATIVE) => Some(Resolved),
        (elf::EM_X86_64, elf::R_X86_64_64 | elf::R_X86_64_RELATIVE) => Some(Word),
        (elf::EM_AARCH64, elf::R_AARCH64_GLOB_DAT | elf::R_AARCH64_JUMP_SLOT) => Some(Slot),
        (elf::EM_AARCH64, elf::R_AARCH64_IRELATIVE) => Some(Resolved),
        (elf::EM_AARCH64, elf::R_AARCH64_ABS64 | elf::R_AARCH64_RELATIVE) => Some(Word),
        _ => None,
    }
}

/// The `DT_NEEDED` names: from the dynamic section, or where the file has no section headers,
/// from the `PT_DYNAMIC` segment with its string table found through the loadable segments.
fn needed<E: FileHeader<Endian = Endianness>>(
    file: &ElfFile<'_, E>,
    endian: Endianness,
    data: &[u8],
) -> Result<Vec<String>, String> {
    let table = file.elf_dynamic_table().map_err(said)?;
    if !table.is_empty() {
        return Ok(table
            .iter()
            .filter(|d| d.tag == elf::DT_NEEDED)
            .filter_map(|d| table.string(d).ok())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect());
    }
    let segments = file.elf_program_headers();
    let Some(dynamic) = segments.iter().find_map(|p| p.dynamic(endian, data).ok().flatten()) else {
        return Ok(Vec::new());
    };
    let tag = |t: elf::DynamicTag| dynamic.iter().find(|d| d.d_tag(endian) == t).map(|d| d.d_val(endian).into());
    let Some(strtab) = tag(elf::DT_STRTAB) else { return Ok(Vec::new()) };
    // The string table's address, as a file offset through the segment that loads it.
    let Some(base) = segments.iter().filter(|p| p.p_type(endian) == elf::PT_LOAD).find_map(|p| {
        let (vaddr, size, offset): (u64, u64, u64) =
            (p.p_vaddr(endian).into(), p.p_filesz(endian).into(), p.p_offset(endian).into());
        (strtab >= vaddr && strtab - vaddr < size).then(|| offset + (strtab - vaddr))
    }) else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for d in dynamic.iter().filter(|d| d.d_tag(endian) == elf::DT_NEEDED) {
        let at = usize::try_from(base.saturating_add(d.d_val(endian).into())).unwrap_or(usize::MAX);
        let rest = data.get(at..).ok_or("a DT_NEEDED name lies past the end of the file")?;
        names.push(String::from_utf8_lossy(rest.split(|&b| b == 0).next().unwrap_or_default()).into_owned());
    }
    Ok(names)
}
