//! Every crate's shape holds: in the server (`src/`), core (`core/src`) and the agent
//! (`ingest-agent/src`), modules depend on each other in one direction only
//! (`scripts/import-circles` finds no import circle), no source file grows past 500 lines
//! before its inline tests, and no two types of a crate share a name; the server's store never
//! reaches up into the rules or the analysis; the agent reads what the server answers with core's
//! types only; and each crate's integration tests are one binary, `tests/all`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates' source folders, from the repository's root.
const CRATES: [&str; 3] = ["src", "core/src", "ingest-agent/src"];

/// The crates' folders, from the repository's root (the server's is the root itself).
const CRATE_ROOTS: [&str; 3] = ["", "core", "ingest-agent"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `scripts/import-circles` on one crate's sources and fails with what it printed.
fn assert_no_import_circles(src: &str) {
    let out = Command::new("python3")
        .arg("scripts/import-circles")
        .arg(src)
        .current_dir(root())
        .output()
        .expect("python3 runs scripts/import-circles");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts/import-circles {src} exited with {}:\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("import circles: 0 top-level, 0 between siblings"), "{src}: {stdout}");
}

#[test]
fn the_server_has_no_import_circles() {
    assert_no_import_circles("src");
}

#[test]
fn core_has_no_import_circles() {
    assert_no_import_circles("core/src");
}

#[test]
fn the_agent_has_no_import_circles() {
    assert_no_import_circles("ingest-agent/src");
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn no_source_file_of_any_crate_is_over_500_lines_before_its_tests() {
    let mut long = Vec::new();
    for src in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(src), &mut files);
        assert!(files.len() > 10, "found the sources of {src}: {files:?}");
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            // An inline test module at the end does not count.
            let lines = text.lines().take_while(|l| !l.starts_with("#[cfg(test)]")).count();
            if lines > 500 {
                long.push(format!("{}: {lines} lines", f.strip_prefix(root()).unwrap_or(f).display()));
            }
        }
    }
    assert!(long.is_empty(), "split these by concern: {long:?}");
}

/// Rust source with its comments, string literals and char literals blanked out (each character
/// becomes a space, line breaks stay), so what is left is code: a `struct` in a doc comment or a
/// `{` in a string does not count.
fn code_only(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, text: &[char]| out.extend(text.iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        let end = if rest.starts_with(&['/', '/']) {
            rest.iter().position(|&c| c == '\n').unwrap_or(rest.len())
        } else if rest.starts_with(&['/', '*']) {
            let mut depth = 0;
            let mut j = 0;
            loop {
                if j + 1 >= rest.len() {
                    break rest.len();
                } else if rest[j] == '/' && rest[j + 1] == '*' {
                    depth += 1;
                    j += 2;
                } else if rest[j] == '*' && rest[j + 1] == '/' {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break j;
                    }
                } else {
                    j += 1;
                }
            }
        } else if let Some(len) = raw_string(rest, i == 0 || !is_ident(chars[i - 1])) {
            len
        } else if rest[0] == '"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != '"' {
                j += if rest[j] == '\\' { 2 } else { 1 };
            }
            (j + 1).min(rest.len())
        } else if rest[0] == '\'' && rest.get(1) == Some(&'\\') {
            rest.iter().skip(2).position(|&c| c == '\'').map_or(rest.len(), |p| p + 3)
        } else if rest[0] == '\'' && rest.get(2) == Some(&'\'') {
            3
        } else {
            out.push(rest[0]);
            i += 1;
            continue;
        };
        blank(&mut out, &rest[..end]);
        i += end;
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The length of the raw string (`r"…"`, `r#"…"#`, `br"…"`) `text` starts with, if it starts one
/// (`fresh`: no identifier character before it).
fn raw_string(text: &[char], fresh: bool) -> Option<usize> {
    if !fresh {
        return None;
    }
    let start = match text {
        ['b', 'r', ..] => 2,
        ['r', ..] => 1,
        _ => return None,
    };
    let hashes = text[start..].iter().take_while(|&&c| c == '#').count();
    if text.get(start + hashes) != Some(&'"') {
        return None;
    }
    let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
    let body = start + hashes + 1;
    let found = text[body..].windows(close.len()).position(|w| w == close.as_slice());
    Some(found.map_or(text.len(), |p| body + p + close.len()))
}

