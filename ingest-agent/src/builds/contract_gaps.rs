//! What a libc lacks of the contract catalogue before it is compiled: a header that does not
//! exist, a function its header does not declare or its library does not define. Each becomes a
//! `-DSW_NO_…` that leaves out only the probes needing it (see `c/contracts/contracts.h`); a
//! built-in workload whose function is missing is built as a stub that says so.

use crate::builds::contracts::{self, Probe};
use crate::builds::toolchain::DetectedToolchain;
use std::collections::BTreeSet;
use std::path::Path;

/// The headers the catalogue can do without: the others the harness itself includes.
const OPTIONAL_HEADERS: &[&str] = &["strings.h", "wchar.h"];

/// The `-D` flags that leave out what this toolchain's libc lacks: `SW_NO_WCHAR_H` for a missing
/// header, `SW_NO_DECL_NAME` for a function that is not declared or not linked. One compile and
/// link tries everything at once, so a libc that has it all costs one check; only where that
/// fails is each header and function tried alone. `dir` is a scratch directory.
pub fn defines(tc: &DetectedToolchain, dir: &Path) -> Vec<String> {
    let probes = contracts::catalogue();
    let optional = contracts::optional_symbols();
    let functions: BTreeSet<(&str, &str)> = probes
        .iter()
        .filter(|p| !optional.contains(&p.function.as_str()))
        .map(|p: &Probe| (p.header.as_str(), p.function.as_str()))
        .collect();
    let all: Vec<(&str, &str)> = functions.iter().copied().collect();
    if links(tc, dir, "all", OPTIONAL_HEADERS, &all) {
        return Vec::new();
    }
    let missing_headers: Vec<&str> =
        OPTIONAL_HEADERS.iter().copied().filter(|h| !links(tc, dir, h, &[h], &[])).collect();
    let mut flags: Vec<String> =
        missing_headers.iter().map(|h| format!("-DSW_NO_{}", h.replace('.', "_").to_uppercase())).collect();
    flags.extend(
        functions
            .iter()
            .filter(|(h, _)| !missing_headers.contains(h))
            .filter(|&&(h, f)| !links(tc, dir, f, &[h], &[(h, f)]))
            .map(|(_, f)| format!("-DSW_NO_DECL_{f}")),
    );
    flags
}

/// The functions of the catalogue this toolchain's libc declares and defines, with the header
/// of each, as `defines` finds them: what a program may name. `dir` is a scratch directory.
pub fn provided(tc: &DetectedToolchain, dir: &Path) -> Vec<(&'static str, &'static str)> {
    let optional = contracts::optional_symbols();
    let left_out = defines(tc, dir);
    let mut functions: Vec<(&'static str, &'static str)> = contracts::catalogue()
        .iter()
        .filter(|p| !optional.contains(&p.function.as_str()))
        .filter(|p| {
            let header = format!("-DSW_NO_{}", p.header.replace('.', "_").to_uppercase());
            !left_out.iter().any(|d| *d == header || *d == format!("-DSW_NO_DECL_{}", p.function))
        })
        .map(|p| (p.header.as_str(), p.function.as_str()))
        .collect();
    functions.sort_unstable();
    functions.dedup();
    functions
}

/// Whether a program including `headers` and taking each function's address compiles and links.
fn links(tc: &DetectedToolchain, dir: &Path, name: &str, headers: &[&str], functions: &[(&str, &str)]) -> bool {
    let mut text = String::from("#define _GNU_SOURCE 1\n");
    let headers = headers.iter().copied().chain(functions.iter().map(|(h, _)| *h)).collect::<BTreeSet<_>>();
    for h in headers {
        text.push_str(&format!("#include <{h}>\n"));
    }
    // Each address kept in a volatile array, so that the link needs every symbol: a comparison
    // of a declared function's address with null is folded to true, and a header that declares
    // a function the library lacks would pass.
    text.push_str("void *volatile sw_kept[] = {\n    (void *)0,\n");
    for (_, f) in functions {
        text.push_str(&format!("    (void *)&{f},\n"));
    }
    text.push_str("};\nint main(void) { return sw_kept[0] != (void *)0; }\n");
    let src = dir.join(format!("has-{name}.c"));
    if std::fs::write(&src, text).is_err() {
        return false;
    }
    let flags: Vec<String> = contracts::CFLAGS.iter().map(|f| f.to_string()).collect();
    tc.compile(&[src], dir, &flags, &dir.join(format!("has-{name}"))).is_ok()
}

/// What a built-in workload named after its function (`strchrnul`) is built from where the libc
/// lacks that function: a program that exits as the catalogue's missing probes do, "not provided:
/// NAME" with status 4, so it reads `not provided` rather than "build failed". `None` where the
/// libc has it, or where the workload is not named after a function of the catalogue.
pub fn builtin_stub(tc: &DetectedToolchain, dir: &Path, workload: &str) -> Option<String> {
    let probe = contracts::catalogue().iter().find(|p| p.function == workload)?;
    if links(tc, dir, workload, &[&probe.header], &[(&probe.header, workload)]) {
        return None;
    }
    Some(format!(
        "#include <stdio.h>\nint main(void) {{\n    fputs(\"not provided: {workload}\\n\", stderr);\n    return 4;\n}}\n"
    ))
}
