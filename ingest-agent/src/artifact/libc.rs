//! Which libc an artifact carries or loads, told by the marks each leaves:
//!
//! - glibc, dynamic: it needs `libc.so.6` (its interpreter is `ld-linux-*.so.2`). Static: its
//!   start-up code, `__libc_start_main` beside `__libc_setup_tls` or `_dl_relocate_static_pie`;
//!   stripped, the messages glibc keeps in its read-only data (`GLIBC_TUNABLES`, "Fatal glibc
//!   error").
//! - musl, dynamic: its interpreter is `ld-musl-<arch>.so.1` (it needs `libc.so`). Static:
//!   `__libc_start_main` beside `__init_libc`, which is musl's alone.
//! - zig (Zig 0.16's own libc, whose string, wide-string and stdlib functions are Zig code over
//!   musl's start-up): functions carrying aliases `c.<module>.<function>` such as
//!   `c.string.strspn`.
//!
//! Zig 0.15.2 links musl's own C code for these functions, so its libc is named musl: its
//! `__init_libc` and `__libc_start_main` are musl's, and no `c.*` alias exists. What still tells
//! its builds apart is said in the evidence, not the name: `.comment` names Zig's LLD
//! (`Linker: LLD 20.1.2 (https://github.com/ziglang/zig-bootstrap …)`) and its `memcpy`,
//! `strlen`, `strcmp`, … are local symbols, Zig's compiler-rt and Zig code standing in for
//! musl's. Rust's `x86_64-unknown-linux-musl` links its self-contained musl the same way, and its
//! `.comment` names rustc.
//!
//! A stripped static artifact keeps no symbols: musl's `strerror` text ("No error information")
//! is all that is left of musl, and Zig 0.16's libc carries it too, so such an artifact is named
//! "unknown" with that said.

use super::elf::Image;
use super::names::is_zig_libc;
use super::LibcFound;

/// The libc of `image`, with what told it.
pub fn identify(image: &Image<'_>) -> LibcFound {
    let found = |name: &str, evidence: String| LibcFound { name: name.to_string(), evidence };
    let defined = |name: &str| image.functions.iter().any(|f| f.names.iter().any(|n| n.text == name));
    let zig = image.functions.iter().filter(|f| f.names.iter().any(|n| is_zig_libc(n.text))).count();
    if zig > 0 {
        let example = image
            .functions
            .iter()
            .flat_map(|f| &f.names)
            .map(|n| n.text)
            .find(|n| n.starts_with("c.string."))
            .or_else(|| image.functions.iter().flat_map(|f| &f.names).map(|n| n.text).find(|n| is_zig_libc(n)))
            .unwrap_or_default();
        let plural = if zig == 1 { "function carries" } else { "functions carry" };
        return found("zig", format!("{zig} {plural} Zig's c.<module>.<function> aliases (such as {example})"));
    }
    if let Some(lib) = image.needed.iter().find(|n| n.as_str() == "libc.so.6") {
        return found("glibc", format!("imports from {lib}"));
    }
    if let Some(interpreter) = image.interpreter.as_deref().filter(|i| i.contains("ld-musl-")) {
        return found("musl", format!("interpreter {interpreter}"));
    }
    if image.needed.iter().any(|n| n == "libc.so") {
        return found("musl", "imports from libc.so (musl's name for itself)".into());
    }
    if let Some(interpreter) = image.interpreter.as_deref().filter(|i| i.contains("ld-linux")) {
        return found("glibc", format!("interpreter {interpreter}"));
    }
    if defined("__libc_start_main") && defined("__init_libc") {
        return found("musl", format!("__libc_start_main and __init_libc (musl){}", linked_by(image)));
    }
    if let Some(glibc) = ["__libc_setup_tls", "_dl_relocate_static_pie"].into_iter().find(|n| defined(n)) {
        if defined("__libc_start_main") {
            return found("glibc", format!("__libc_start_main and {glibc} (glibc's static start-up)"));
        }
    }
    if image.functions.is_empty() {
        let read_only = |text: &[u8]| {
            image.sections.iter().filter(|s| !s.executable()).any(|s| s.bytes.windows(text.len()).any(|w| w == text))
        };
        if let Some(text) = ["GLIBC_TUNABLES", "Fatal glibc error"].into_iter().find(|t| read_only(t.as_bytes())) {
            return found("glibc", format!("stripped, but its data holds glibc's {text:?}"));
        }
        if read_only(b"No error information") {
            return found(
                "unknown",
                format!(
                    "stripped: musl's strerror text is there, so musl or Zig 0.16's libc, which keeps musl's{}",
                    linked_by(image)
                ),
            );
        }
        return found("unknown", format!("stripped, and nothing left names a libc{}", linked_by(image)));
    }
    found("unknown", "no libc imported and none of the start-up symbols of glibc or musl".into())
}

/// What `.comment` says of a toolchain that builds musl itself, for the evidence: Zig's LLD, or
/// rustc with its self-contained musl; empty otherwise.
fn linked_by(image: &Image<'_>) -> String {
    if let Some(zig) = image.comment.iter().find(|c| c.contains("ziglang")) {
        return format!(", linked by Zig ({zig})");
    }
    if let Some(rust) = image.comment.iter().find(|c| c.starts_with("rustc version")) {
        return format!(", Rust's self-contained musl ({rust})");
    }
    String::new()
}
