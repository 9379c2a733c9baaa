//! What can stop a scan before it starts, and the checks that find it: the file cannot be read,
//! is too large, is not ELF, or is ELF but not something that runs (an object file, a core dump).

use std::path::{Path, PathBuf};

/// The largest artifact a scan reads: the whole file is read into memory, so a path given by
/// mistake (a disk image, a core file) is refused rather than read.
pub const MAX_ARTIFACT_BYTES: u64 = 1 << 30;

/// Why an artifact could not be scanned. Each message names the file.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// The file could not be read (missing, unreadable, a directory).
    #[error("cannot read {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// The file is larger than [`MAX_ARTIFACT_BYTES`].
    #[error("{} is {size} bytes, more than the {limit} bytes an artifact may have", path.display())]
    TooLarge { path: PathBuf, size: u64, limit: u64 },
    /// The file is not ELF; `looks_like` says what its first bytes suggest it is instead
    /// ("a script (#!/bin/sh)", "a Mach-O file (macOS)", "an empty file", …).
    #[error("{} is not an ELF file: it looks like {looks_like}", path.display())]
    NotElf { path: PathBuf, looks_like: String },
    /// The file is ELF but cut short or inconsistent; `what` says which part.
    #[error("{} is a truncated or malformed ELF file: {what}", path.display())]
    Malformed { path: PathBuf, what: String },
    /// The file is ELF or an archive of objects, but neither an executable nor a shared object;
    /// `kind` says what it is ("a relocatable object (.o)", "an ar archive (a static library .a)").
    #[error("{} is {kind}, not an executable or shared object: scan what the link produced", path.display())]
    NotExecutable { path: PathBuf, kind: String },
    /// The file given for the artifact's symbols cannot serve: another build, or no symbols.
    #[error("the symbols of {}: {what}", path.display())]
    Symbols { path: PathBuf, what: String },
}

/// The bytes of the file at `path`, when it is no larger than [`MAX_ARTIFACT_BYTES`].
pub fn read_file(path: &Path) -> Result<Vec<u8>, ArtifactError> {
    let io = |source| ArtifactError::Io { path: path.to_path_buf(), source };
    let size = std::fs::metadata(path).map_err(io)?.len();
    if size > MAX_ARTIFACT_BYTES {
        return Err(ArtifactError::TooLarge { path: path.to_path_buf(), size, limit: MAX_ARTIFACT_BYTES });
    }
    std::fs::read(path).map_err(io)
}

/// Refuses `bytes` unless they begin as an ELF executable or shared object would: the right
/// magic, a known class and byte order, and an `e_type` of `ET_EXEC` or `ET_DYN`.
pub fn check_kind(path: &Path, bytes: &[u8]) -> Result<(), ArtifactError> {
    if !bytes.starts_with(b"\x7fELF") {
        if bytes.starts_with(b"!<arch>\n") {
            return Err(ArtifactError::NotExecutable {
                path: path.to_path_buf(),
                kind: "an ar archive (a static library .a)".into(),
            });
        }
        return Err(ArtifactError::NotElf { path: path.to_path_buf(), looks_like: looks_like(bytes) });
    }
    let malformed = |what: String| ArtifactError::Malformed { path: path.to_path_buf(), what };
    if bytes.len() < 18 {
        return Err(malformed(format!("its ELF header is cut short at {} bytes", bytes.len())));
    }
    let e_type = object::elf::FileType(match bytes[5] {
        1 => u16::from_le_bytes([bytes[16], bytes[17]]),
        2 => u16::from_be_bytes([bytes[16], bytes[17]]),
        other => return Err(malformed(format!("its byte order {other} is neither little (1) nor big (2) endian"))),
    });
    if !matches!(bytes[4], 1 | 2) {
        return Err(malformed(format!("its class {} is neither 32-bit (1) nor 64-bit (2)", bytes[4])));
    }
    let kind = match e_type {
        object::elf::ET_EXEC | object::elf::ET_DYN => return Ok(()),
        object::elf::ET_REL => "a relocatable object (.o)".to_string(),
        object::elf::ET_CORE => "a core dump".to_string(),
        other => format!("an ELF file of type {}", other.0),
    };
    Err(ArtifactError::NotExecutable { path: path.to_path_buf(), kind })
}

