//! Reads a built artifact (an ELF executable or shared object) and says which functions of the
//! contract catalogue it calls, from where, and which libc it carries: the static half of an
//! exposure scan (docs/exposure.md), which judges what it finds by the toolchain's verdicts.
//!
//! What is read, and from where:
//! - the functions present: a static artifact's function symbols (`.symtab`, else `.dynsym`),
//!   named back to the catalogue however the libc spells them (see `names`); a dynamic
//!   artifact's imports (undefined `.dynsym` symbols, which a strip keeps);
//! - the calls and address-takings: decoded from the code, on x86-64 only (see `x86`); elsewhere
//!   the functions present are listed without call counts;
//! - the caller of each call: the function symbol whose code holds the site, and its source line
//!   from the DWARF line tables where there are some;
//! - the libc: see `libc`.

mod aarch64;
mod elf;
mod error;
mod fingerprint;
mod frames;
mod libc;
mod lines;
mod mask;
mod names;
mod naming;
mod recognise;
mod registers;
mod slots;
mod uses;
mod x86;

pub use error::{ArtifactError, MAX_ARTIFACT_BYTES};
pub use fingerprint::{merge_modes as merge_fingerprint_modes, Fingerprint};
pub use names::demangle;
pub use naming::{CodeMatch, Naming};

use sha2::{Digest, Sha256};
use slopewatch_core::exposure::Linkage;
use std::path::Path;

/// What a scan found in one artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    /// The file name, e.g. `api-server`.
    pub name: String,
    /// `build-id:` and the lowercase hex of its `.note.gnu.build-id`, else `sha256:` and the 64
    /// lowercase hex digits of the file's bytes.
    pub digest: String,
    /// The machine its code is for: `x86_64`, `aarch64`, `x86`, `arm`, `riscv64`, …; `elf-<n>`
    /// for a machine number not named here.
    pub arch: String,
    /// Dynamic where it has an interpreter (`PT_INTERP`) or needs shared libraries (`DT_NEEDED`);
    /// static otherwise, a static PIE included.
    pub linkage: Linkage,
    /// The libc it carries or imports from, and what told it.
    pub libc: LibcFound,
    /// Whether it names its functions: it has a symbol table, or being dynamic, a dynamic symbol
    /// table naming its imports. False for a stripped static artifact: which libc functions it
    /// carries cannot then be told, and `uses` and `unused` are empty.
    pub symbols: bool,
    /// The file its names came from where its own symbol table has none: `--symbols`, or the
    /// debug file its `.gnu_debuglink` names.
    pub symbols_from: Option<std::path::PathBuf>,
    /// The catalogue functions recognised by their code, named or not by its symbols.
    pub by_code: Vec<CodeMatch>,
    /// Whether its code was decoded for call sites: on x86-64 only. Where not, every catalogue
    /// function present is listed in `uses` with no call sites, since whether it is called
    /// cannot be told, and `unused` is empty.
    pub call_sites_decoded: bool,
    /// One entry per catalogue function it calls or whose address it takes, sorted by name.
    pub uses: Vec<FunctionUse>,
    /// The catalogue functions it carries or imports but neither calls nor references, sorted.
    pub unused: Vec<String>,
}

/// One catalogue function an artifact reaches.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionUse {
    /// Its catalogue name, e.g. `strspn`.
    ///
    /// A body that carries several catalogue names is one function, named by its strongest name:
    /// the one Zig's `c.*` alias gives (Zig 0.16's `strcmp` is also its `strcoll`), else a global
    /// over a weak one (glibc's `strchr` is also `index`), else the shortest; the others are
    /// among its `aliases`. Calls to any of them are counted here.
    pub function: String,
    /// Every symbol name it carries in the artifact, sorted, e.g. `["c.string.strspn", "strspn"]`,
    /// `["__strchrnul", "strchrnul"]`, `["__memcpy_chk"]` (an import), and glibc's ifunc
    /// variants (`__strspn_sse42`) where a static glibc carries them.
    pub aliases: Vec<String>,
    /// Its call sites: direct calls and tail jumps, calls through its PLT stub, its GOT slot, or
    /// a register its address was loaded into. A function's calls to itself and between its own
    /// variants are not counted. The libc's own calls are (see [`Caller::in_libc`]).
    pub call_sites: u32,
    /// Whether its address is taken (a table of function pointers, a callback), apart from calls.
    /// The libc taking its own functions' addresses (glibc's list of its ifunc variants) does not
    /// count. A load of its GOT slot that the decoder cannot follow to a call (spilled to the
    /// stack and reloaded to call) reads as taken: rare, and only in unoptimised code.
    pub referenced: bool,
    /// The functions that call it, most call sites first, then by name.
    pub callers: Vec<Caller>,
    /// How the artifact told it: its symbols, its imports, or its code.
    pub found_by: FoundBy,
}

