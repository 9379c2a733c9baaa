//! Compiling and linking the contract catalogue so that a probe that cannot be built costs only
//! itself: each compiler error and undefined reference is traced to the function whose probes'
//! code it lies in, and the catalogue is built again without them (`-DSW_NO_DECL_NAME`).

use crate::builds::contracts;
use crate::builds::toolchain::{CompileError, DetectedToolchain};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How many times the catalogue is built at most: a compiler reports every error of a build at
/// once, so each round leaves out all it names, and a few rounds are enough.
const MOST_BUILDS: usize = 8;

/// A function whose probes' code this libc could not compile, though its headers declare it:
/// its probes are reported as failed to build, with what the compiler said of that code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    pub function: String,
    /// The compiler's exit status on the build that failed.
    pub exit_status: Option<i32>,
    /// The compiler's diagnostics for that function's code, paths relative to the build directory.
    pub output: String,
}

impl LeftOut {
    /// The failure its probes report.
    pub fn error(&self, toolchain: &str) -> CompileError {
        CompileError {
            toolchain: toolchain.to_string(),
            exit_status: self.exit_status,
            signal: None,
            output: self.output.clone(),
        }
    }
}

/// Compiles `sources` (the catalogue, written in `src_dir`) into `out`, linking the optional
/// functions this libc has (`-Wl,-u,NAME` makes a static libc's archive give each up). Where the
/// build fails it is tried again without what failed: an optional function the link misses, the
/// probes of a function the link finds undefined (they then report it not provided), the probes of
/// a function whose code does not compile (returned, so they report the compiler's error). A build
/// that fails where nothing more can be left out returns that build's error.
pub fn build(
    tc: &DetectedToolchain,
    sources: &[PathBuf],
    src_dir: &Path,
    extra: &[String],
    out: &Path,
) -> Result<Vec<LeftOut>, CompileError> {
    let mut symbols = contracts::optional_symbols();
    let mut left_out: Vec<LeftOut> = Vec::new();
    let mut not_linked: BTreeSet<String> = BTreeSet::new();
    let mut last = None;
    for _ in 0..MOST_BUILDS {
        let mut args = extra.to_vec();
        args.extend(symbols.iter().map(|s| format!("-Wl,-u,{s}")));
        let without = left_out.iter().map(|l| &l.function).chain(&not_linked);
        args.extend(without.map(|f| format!("-DSW_NO_DECL_{f}")));
        let e = match tc.compile(sources, src_dir, &args, out) {
            Ok(()) => return Ok(left_out),
            Err(e) => e,
        };
        let gone = |f: &String| left_out.iter().any(|l| l.function == *f) || not_linked.contains(f);
        let missing = contracts::undefined_symbols(&e, &symbols);
        let failed: BTreeMap<String, String> =
            compile_errors(&e.output).into_iter().filter(|(f, _)| !gone(f)).collect();
        let unlinked: BTreeSet<String> =
            undefined_in(&e.output).into_iter().filter(|f| !gone(f) && !failed.contains_key(f)).collect();
        if missing.is_empty() && failed.is_empty() && unlinked.is_empty() {
            return Err(e);
        }
        symbols.retain(|s| !missing.contains(s));
        not_linked.extend(unlinked);
        let relative = |output: String| output.replace(&format!("{}/", src_dir.display()), "");
        left_out.extend(failed.into_iter().map(|(function, output)| LeftOut {
            function,
            exit_status: e.exit_status,
            output: relative(output),
        }));
        last = Some(e);
    }
    Err(last.expect("built at least once"))
}

/// The functions whose probes' code the compiler's errors in `output` lie in, each with those
/// errors (and their notes). An error outside the catalogue's `.c` files, or in code no probe of
/// a function holds, names none.
fn compile_errors(output: &str) -> BTreeMap<String, String> {
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    for (file, line, text) in diagnostics(output) {
        for f in sources().functions_at(&file, line) {
            let all = found.entry(f).or_default();
            all.push_str(&text);
        }
    }
    found
}

/// Each error in a compiler's `output`, as the file and line it points at and its text: the
/// error, the notes that follow it, and the `In function` line before it. Warnings are skipped.
fn diagnostics(output: &str) -> Vec<(String, usize, String)> {
    let mut all: Vec<(String, usize, String)> = Vec::new();
    let mut context: Vec<&str> = Vec::new();
    let mut current: Option<usize> = None;
    for line in output.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("In file included from")
            || trimmed.starts_with("from ")
            || line.contains(": In function")
        {
            context.push(line);
            continue;
        }
        match location(line) {
            Some((file, at, "error")) => {
                let mut text: String =
                    context.iter().filter(|l| l.contains(": In function")).map(|l| format!("{l}\n")).collect();
                text.push_str(&format!("{line}\n"));
                all.push((file.to_string(), at, text));
                current = Some(all.len() - 1);
            }
            Some((_, _, "warning")) => current = None,
            _ => {
                if let Some(i) = current {
                    context.iter().for_each(|l| all[i].2.push_str(&format!("{l}\n")));
                    all[i].2.push_str(&format!("{line}\n"));
                }
            }
        }
        context.clear();
    }
    all
}