/// `code` (as `code_only` leaves it) without the items marked `#[cfg(test)]`: each runs from the
/// attribute to the `;` or the closing `}` that ends it.
fn without_test_items(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (k, c) in item.char_indices() {
            match c {
                '{' | '(' | '[' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// Each `struct` and `enum` a crate's sources declare outside `#[cfg(test)]` items, by name, with
/// the files that declare it.
fn declared_types(src: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut files = Vec::new();
    rust_files(&root().join(src), &mut files);
    let mut declared: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for f in &files {
        let code = without_test_items(&code_only(&std::fs::read_to_string(f).unwrap()));
        let words: Vec<&str> = code.split(|c: char| !is_ident(c)).filter(|w| !w.is_empty()).collect();
        for pair in words.windows(2) {
            if matches!(pair[0], "struct" | "enum") && pair[1].starts_with(|c: char| c.is_uppercase()) {
                let file = f.strip_prefix(root()).unwrap_or(f).display().to_string();
                declared.entry(pair[1].to_string()).or_default().push(file);
            }
        }
    }
    declared
}

/// Names a crate may declare twice, each with why. Empty: every type has a name of its own.
const SHARED_NAMES: &[(&str, &str)] = &[];

#[test]
fn no_crate_declares_two_types_of_one_name() {
    let mut twice = Vec::new();
    for src in CRATES {
        let declared = declared_types(src);
        assert!(declared.len() > 20, "found the types of {src}: {declared:?}");
        for (name, files) in declared {
            if files.len() > 1 && !SHARED_NAMES.iter().any(|(shared, _)| *shared == name) {
                twice.push(format!("{name} in {}", files.join(", ")));
            }
        }
    }
    assert!(twice.is_empty(), "give each its own name, one that says what it is: {twice:?}");
}

#[test]
fn the_type_scan_sees_declarations_and_skips_comments_strings_and_tests() {
    let src = r##"
        /// A `struct Doc` in a comment.
        pub(crate) struct Real<'a> { x: &'a str }
        enum Kind { A, B }
        const TEXT: &str = "struct InString {";
        const RAW: &str = r#"enum InRaw "{"#;
        const BRACE: char = '{';
        #[cfg(test)]
        mod tests {
            struct InTests;
            fn f() -> char { '}' }
        }
        struct After;
    "##;
    let code = without_test_items(&code_only(src));
    let words: Vec<&str> = code.split(|c: char| !is_ident(c)).filter(|w| !w.is_empty()).collect();
    let found: Vec<&str> = words.windows(2).filter(|p| matches!(p[0], "struct" | "enum")).map(|p| p[1]).collect();
    assert_eq!(found, ["Real", "Kind", "After"]);
}

/// The crate-level modules a file names: `crate::NAME`, each `NAME` of a `crate::{…}` group, and
/// `super::…::NAME` where the `super`s climb from the file's module (`depth` deep below the crate)
/// to the crate.
fn crate_modules_named(code: &str, depth: usize) -> Vec<String> {
    // Spaces kept only between words, so `crate :: rules` reads as `crate::rules`.
    let chars: Vec<char> = code.chars().collect();
    let code: String = chars
        .iter()
        .enumerate()
        .filter(|&(k, c)| {
            !c.is_whitespace() || {
                let before = chars[..k].iter().rev().find(|c| !c.is_whitespace());
                let after = chars[k + 1..].iter().find(|c| !c.is_whitespace());
                before.is_some_and(|&c| is_ident(c))
                    && after.is_some_and(|&c| is_ident(c))
                    && !chars[k - 1].is_whitespace()
            }
        })
        .map(|(_, c)| if c.is_whitespace() { ' ' } else { *c })
        .collect();
    let mut named = Vec::new();
    let first_word = |s: &str| s.split(|c: char| !is_ident(c)).next().unwrap_or_default().to_string();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == '$') {
            continue;
        }
        let path = &code[at + "crate::".len()..];
        if let Some(group) = path.strip_prefix('{') {
            let mut level = 0usize;
            let mut item_start = true;
            for (k, c) in group.char_indices() {
                if item_start && level == 0 {
                    named.push(first_word(&group[k..]));
                }
                item_start = false;
                match c {
                    '{' => level += 1,
                    '}' if level == 0 => break,
                    '}' => level -= 1,
                    ',' if level == 0 => item_start = true,
                    _ => {}
                }
            }
        } else {
            named.push(first_word(path));
        }
    }
    for (at, _) in code.match_indices("super::") {
        if code[..at].ends_with("super::") || code[..at].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let mut path = &code[at..];
        let mut climbs = 0;
        while let Some(rest) = path.strip_prefix("super::") {
            climbs += 1;
            path = rest;
        }
        if climbs >= depth {
            named.push(first_word(path));
        }
    }
    named
}