/// What a file that is not ELF looks like, from its first bytes, for the error message.
fn looks_like(bytes: &[u8]) -> String {
    let known: &[(&[u8], &str)] = &[
        (b"\xcf\xfa\xed\xfe", "a Mach-O file (macOS)"),
        (b"\xce\xfa\xed\xfe", "a Mach-O file (macOS)"),
        (b"\xfe\xed\xfa\xcf", "a Mach-O file (macOS)"),
        (b"\xca\xfe\xba\xbe", "a universal Mach-O file (macOS) or a Java class"),
        (b"MZ", "a PE file (Windows)"),
        (b"\0asm", "a WebAssembly module"),
        (b"\x1f\x8b", "gzip-compressed data"),
        (b"PK\x03\x04", "a zip archive"),
    ];
    if bytes.is_empty() {
        return "an empty file".into();
    }
    if let Some(first) = bytes.strip_prefix(b"#!") {
        let line = first.split(|&b| b == b'\n').next().unwrap_or_default();
        let line = String::from_utf8_lossy(&line[..line.len().min(60)]).trim().to_string();
        return format!("a script (#!{line})");
    }
    if let Some((_, what)) = known.iter().find(|(magic, _)| bytes.starts_with(magic)) {
        return (*what).into();
    }
    let head = &bytes[..bytes.len().min(8)];
    if head.iter().all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace()) {
        let text = String::from_utf8_lossy(head);
        return format!("text (it begins {:?})", text.trim_end());
    }
    let hex: Vec<String> = head.iter().map(|b| format!("{b:02x}")).collect();
    format!("data of no known kind (it begins {})", hex.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_of(bytes: &[u8]) -> String {
        check_kind(Path::new("/x/artifact"), bytes).unwrap_err().to_string()
    }

    #[test]
    fn what_is_not_elf_is_told_by_its_first_bytes() {
        assert_eq!(kind_of(b""), "/x/artifact is not an ELF file: it looks like an empty file");
        assert!(kind_of(b"#!/bin/sh\nexit 0\n").ends_with("a script (#!/bin/sh)"), "{}", kind_of(b"#!/bin/sh\n"));
        assert!(kind_of(b"\xcf\xfa\xed\xfe\x07\0\0\x01").ends_with("a Mach-O file (macOS)"));
        assert!(kind_of(b"MZ\x90\0\x03\0").ends_with("a PE file (Windows)"));
        assert!(kind_of(b"hello world").ends_with("text (it begins \"hello wo\")"));
        assert!(kind_of(b"\x01\x02\x03").ends_with("data of no known kind (it begins 01 02 03)"));
        assert!(kind_of(b"!<arch>\nfoo.o/").contains("is an ar archive (a static library .a), not an executable"));
    }

    #[test]
    fn an_elf_header_cut_short_or_of_an_unknown_class_is_malformed() {
        assert!(kind_of(b"\x7fELF\x02\x01").contains("its ELF header is cut short at 6 bytes"));
        let mut header = [0u8; 64];
        header[..4].copy_from_slice(b"\x7fELF");
        header[4] = 3;
        header[5] = 1;
        assert!(kind_of(&header).contains("its class 3"), "{}", kind_of(&header));
        header[4] = 2;
        header[16] = 1;
        assert!(kind_of(&header).contains("is a relocatable object (.o), not an executable"));
        header[16] = 4;
        assert!(kind_of(&header).contains("is a core dump"));
        header[16] = 3;
        assert!(check_kind(Path::new("x"), &header).is_ok());
    }
}