/// `FILE:LINE:COL: KIND:` (gcc, clang, zig cc; the column optional): the file's name, the line and
/// the kind (`error`, `warning`, `note`). `fatal error` is an error.
fn location(line: &str) -> Option<(&str, usize, &str)> {
    let mut parts = line.splitn(5, ':');
    let file = parts.next()?;
    let at: usize = parts.next()?.trim().parse().ok()?;
    let mut kind = parts.next()?.trim();
    if kind.parse::<usize>().is_ok() {
        kind = parts.next()?.trim();
    }
    let kind = kind.strip_prefix("fatal ").unwrap_or(kind);
    ["error", "warning", "note"].into_iter().find(|k| kind == *k).map(|k| (file, at, k))
}

/// The functions whose probes the link found undefined references from: a function of the
/// catalogue it names, or the probe's code it names as referring to another symbol (GNU ld's
/// "in function `NAME'", lld's and mold's ">>> … :(NAME)").
fn undefined_in(output: &str) -> BTreeSet<String> {
    let catalogue = contracts::functions();
    let mut found = BTreeSet::new();
    let mut referring: Option<&str> = None;
    let mut symbol: Option<&str> = None;
    for line in output.lines() {
        if let Some(name) = between(line, "in function `", "'") {
            referring = Some(name);
        }
        if let Some(s) = between(line, "undefined reference to `", "'")
            .or_else(|| line.split_once("undefined symbol: ").map(|(_, s)| s.trim()))
        {
            symbol = Some(s);
            if catalogue.contains(&s) {
                found.insert(s.to_string());
            } else if let Some(name) = referring.filter(|_| line.contains("undefined reference")) {
                found.extend(sources().functions_of(name));
            }
        }
        if let (Some(_), Some(name)) =
            (symbol, line.trim_start().strip_prefix(">>>").and_then(|l| between(l, ":(", ")")))
        {
            found.extend(sources().functions_of(name));
        }
    }
    found
}

fn between<'a>(line: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let (_, rest) = line.split_once(start)?;
    rest.split_once(end).map(|(inside, _)| inside)
}

/// Where each function's probes lie in the catalogue's `.c` files.
struct Sources {
    files: Vec<SourceFile>,
}

/// One `.c` file of the catalogue: its `#ifndef SW_NO_DECL_NAME` blocks, its C functions, and
/// which C functions each probe (`const struct sw_probe sw_probe_ID = {…}`) is made of.
struct SourceFile {
    name: &'static str,
    /// (first line, last line, function), lines from 1.
    blocks: Vec<(usize, usize, String)>,
    /// (first line, last line, C name) of each function defined at the top level.
    definitions: Vec<(usize, usize, String)>,
    /// (line, the C names in its initializer) of each probe.
    probes: Vec<(usize, Vec<String>)>,
}

fn sources() -> &'static Sources {
    static SOURCES: OnceLock<Sources> = OnceLock::new();
    SOURCES.get_or_init(|| Sources {
        files: contracts::FILES
            .iter()
            .filter(|(n, _)| n.ends_with(".c"))
            .map(|(n, t)| SourceFile::read(n, t))
            .collect(),
    })
}

impl Sources {
    /// The functions whose probes' code holds line `line` of `file` (a path ending in one of the
    /// catalogue's `.c` files): the block the line lies in, else the probes made of the C function
    /// it lies in.
    fn functions_at(&self, file: &str, line: usize) -> Vec<String> {
        let name = Path::new(file).file_name().and_then(|n| n.to_str()).unwrap_or(file);
        let Some(f) = self.files.iter().find(|f| f.name == name) else { return Vec::new() };
        if let Some(function) = f.block_at(line) {
            return vec![function.to_string()];
        }
        match f.definitions.iter().find(|(first, last, _)| (*first..=*last).contains(&line)) {
            Some((_, _, c_name)) => self.functions_of(c_name),
            None => Vec::new(),
        }
    }

    /// The functions whose probes' code the C function `c_name` is: the block it is defined in,
    /// else every block whose probes are made of it.
    fn functions_of(&self, c_name: &str) -> Vec<String> {
        let mut found = BTreeSet::new();
        for f in &self.files {
            if let Some((first, _, _)) = f.definitions.iter().find(|(_, _, n)| n == c_name) {
                if let Some(function) = f.block_at(*first) {
                    return vec![function.to_string()];
                }
            }
            let using = f.probes.iter().filter(|(_, names)| names.iter().any(|n| n == c_name));
            found.extend(using.filter_map(|(line, _)| f.block_at(*line)).map(str::to_string));
        }
        found.into_iter().collect()
    }
}