#[test]
fn nothing_under_the_store_uses_the_rules_or_analysis() {
    let mut files = Vec::new();
    rust_files(&root().join("src/store"), &mut files);
    assert!(files.len() > 10, "found the store's sources: {files:?}");
    let mut reaching = Vec::new();
    for f in &files {
        let relative = f.strip_prefix(root().join("src")).unwrap();
        // store/x.rs is crate::store::x, two below the crate; store/db/mod.rs is crate::store::db.
        let depth = relative.components().count() - usize::from(relative.ends_with("mod.rs"));
        let code = without_test_items(&code_only(&std::fs::read_to_string(f).unwrap()));
        let named = crate_modules_named(&code, depth);
        for module in named.iter().filter(|m| *m == "rules" || *m == "analysis") {
            reaching.push(format!("src/{} uses crate::{module}", relative.display()));
        }
    }
    assert!(
        reaching.is_empty(),
        "the store reads and writes and never decides: return rows, and let intake or views ask the rules: \
         {reaching:?}"
    );
}

#[test]
fn the_path_scan_sees_every_way_to_name_a_crate_module() {
    let named = |code: &str, depth| crate_modules_named(code, depth);
    assert_eq!(named("use crate::rules::evaluate::Track;", 2), ["rules"]);
    assert_eq!(named("use crate::{model::Slope, analysis::{self, RunFit}};", 2), ["model", "analysis"]);
    assert_eq!(named("let c = crate :: analysis :: classify(&m);", 2), ["analysis"]);
    assert_eq!(named("use super::super::rules::replay;", 2), ["rules"]);
    assert_eq!(named("use super::db::sql; use super::super::runs::x;", 3), Vec::<String>::new());
    assert_eq!(named("use slopewatch_core::rules; my_crate::analysis();", 2), Vec::<String>::new());
}

/// The lines of `text` (numbered from 1) that declare a type read from JSON (a derived or
/// implemented `Deserialize`, the derive possibly over several lines) or read untyped JSON
/// (`serde_json::Value`).
fn json_readers(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut derive: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if let Some((_, attribute)) = derive.as_mut() {
            attribute.push_str(code);
        } else if code.contains("#[derive(") || (code.contains("derive(") && code.contains("cfg_attr")) {
            derive = Some((n + 1, code.to_string()));
        }
        if let Some((at, attribute)) = derive.take_if(|(_, a)| a.contains(")]")) {
            if attribute.contains("Deserialize") {
                found.push((at, attribute.trim().to_string()));
            }
        }
        let implements = code.contains("impl<'de>") || code.contains("Deserialize<'de> for");
        let untyped =
            code.contains("serde_json::Value") || (code.contains("use serde_json::") && code.contains("Value"));
        if implements || untyped {
            found.push((n + 1, code.trim().to_string()));
        }
    }
    found
}

/// What the server answers the agent reads with core's types (`slopewatch_core::answers`), the
/// ones the server writes, so agent and server cannot drift apart: under `ingest-agent/src/server/`,
/// where everything that talks to the server lives, no file but the spool's (`spool.rs`, whose
/// records are the agent's own file format) derives or implements `Deserialize` or reads a
/// `serde_json::Value`.
#[test]
fn the_agent_declares_no_type_of_its_own_for_what_the_server_answers() {
    let mut files = Vec::new();
    rust_files(&root().join("ingest-agent/src/server"), &mut files);
    assert!(files.iter().any(|f| f.ends_with("client.rs")), "found the agent's server module: {files:?}");
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("spool.rs")) {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, what) in json_readers(&text) {
            found.push(format!("{}:{n}: {what}", f.strip_prefix(root()).unwrap_or(f).display()));
        }
    }
    assert!(found.is_empty(), "read the server's answers with slopewatch_core::answers instead: {found:?}");
}