/// How a scan found a catalogue function in an artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FoundBy {
    /// A symbol at its address names it (the artifact's own, or the `--symbols` file's).
    #[default]
    Symbol,
    /// The artifact imports it from a shared library.
    Import,
    /// Its body matches the fingerprint of the toolchain's build of it.
    Code,
}

/// A function that calls a catalogue function (as `exposure --format json` writes it too).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Caller {
    /// Its name, demangled; `unknown` where no symbol covers the call (a stripped artifact).
    pub name: String,
    /// Its call sites of the function.
    pub sites: u32,
    /// `file:line` of its first call site (lowest address), from the DWARF line tables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Whether the caller is itself the libc's (musl's `strtok` calling `strspn`): one of its
    /// names is a catalogue function's, a Zig `c.*`/`compiler_rt.*` alias, or a name C reserves
    /// to the implementation (a leading underscore: `__copy_tls`, `_dl_map_object`, glibc's ifunc
    /// variants; not C++'s or Rust's mangled names), or its source file lies in a libc's
    /// sources. A libc's static helper with a plain name and no DWARF (musl's `printf_core` in a
    /// musl-gcc build) reads as the program's.
    pub in_libc: bool,
}

/// The libc an artifact carries or imports from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibcFound {
    /// `glibc`, `musl`, `zig` (Zig 0.16's own libc, whose functions carry `c.<module>.<fn>`
    /// aliases such as `c.string.strspn`) or `unknown`. Zig 0.15.2's libc is musl's code and is
    /// named `musl`; its evidence says Zig linked it.
    pub name: String,
    /// One line for people saying what told it, e.g. "imports from libc.so.6",
    /// "interpreter /lib/ld-musl-x86_64.so.1", "__libc_start_main and __init_libc (musl)".
    pub evidence: String,
}

/// Reads the artifact at `path` and finds the uses of `functions` (catalogue names such as
/// "strspn", "memcpy", "strchrnul"), naming what its own symbols do not by `naming`.
pub fn scan(path: &Path, functions: &[&str], naming: Naming<'_>) -> Result<Artifact, ArtifactError> {
    let bytes = error::read_file(path)?;
    let mut image = read(path, &bytes)?;
    // A stripped artifact may name its split debug file; --symbols names one outright.
    let symbols_from = match naming.symbols {
        Some(file) => Some(file.to_path_buf()),
        None if !image.symtab => naming::debug_link(&image, path),
        None => None,
    };
    let twin_bytes = symbols_from.as_deref().map(error::read_file).transpose()?;
    if let (Some(twin), Some(twin_path)) = (&twin_bytes, symbols_from.as_deref()) {
        let twin = read(twin_path, twin)?;
        naming::take_symbols(&mut image, twin)
            .map_err(|what| ArtifactError::Symbols { path: twin_path.to_path_buf(), what })?;
    }
    let linkage =
        if image.interpreter.is_some() || !image.needed.is_empty() { Linkage::Dynamic } else { Linkage::Static };
    let symbols = image.symtab || (linkage == Linkage::Dynamic && image.dynsym);
    let libc = libc::identify(&image);
    let by_code = naming::recognise(&mut image, naming.prints);
    let present = uses::present(&image, functions);
    let (decoded, sites) = match image.machine {
        object::elf::EM_X86_64 => (true, x86::decode(&image, &present.wanted)),
        object::elf::EM_AARCH64 if image.bits64 => (true, aarch64::decode(&image, &present.wanted)),
        _ => (false, x86::Sites::default()),
    };
    let (mut uses, unused) = uses::tally(&image, functions, &present, &sites, decoded);
    for u in &mut uses {
        u.found_by = if u.aliases.iter().any(|a| image.imports.iter().any(|i| names::unversioned(i.name) == a)) {
            FoundBy::Import
        } else if !symbols && by_code.iter().any(|m| m.function == u.function) {
            FoundBy::Code
        } else {
            FoundBy::Symbol
        };
    }
    let digest = match &image.build_id {
        Some(id) if !id.is_empty() => format!("build-id:{}", hex::encode(id)),
        _ => format!("sha256:{}", hex::encode(Sha256::digest(&bytes))),
    };
    Ok(Artifact {
        name: path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned()),
        digest,
        arch: arch(image.machine, image.bits64, image.little),
        linkage,
        libc,
        symbols,
        call_sites_decoded: decoded,
        symbols_from,
        by_code,
        uses,
        unused,
    })
}