impl SourceFile {
    fn read(name: &'static str, text: &str) -> SourceFile {
        let mut file = SourceFile { name, blocks: Vec::new(), definitions: Vec::new(), probes: Vec::new() };
        let mut open: Vec<(usize, Option<String>)> = Vec::new();
        let mut defining: Option<(usize, String)> = None;
        for (i, line) in text.lines().enumerate() {
            let at = i + 1;
            let directive = line.trim_start().strip_prefix('#').map(str::trim_start);
            if let Some(d) = directive {
                if d.starts_with("if") {
                    let guarded = d.strip_prefix("ifndef").and_then(|r| r.trim().strip_prefix("SW_NO_DECL_"));
                    open.push((at, guarded.map(str::to_string)));
                } else if d.starts_with("endif") {
                    if let Some((first, Some(function))) = open.pop() {
                        file.blocks.push((first, at, function));
                    }
                }
                continue;
            }
            if let Some(rest) = line.strip_prefix("const struct sw_probe sw_probe_") {
                let inside = between(rest, "{", "}").unwrap_or("");
                file.probes.push((at, inside.split(',').map(|n| n.trim().to_string()).collect()));
            } else if let Some(c_name) = definition(line) {
                if line.trim_end().ends_with('}') {
                    file.definitions.push((at, at, c_name));
                } else {
                    defining = Some((at, c_name));
                }
            } else if line.starts_with('}') {
                if let Some((first, c_name)) = defining.take() {
                    file.definitions.push((first, at, c_name));
                }
            }
        }
        file
    }

    /// The function of the innermost `#ifndef SW_NO_DECL_NAME` block holding line `line`.
    fn block_at(&self, line: usize) -> Option<&str> {
        let holding = self.blocks.iter().filter(|(first, last, _)| (*first..=*last).contains(&line));
        holding.max_by_key(|(first, _, _)| *first).map(|(_, _, f)| f.as_str())
    }
}

/// The name of the C function a line at the top level starts to define: `static long long
/// name(void) {`.
fn definition(line: &str) -> Option<String> {
    if line.starts_with(|c: char| c.is_whitespace() || c == '#' || c == '/' || c == '}' || c == '*') {
        return None;
    }
    let (head, _) = line.split_once('(')?;
    if !line.contains('{') || head.contains('=') {
        return None;
    }
    let name = head.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next()?;
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compiler_error_names_the_function_whose_probe_code_it_lies_in() {
        let string_c = contracts::FILES.iter().find(|(n, _)| *n == "string.c").unwrap().1;
        let call = string_c.lines().position(|l| l.contains("hits += strspn(s, \"abc\") == 1")).unwrap() + 1;
        let setup = string_c.lines().position(|l| l.starts_with("static int strspn_remaining_setup")).unwrap() + 2;
        let gcc = format!(
            "In file included from /b/string.c:2:\n/b/string.c: In function 'strspn_remaining_run':\n\
             /b/string.c:{call}:17: error: too many arguments to function 'strspn'\n  {call} |   x\n\
             In file included from inc/string.h:1:\n/usr/include/string.h:297:15: note: declared here\n\
             /b/string.c:1:1: warning: unused\n/b/main.c:3:1: error: expected ';'\n\
             string.c:{setup}: error: no column\n"
        );
        let errors = compile_errors(&gcc);
        assert_eq!(errors.keys().collect::<Vec<_>>(), ["strspn"], "{errors:?}");
        let strspn = &errors["strspn"];
        assert!(strspn.starts_with("/b/string.c: In function 'strspn_remaining_run':\n"), "{strspn}");
        assert!(strspn.contains("too many arguments") && strspn.contains("note: declared here"), "{strspn}");
        assert!(strspn.contains("no column") && !strspn.contains("unused") && !strspn.contains("main.c"), "{strspn}");
    }

    #[test]
    fn an_undefined_reference_names_the_function_it_is_or_whose_probe_code_makes_it() {
        let ld = "/usr/bin/ld: /tmp/cc1.o: in function `strspn_distance_run':\n\
                  string.c:(.text+0x31): undefined reference to `sw_renamed'\n\
                  /usr/bin/ld: /tmp/cc2.o: in function `main':\n\
                  stdlib.c:(.text+0x1): undefined reference to `strtold'\n";
        assert_eq!(undefined_in(ld).into_iter().collect::<Vec<_>>(), ["strspn", "strtold"]);
        let lld = "ld.lld: error: undefined symbol: sw_renamed\n>>> referenced by string.c:1040\n\
                   >>>               /tmp/string-1.o:(memchr_remaining_run)\n";
        assert_eq!(undefined_in(lld).into_iter().collect::<Vec<_>>(), ["memchr"]);
        assert!(undefined_in("/usr/bin/ld: in function `main':\nmain.c: undefined reference to `x'\n").is_empty());
    }
}