#[test]
fn json_readers_are_found_however_they_are_written() {
    let text = "use serde::Deserialize;\n#[derive(Debug, Deserialize)]\nstruct A;\n#[derive(\n    Clone,\n    \
                serde::Deserialize,\n)]\nstruct B;\nimpl<'de> serde::Deserialize<'de> for C {}\n\
                let v: serde_json::Value = x;\nuse serde_json::{json, Value};\n#[derive(Serialize)]\nstruct D;\n\
                // serde_json::Value in a comment\n";
    let lines: Vec<usize> = json_readers(text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(lines, [2, 4, 9, 10, 11]);
}

/// Each crate's integration tests are one binary, `tests/all`, with a module per subject: a
/// `tests/*.rs` file or a `tests/*/main.rs` beside it (or a `[[test]]` in the manifest) would be
/// a second binary linking the whole crate again.
#[test]
fn every_crate_has_one_integration_test_binary() {
    let mut others = Vec::new();
    for krate in CRATE_ROOTS {
        let tests = root().join(krate).join("tests");
        assert!(tests.join("all/main.rs").is_file(), "{} has no tests/all/main.rs", tests.display());
        for entry in std::fs::read_dir(&tests).unwrap() {
            let path = entry.unwrap().path();
            let target = if path.is_dir() {
                path.file_name().is_some_and(|n| n != "all") && path.join("main.rs").is_file()
            } else {
                path.extension().is_some_and(|e| e == "rs")
            };
            if target {
                others.push(path.strip_prefix(root()).unwrap_or(&path).display().to_string());
            }
        }
        let manifest = Path::new(krate).join("Cargo.toml");
        if std::fs::read_to_string(root().join(&manifest)).unwrap().lines().any(|l| l.trim() == "[[test]]") {
            others.push(format!("[[test]] in {}", manifest.display()));
        }
    }
    assert!(others.is_empty(), "make these modules of tests/all (declared in its main.rs): {others:?}");
}

/// Each table a backend's migrations leave, with its columns in the order they were added, and the
/// migration that created it: `migrations` are (file name, SQL) in the order they run. Temporary
/// tables (a SQLite table rebuilt through one) are left aside, dropped and renamed tables followed.
fn tables_of(migrations: &[(String, String)]) -> std::collections::BTreeMap<String, (String, Vec<String>)> {
    let mut tables: std::collections::BTreeMap<String, (String, Vec<String>)> = Default::default();
    for (file, sql) in migrations {
        let sql: String = sql.lines().map(|l| l.split("--").next().unwrap_or_default()).collect::<Vec<_>>().join(" ");
        for statement in sql.split(';') {
            let s = statement.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
            let words: Vec<&str> = s.split(|c: char| !is_ident(c)).filter(|w| !w.is_empty()).collect();
            match words.as_slice() {
                ["create", "table", "if", "not", "exists", name, ..] | ["create", "table", name, ..] => {
                    let body = &s[s.find('(').unwrap_or(s.len())..];
                    let body = body.strip_prefix('(').and_then(|b| b.strip_suffix(')')).unwrap_or_default();
                    let columns = top_level_items(body)
                        .into_iter()
                        .filter_map(|item| item.split_whitespace().next().map(String::from))
                        .filter(|w| !matches!(w.as_str(), "primary" | "unique" | "foreign" | "check" | "constraint"))
                        .collect();
                    tables.insert(name.to_string(), (file.clone(), columns));
                }
                ["drop", "table", "if", "exists", name, ..] | ["drop", "table", name, ..] => {
                    tables.remove(*name);
                }
                ["alter", "table", from, "rename", "to", to] => {
                    if let Some(t) = tables.remove(*from) {
                        tables.insert(to.to_string(), t);
                    }
                }
                ["alter", "table", name, ..] => {
                    let Some((_, columns)) = tables.get_mut(*name) else { continue };
                    for (k, pair) in words.windows(3).enumerate() {
                        match pair {
                            ["add", "column", c] => columns.push(c.to_string()),
                            ["drop", "column", c] => columns.retain(|have| have != c),
                            ["rename", "column", c] => {
                                let to = words.get(k + 4).copied().unwrap_or_default();
                                columns.iter_mut().filter(|have| have == c).for_each(|have| *have = to.to_string());
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
    tables
}

/// `body`'s items separated by commas outside parentheses.
fn top_level_items(body: &str) -> Vec<&str> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (k, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(body[start..k].trim());
                start = k + 1;
            }
            _ => {}
        }
    }
    items.push(body[start..].trim());
    items
}

/// One backend's migrations, (file name, SQL) in the order they run.
fn migrations_of(backend: &str) -> Vec<(String, String)> {
    let dir = root().join("migrations").join(backend);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|f| f.extension().is_some_and(|e| e == "sql"));
    files.sort();
    assert!(files.len() > 20, "found the migrations of {backend}: {files:?}");
    files
        .iter()
        .map(|f| (f.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(f).unwrap()))
        .collect()
}

/// What is wrong between the tables `migrations` leave on `backend` and the export's lists
/// (`slopewatch::transfer::tables`): a table none of them names, a carried table's column the
/// export does not list, or a listed table or column the migrations do not have.
fn export_gaps(backend: &str, migrations: &[(String, String)]) -> Vec<String> {
    use slopewatch::transfer::tables::{EXPORTED, LEFT_OUT, REBUILT};
    let tables = tables_of(migrations);
    let mut gaps = Vec::new();
    for (table, (file, columns)) in &tables {
        let exported = EXPORTED.iter().find(|(t, _)| t == table);
        let elsewhere = REBUILT.iter().chain(LEFT_OUT).any(|(t, _)| t == table);
        match exported {
            None if !elsewhere => gaps.push(format!(
                "migrations/{backend}/{file} creates {table}, which is neither exported, rebuilt by import, nor left \
                 out with a reason"
            )),
            None => {}
            Some((_, listed)) => {
                for c in columns.iter().filter(|c| !listed.contains(&c.as_str())) {
                    gaps.push(format!("{table}.{c} on {backend} is not among the exported table's columns"));
                }
                for c in listed.iter().filter(|c| !columns.iter().any(|have| have == *c)) {
                    gaps.push(format!("{table}.{c} is listed as exported but {backend} has no such column"));
                }
            }
        }
    }
    let listed = EXPORTED.iter().map(|(t, _)| t).chain(REBUILT.iter().chain(LEFT_OUT).map(|(t, _)| t));
    for table in listed {
        if !tables.contains_key(*table) {
            gaps.push(format!("{table} is listed but the migrations of {backend} leave no such table"));
        }
    }
    gaps
}

#[test]
fn every_table_the_migrations_create_is_exported_rebuilt_or_left_out_with_a_reason() {
    use slopewatch::transfer::tables::{EXPORTED, LEFT_OUT, REBUILT};
    let mut names: Vec<&str> =
        EXPORTED.iter().map(|(t, _)| *t).chain(REBUILT.iter().chain(LEFT_OUT).map(|(t, _)| *t)).collect();
    let count = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), count, "a table is listed twice: {names:?}");
    assert!(REBUILT.iter().chain(LEFT_OUT).all(|(_, why)| !why.trim().is_empty()), "each says why");
    for backend in ["postgres", "sqlite"] {
        let gaps = export_gaps(backend, &migrations_of(backend));
        assert!(
            gaps.is_empty(),
            "carry it in src/transfer (export and import), or list it in src/transfer/tables.rs as rebuilt by \
             import or left out with why: {gaps:?}"
        );
    }
}

#[test]
fn a_new_table_or_column_the_export_does_not_know_is_caught() {
    for backend in ["postgres", "sqlite"] {
        let mut migrations = migrations_of(backend);
        migrations.push((
            "9999_more.sql".into(),
            "-- A history the export forgets.\nCREATE TABLE run_notes (\n    run_id UUID NOT NULL,\n    body TEXT,\n    \
             PRIMARY KEY (run_id)\n);\nALTER TABLE exposure_scans ADD COLUMN signer TEXT;\n\
             ALTER TABLE exposure_latest ADD COLUMN digest TEXT;\nCREATE TEMP TABLE scratch AS SELECT 1;\n\
             DROP TABLE settings;\n"
                .into(),
        ));
        let gaps = export_gaps(backend, &migrations);
        assert_eq!(
            gaps,
            [
                format!("exposure_scans.signer on {backend} is not among the exported table's columns"),
                format!(
                    "migrations/{backend}/9999_more.sql creates run_notes, which is neither exported, rebuilt by \
                     import, nor left out with a reason"
                ),
                format!("settings is listed but the migrations of {backend} leave no such table"),
            ],
            "a rebuilt table's new column is rebuilt with it; a temporary table is no table"
        );
    }
}

/// Where an alert threshold's or factor's value may be written: the defaults, once, in core and
/// in the config, and a number that is no threshold. Pages, charts and views take the configured
/// rules instead, so a page never judges by a value of its own.
const LIMIT_LITERALS_ALLOWED: [(&str, &str); 4] = [
    ("core/src/verdict.rs", "pub const DEFAULT_MAX_SLOPE: f64 = 1.5;"),
    ("src/config/alerts.rs", "pub const DEFAULT_WATCH_FROM: f64 = 1.2;"),
    ("src/config/alerts.rs", "cost_factor: 1.5,"),
    // A line's width in the trend's SVG.
    ("src/charts/trend.rs", r#"stroke-width="1.5""#),
];

/// The lines of `text` (a file at `path`, before its inline tests, comments left out) that write
/// a default limit's value (1.5 or 1.2, not 1.25 nor a version such as 1.2.5) and are not allowed.
fn limit_literals(path: &str, text: &str) -> Vec<String> {
    let is_limit = |line: &str| {
        let b = line.as_bytes();
        line.match_indices("1.").any(|(at, _)| {
            let before = at.checked_sub(1).map(|i| b[i]);
            let (digit, after) = (b.get(at + 2).copied(), b.get(at + 3).copied());
            let next = b.get(at + 4).copied();
            !before.is_some_and(|c| c.is_ascii_digit() || c == b'.')
                && matches!(digit, Some(b'5' | b'2'))
                && !after.is_some_and(|c| c.is_ascii_digit())
                && (after != Some(b'.') || !next.is_some_and(|c| c.is_ascii_digit()))
        })
    };
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//") && is_limit(l))
        .filter(|(_, l)| !LIMIT_LITERALS_ALLOWED.iter().any(|(p, allowed)| *p == path && l.contains(allowed)))
        .map(|(n, l)| format!("{path}:{}: {}", n + 1, l.trim()))
        .collect()
}

#[test]
fn no_page_chart_or_view_writes_an_alert_threshold_or_factor_of_its_own() {
    let mut files = Vec::new();
    for src in ["src", "core/src"] {
        rust_files(&root().join(src), &mut files);
    }
    let mut templates = vec![root().join("templates")];
    while let Some(dir) = templates.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                templates.push(path);
            } else {
                files.push(path);
            }
        }
    }
    let mut found = Vec::new();
    for f in &files {
        let path = f.strip_prefix(root()).unwrap().to_string_lossy().to_string();
        found.extend(limit_literals(&path, &std::fs::read_to_string(f).unwrap()));
    }
    assert!(found.is_empty(), "take the configured alert rules instead of these: {found:#?}");
    // The scan sees a threshold written in code or in text, and not a version or another number.
    assert_eq!(limit_literals("src/charts/slope.rs", "let t = 1.5;\n(t, \"alert k > 1.2\")").len(), 2);
    assert!(limit_literals("src/x.rs", "\"musl-gcc@1.2.5\", 1.25, 11.5,\n// k > 1.5\n").is_empty());
    assert!(limit_literals("src/config/alerts.rs", "            cost_factor: 1.5,").is_empty());
}