/// The catalogue functions of `prints` recognised by their code in the artifact at `path`,
/// whether or not its symbols name them: which toolchain's libc it carries.
pub fn recognised(path: &Path, prints: &[Fingerprint]) -> Result<Vec<CodeMatch>, ArtifactError> {
    let bytes = error::read_file(path)?;
    let mut image = read(path, &bytes)?;
    Ok(naming::recognise(&mut image, prints))
}

/// What names the code of a stripped program by address: its functions as its symbols, the
/// fingerprints `prints` and its unwind tables give them, for a profile whose functions have no
/// names.
pub struct CodeNames {
    /// Whether the addresses are the ones it runs at (`ET_EXEC`); else a loader moved it.
    pub fixed: bool,
    /// Each function: its start, its end and its name; none for one only the unwind tables know.
    pub functions: Vec<(u64, u64, Option<String>)>,
}

impl CodeNames {
    /// The function whose code holds `address`: its start, end and name.
    pub fn at(&self, address: u64) -> Option<&(u64, u64, Option<String>)> {
        let i = self.functions.partition_point(|f| f.0 <= address).checked_sub(1)?;
        let f = &self.functions[i];
        (address < f.1).then_some(f)
    }
}

/// The [`CodeNames`] of the program at `path`, naming its libc functions by `prints`.
pub fn code_names(path: &Path, prints: &[Fingerprint]) -> Result<CodeNames, ArtifactError> {
    let bytes = error::read_file(path)?;
    let mut image = read(path, &bytes)?;
    naming::recognise(&mut image, prints);
    let functions = image
        .functions
        .iter()
        .filter(|f| f.size > 0)
        .map(|f| {
            let name = uses::display_name(f);
            (f.address, f.address + f.size, (!name.is_empty()).then(|| demangle(name)))
        })
        .collect();
    Ok(CodeNames { fixed: image.fixed, functions })
}

/// The fingerprints of the catalogue functions among `functions` in the build at `path` (static,
/// with its symbols), made with the optimisation flag `mode`.
pub fn fingerprints(path: &Path, functions: &[&str], mode: &str) -> Result<Vec<Fingerprint>, ArtifactError> {
    let bytes = error::read_file(path)?;
    Ok(fingerprint::take(&read(path, &bytes)?, functions, mode))
}

/// The libc of the artifact at `path`, without looking at its code: to compare an artifact's
/// libc with that of a binary its toolchain built.
pub fn identify_libc(path: &Path) -> Result<LibcFound, ArtifactError> {
    let bytes = error::read_file(path)?;
    Ok(libc::identify(&read(path, &bytes)?))
}

/// `bytes` read as an ELF executable or shared object; the error names `path`.
fn read<'data>(path: &Path, bytes: &'data [u8]) -> Result<elf::Image<'data>, ArtifactError> {
    error::check_kind(path, bytes)?;
    elf::read(bytes).map_err(|what| ArtifactError::Malformed { path: path.to_path_buf(), what })
}

/// The architecture an ELF machine of either class runs as, in the spelling of
/// [`slopewatch_core::arch::normalize`] (that of QEMU's `qemu-ARCH`); `elf-N` for a machine not
/// named here.
fn arch(machine: object::elf::Machine, bits64: bool, little: bool) -> String {
    machine_arch(machine, bits64, little).map_or_else(|| format!("elf-{}", machine.0), str::to_string)
}

/// [`arch`] for the machines it names.
fn machine_arch(machine: object::elf::Machine, bits64: bool, little: bool) -> Option<&'static str> {
    use object::elf::*;
    Some(match machine {
        EM_X86_64 => "x86_64",
        EM_AARCH64 => "aarch64",
        EM_386 => "i386",
        EM_ARM => "arm",
        EM_RISCV if bits64 => "riscv64",
        EM_RISCV => "riscv32",
        EM_PPC64 if little => "ppc64le",
        EM_PPC64 => "ppc64",
        EM_PPC => "ppc",
        EM_S390 => "s390x",
        EM_LOONGARCH => "loongarch64",
        EM_MIPS if bits64 && little => "mips64el",
        EM_MIPS if bits64 => "mips64",
        EM_MIPS if little => "mipsel",
        EM_MIPS => "mips",
        EM_SPARCV9 => "sparc64",
        _ => return None,
    })
}

/// What a built binary needs to run: the architecture it is built for (`None` for one not named
/// here) and, when dynamically linked, its program interpreter (`/lib/ld-linux-aarch64.so.1`).
pub fn target(path: &Path) -> Result<(Option<&'static str>, Option<String>), ArtifactError> {
    let bytes = error::read_file(path)?;
    let image = read(path, &bytes)?;
    Ok((machine_arch(image.machine, image.bits64, image.little), image.interpreter))
}

#[cfg(test)]
mod tests;
