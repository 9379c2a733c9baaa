//! The build hash of a workload binary: a digest of the code that runs when it runs, the binary's
//! and that of every shared object the dynamic loader loads for it, the interpreter included.
//!
//! The source hash says what a workload computes; the build hash says what machine code computed
//! it. They part ways where the code that runs is not the binary's alone: a glibc upgrade
//! changes `libc.so.6` and leaves the binary byte for byte as it was, and the same build can
//! then get slower. So every loaded file counts, found by asking the binary's interpreter
//! (`ld.so --list`, which glibc's and musl's loaders both answer).
//!
//! Of each file only what is mapped to run counts: the allocated sections (`SHF_ALLOC`) with
//! their names and addresses, but no notes (`.note.gnu.build-id` is a digest of the whole file,
//! debug information included) and no `NOBITS` sections (they hold no bytes). Debug sections are
//! not allocated, so a build with `-g` hashes as one without. A file without section headers
//! counts by its `PT_LOAD` segments' bytes and addresses. Where a file lies does not count: the
//! same `libc.so.6` at another path is the same code, and paths differ between hosts.

use object::elf::{FileHeader32, FileHeader64, PT_LOAD, SHF_ALLOC, SHT_NOBITS, SHT_NOTE};
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use object::{Endianness, FileKind};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

/// What the digest starts with, so that a change to what it covers can never collide with the
/// hashes made before the change.
const DOMAIN: &[u8] = b"slopewatch build hash v1\0";

/// A binary as it was hashed: its canonical path, length and modification time. A rebuild in
/// place changes the time (and mostly the length), so a stale entry is not served.
type Key = (PathBuf, u64, SystemTime);

/// The build hash of what running `binary` runs, as `sha256:` and 64 lowercase hex digits; none
/// where that cannot be told: `binary` is not ELF, its interpreter cannot list what it loads, or
/// a library listed cannot be read. The loader sees this process's environment, as the workload
/// run from it does (`LD_LIBRARY_PATH`, `LD_PRELOAD`).
///
/// Remembered for the life of the process per binary: the 127 contract probes share one, and
/// each workload is measured once per metric. A library changed while the agent runs is not
/// seen again, which a run of minutes can afford.
pub fn build_hash(binary: &Path) -> Option<String> {
    static SEEN: OnceLock<Mutex<HashMap<Key, Option<String>>>> = OnceLock::new();
    let meta = std::fs::metadata(binary).ok()?;
    let key = (binary.canonicalize().ok()?, meta.len(), meta.modified().ok()?);
    let seen = SEEN.get_or_init(Default::default);
    if let Some(hash) = seen.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return hash.clone();
    }
    // Hashed unlocked: two threads hashing one binary at once both get the same answer.
    let hash = hash_with(binary, &[]);
    seen.lock().unwrap_or_else(|e| e.into_inner()).insert(key, hash.clone());
    hash
}

/// [`build_hash`] without remembering, with `env` set for the interpreter on top of this
/// process's environment.
fn hash_with(binary: &Path, env: &[(&str, &OsStr)]) -> Option<String> {
    let elf = read_elf(&std::fs::read(binary).ok()?)?;
    let mut parts = vec![elf.code];
    if let Some(interpreter) = &elf.interpreter {
        for file in loaded(interpreter, binary, env)? {
            parts.push(read_elf(&std::fs::read(file).ok()?)?.code);
        }
    }
    // Each file enters as its index and a digest of fixed length, so no two files' bytes can
    // run into each other, and the order the loader loads them in counts.
    let mut h = Sha256::new();
    h.update(DOMAIN);
    h.update((parts.len() as u64).to_le_bytes());
    for (i, part) in parts.iter().enumerate() {
        h.update((i as u64).to_le_bytes());
        h.update(part);
    }
    Some(format!("sha256:{}", hex::encode(h.finalize())))
}

/// What one ELF file contributes: the digest of its code, and the interpreter it asks for.
struct Elf {
    /// The digest of what is mapped to run (see the module's documentation).
    code: [u8; 32],
    /// Its `PT_INTERP`: none for a static binary or a shared library.
    interpreter: Option<PathBuf>,
}

/// `data` read as ELF of either class, when it is ELF.
fn read_elf(data: &[u8]) -> Option<Elf> {
    match FileKind::parse(data).ok()? {
        FileKind::Elf32 => read_class::<FileHeader32<Endianness>>(data),
        FileKind::Elf64 => read_class::<FileHeader64<Endianness>>(data),
        _ => None,
    }
}

/// `data` read as ELF of the class `E`: none where it is malformed.
fn read_class<E: FileHeader<Endian = Endianness>>(data: &[u8]) -> Option<Elf> {
    let header = E::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let segments = header.program_headers(endian, data).ok()?;
    let sections = header.sections(endian, data).ok()?;
    let mut h = Sha256::new();
    if sections.is_empty() {
        h.update(b"segments\0");
        for s in segments.iter().filter(|s| s.p_type(endian) == PT_LOAD) {
            h.update(s.p_vaddr(endian).into().to_le_bytes());
            put(&mut h, s.data(endian, data).ok()?);
        }
    } else {
        h.update(b"sections\0");
        for s in sections
            .iter()
            .filter(|s| s.sh_flags(endian).contains(SHF_ALLOC) && ![SHT_NOTE, SHT_NOBITS].contains(&s.sh_type(endian)))
        {
            put(&mut h, sections.section_name(endian, s).ok()?);
            h.update(s.sh_addr(endian).into().to_le_bytes());
            put(&mut h, s.data(endian, data).ok()?);
        }
    }
    let mut interpreter = None;
    for s in segments {
        if let Some(path) = s.interpreter(endian, data).ok()? {
            interpreter = Some(PathBuf::from(std::str::from_utf8(path).ok()?));
        }
    }
    Some(Elf { code: h.finalize().into(), interpreter })
}

/// `bytes` after their length, so that where one field ends and the next begins is never in doubt.
fn put(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// The files `interpreter` loads to run `binary`, in the order it lists them, each once, the
/// interpreter included and `binary` itself not; none where the interpreter fails or lists a
/// library it cannot find. `env` is set for the interpreter on top of this process's environment.
fn loaded(interpreter: &Path, binary: &Path, env: &[(&str, &OsStr)]) -> Option<Vec<PathBuf>> {
    let out = Command::new(interpreter)
        .arg("--list")
        .arg(binary)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let listed = listed_paths(std::str::from_utf8(&out.stdout).ok()?)?;
    let itself = binary.canonicalize().ok()?;
    let mut files: Vec<PathBuf> = Vec::new();
    for path in listed.iter().map(PathBuf::as_path).chain([interpreter]) {
        let file = path.canonicalize().ok()?;
        if file != itself && !files.contains(&file) {
            files.push(file);
        }
    }
    Some(files)
}

/// The paths in what `ld.so --list` printed, in order: `name => /path (0x…)` lines, and lines
/// that are only `/path (0x…)` (glibc's interpreter, musl's loader). The vDSO (`linux-vdso.so.1
/// (0x…)`, no path) is the kernel's, not a file, and is passed over. None where a library is
/// `not found` or a line reads as neither.
///
/// glibc 2.36 prints, tab-indented:
/// `linux-vdso.so.1 (0x…)`, `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)`,
/// `/lib64/ld-linux-x86-64.so.2 (0x…)`; musl 1.2 prints `/lib/ld-musl-x86_64.so.1 (0x…)` and
/// `libc.so => /lib/ld-musl-x86_64.so.1 (0x…)`.
fn listed_paths(text: &str) -> Option<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (name, resolved) = match line.split_once(" => ") {
            Some((name, resolved)) => (name, Some(resolved.trim())),
            None => (line, None),
        };
        let at = resolved.unwrap_or(name);
        let (path, address) = at.rsplit_once('(')?;
        if !(address.starts_with("0x") && address.ends_with(')')) {
            return None;
        }
        let path = path.trim();
        // A path has a slash; a bare name is the vDSO (older glibc prints it as `name =>  (0x…)`).
        if path.contains('/') {
            paths.push(PathBuf::from(path));
        } else if !(resolved.is_none() || path.is_empty()) {
            return None;
        }
    }
    Some(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    /// A program whose work is in a function, so that its body can change.
    const WORK: &str = "static int work(int n) { return n * 2; }\nint main(int c, char **v) { return work(c) == 7; }\n";

    /// A program calling `cost` from `libcost.so`.
    const CALLER: &str = "int cost(int n);\nint main(int c, char **v) { return cost(c) == 7; }\n";

    /// Compiles `source` with `compiler` and `flags` (after the source, as `-l` must be) into `dir/out`; false where the compiler
    /// refused (as `gcc -static` does without glibc's static libraries).
    fn try_build(compiler: &str, dir: &Path, source: &str, flags: &[&str], out: &str) -> bool {
        let c = dir.join(format!("{out}.c"));
        std::fs::write(&c, source).unwrap();
        let status = Command::new(compiler)
            .arg(&c)
            .args(flags)
            .arg("-o")
            .arg(dir.join(out))
            .stderr(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("{compiler} must run: {e}"));
        status.success()
    }

    /// [`try_build`] that must succeed; the built file's path.
    fn build(compiler: &str, dir: &Path, source: &str, flags: &[&str], out: &str) -> PathBuf {
        assert!(try_build(compiler, dir, source, flags, out), "{compiler} {flags:?} must build {out}");
        dir.join(out)
    }

    /// Whether musl-gcc is installed; prints a note where not.
    fn have_musl() -> bool {
        let found = Command::new("musl-gcc").arg("--version").output().is_ok_and(|o| o.status.success());
        if !found {
            eprintln!("musl-gcc is not installed (apt-get install musl-tools): skipping the musl case");
        }
        found
    }

    #[test]
    fn the_same_source_built_into_two_paths_hashes_the_same() {
        let dir = TempDir::new().unwrap();
        let one = build("gcc", dir.path(), WORK, &["-O2"], "one");
        let two = build("gcc", dir.path(), WORK, &["-O2"], "two");
        let hash = hash_with(&one, &[]);
        assert!(hash.as_deref().is_some_and(|h| h.starts_with("sha256:") && h.len() == 71), "{hash:?}");
        assert_eq!(hash, hash_with(&two, &[]));
    }

    #[test]
    fn building_with_debug_information_hashes_the_same_as_without() {
        let dir = TempDir::new().unwrap();
        let plain = build("gcc", dir.path(), WORK, &["-O2"], "plain");
        let debug = build("gcc", dir.path(), WORK, &["-O2", "-g"], "debug");
        assert_ne!(std::fs::read(&plain).unwrap(), std::fs::read(&debug).unwrap(), "-g must change the file");
        assert_eq!(hash_with(&plain, &[]), hash_with(&debug, &[]));
    }

    #[test]
    fn a_changed_function_body_hashes_differently() {
        let dir = TempDir::new().unwrap();
        let before = build("gcc", dir.path(), WORK, &["-O2"], "before");
        let after = build("gcc", dir.path(), &WORK.replace("n * 2", "n * 3 + 1"), &["-O2"], "after");
        assert!(hash_with(&before, &[]).is_some());
        assert_ne!(hash_with(&before, &[]), hash_with(&after, &[]));
    }

    #[test]
    fn a_changed_shared_library_changes_the_hash_of_a_byte_identical_binary_and_its_path_does_not() {
        let dir = TempDir::new().unwrap();
        let (v1, v2, moved) = (dir.path().join("v1"), dir.path().join("v2"), dir.path().join("moved"));
        for d in [&v1, &v2, &moved] {
            std::fs::create_dir(d).unwrap();
        }
        let lib = |d: &Path, body: &str| build("gcc", d, body, &["-O2", "-shared", "-fPIC"], "libcost.so");
        lib(&v1, "int cost(int n) { return n * 2; }\n");
        lib(&v2, "int cost(int n) { return n * 3 + 1; }\n");
        std::fs::copy(v1.join("libcost.so"), moved.join("libcost.so")).unwrap();
        let v1_dir = format!("-L{}", v1.display());
        let binary = build("gcc", dir.path(), CALLER, &["-O2", &v1_dir, "-lcost"], "caller");

        let with = |d: &Path| hash_with(&binary, &[("LD_LIBRARY_PATH", d.as_os_str())]);
        assert!(with(&v1).is_some());
        assert_ne!(with(&v1), with(&v2), "the library's code changed, the binary did not");
        assert_eq!(with(&v1), with(&moved), "the same library at another path is the same code");
        assert_eq!(with(dir.path()), None, "no libcost.so there: what runs cannot be told");
    }

    #[test]
    fn a_static_binary_is_hashed_alone() {
        let dir = TempDir::new().unwrap();
        let binary = if try_build("gcc", dir.path(), WORK, &["-static"], "static") {
            dir.path().join("static")
        } else if have_musl() {
            build("musl-gcc", dir.path(), WORK, &["-static"], "static")
        } else {
            eprintln!("neither glibc's static libraries nor musl-gcc: skipping");
            return;
        };
        let elf = read_elf(&std::fs::read(&binary).unwrap()).unwrap();
        assert_eq!(elf.interpreter, None);
        assert!(hash_with(&binary, &[]).is_some());
    }

    #[test]
    fn a_musl_dynamic_binary_is_hashed_with_ld_musl() {
        if !have_musl() {
            return;
        }
        let dir = TempDir::new().unwrap();
        let binary = build("musl-gcc", dir.path(), WORK, &["-O2"], "musl");
        let interpreter = read_elf(&std::fs::read(&binary).unwrap()).unwrap().interpreter.unwrap();
        let files = loaded(&interpreter, &binary, &[]).unwrap();
        assert_eq!(files, [interpreter.canonicalize().unwrap()], "musl's libc is its loader");
        assert!(hash_with(&binary, &[]).is_some());
    }

    #[test]
    fn a_glibc_dynamic_binary_loads_libc_and_the_loader() {
        let dir = TempDir::new().unwrap();
        let binary = build("gcc", dir.path(), WORK, &["-O2"], "glibc");
        let interpreter = read_elf(&std::fs::read(&binary).unwrap()).unwrap().interpreter.unwrap();
        let files = loaded(&interpreter, &binary, &[]).unwrap();
        let names: Vec<_> = files.iter().filter_map(|f| f.file_name()?.to_str()).collect();
        assert!(names.iter().any(|n| n.starts_with("libc.so")), "{files:?}");
        assert!(files.contains(&interpreter.canonicalize().unwrap()), "{files:?}");
    }

    #[test]
    fn a_binary_without_section_headers_is_hashed_by_its_segments() {
        let dir = TempDir::new().unwrap();
        let headless = |name: &str, source: &str| {
            let path = build("gcc", dir.path(), source, &["-O2"], name);
            let mut bytes = std::fs::read(&path).unwrap();
            // ELF64's e_shoff (8 bytes at 0x28), e_shnum (0x3c) and e_shstrndx (0x3e), as sstrip leaves them.
            bytes[0x28..0x30].fill(0);
            bytes[0x3c..0x40].fill(0);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let before = headless("before", WORK);
        let after = headless("after", &WORK.replace("n * 2", "n * 3 + 1"));
        assert!(hash_with(&before, &[]).is_some());
        assert_ne!(hash_with(&before, &[]), hash_with(&after, &[]));
    }

    #[test]
    fn a_file_that_is_not_elf_hashes_to_none() {
        let dir = TempDir::new().unwrap();
        let script = dir.path().join("script.sh");
        std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
        assert_eq!(build_hash(&script), None);
        assert_eq!(build_hash(&dir.path().join("missing")), None);
    }

    #[test]
    fn a_binary_rebuilt_in_place_is_hashed_anew() {
        let dir = TempDir::new().unwrap();
        let binary = build("gcc", dir.path(), WORK, &["-O2"], "work");
        let before = build_hash(&binary);
        assert_eq!(before, hash_with(&binary, &[]));
        build("gcc", dir.path(), &WORK.replace("n * 2", "n * 3 + 1"), &["-O2"], "work");
        // However coarse the file system's clock, the rebuild is seen as one.
        let later = SystemTime::now() + std::time::Duration::from_secs(10);
        std::fs::File::options().write(true).open(&binary).unwrap().set_modified(later).unwrap();
        let after = build_hash(&binary);
        assert!(after.is_some());
        assert_ne!(before, after);
    }

    #[test]
    fn what_glibc_and_musl_list_reads_as_the_loaded_paths() {
        let glibc = "\tlinux-vdso.so.1 (0x00007ffd8a1f2000)\n\
                     \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2c1c000000)\n\
                     \t/lib64/ld-linux-x86-64.so.2 (0x00007f2c1c3c1000)\n";
        assert_eq!(
            listed_paths(glibc).unwrap(),
            [PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6"), PathBuf::from("/lib64/ld-linux-x86-64.so.2")]
        );
        let musl = "\t/lib/ld-musl-x86_64.so.1 (0x7f6e1f9d4000)\n\
                    \tlibc.so => /lib/ld-musl-x86_64.so.1 (0x7f6e1f9d4000)\n";
        assert_eq!(
            listed_paths(musl).unwrap(),
            [PathBuf::from("/lib/ld-musl-x86_64.so.1"), PathBuf::from("/lib/ld-musl-x86_64.so.1")]
        );
        let old_vdso = "\tlinux-vdso.so.1 =>  (0x00007ffd8a1f2000)\n";
        assert_eq!(listed_paths(old_vdso).unwrap(), Vec::<PathBuf>::new());
        assert_eq!(listed_paths("\tlibcost.so => not found\n"), None);
        assert_eq!(listed_paths("\tstatically linked\n"), None);
    }
}
