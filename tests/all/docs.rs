//! The docs hold together: every relative link in the repository's Markdown reaches a file or
//! folder, every `#anchor` a heading (by GitHub's slug rules), and both READMEs stay front pages.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

/// The most a README may hold: a front page, with the reference under `docs/`.
const FRONT_PAGE_BYTES: usize = 12_000;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every Markdown file of the checkout, skipping build output, installed packages and the
/// folders of tools (`.git` and the like), as paths relative to the root.
fn markdown_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                markdown_files(&path, found);
            }
        } else if name.ends_with(".md") {
            found.push(path.strip_prefix(root()).unwrap().to_path_buf());
        }
    }
}

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_FOOTNOTES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// A heading's anchor as GitHub makes it: the heading's text lowercased, every character but
/// letters, digits, `-`, `_` and spaces removed, each space made a `-`.
fn slug(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .flat_map(char::to_lowercase)
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown text's headings; a repeated slug gets `-1`, `-2`, … as on GitHub.
fn anchors(text: &str) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(text, options()) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(heading.take().unwrap_or_default().trim());
                let mut candidate = base.clone();
                let mut n = 0;
                while found.contains(&candidate) {
                    n += 1;
                    candidate = format!("{base}-{n}");
                }
                found.insert(candidate);
            }
            _ => {}
        }
    }
    found
}

/// A link as written, with the line it starts on.
struct Link {
    line: usize,
    dest: String,
}

/// The links and images of a Markdown text; what code spans and code blocks hold is not parsed
/// as links, as on GitHub.
fn links(text: &str) -> Vec<Link> {
    Parser::new_ext(text, options())
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                Some(Link { line: text[..range.start].matches('\n').count() + 1, dest: dest_url.into_string() })
            }
            _ => None,
        })
        .collect()
}

fn is_absolute(dest: &str) -> bool {
    let scheme = dest.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
    matches!(scheme.as_deref(), Some("http" | "https" | "mailto"))
}

/// `%20` and the like, as a browser reads a link's path.
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where a relative link from `from` (a file relative to the root) points, relative to the root;
/// `None` when it climbs out of the repository. A leading `/` is the repository's root, as on
/// GitHub.
fn resolve(from: &Path, path: &str) -> Option<PathBuf> {
    let joined = match path.strip_prefix('/') {
        Some(rooted) => PathBuf::from(rooted),
        None => from.parent().unwrap_or(Path::new("")).join(path),
    };
    let mut parts = Vec::new();
    for part in joined.components() {
        match part {
            Component::Normal(p) => parts.push(p),
            Component::ParentDir => {
                parts.pop()?;
            }
            _ => {}
        }
    }
    Some(parts.iter().collect())
}

/// What is wrong with a link from `from`, if anything.
fn broken(from: &Path, dest: &str, anchors_of: &mut impl FnMut(&Path) -> Option<HashSet<String>>) -> Option<String> {
    if is_absolute(dest) {
        return None;
    }
    let (path, anchor) = match dest.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (dest, None),
    };
    let path = path.split('?').next().unwrap_or_default();
    let target = if path.is_empty() {
        from.to_path_buf()
    } else {
        match resolve(from, &percent_decoded(path)) {
            Some(target) => target,
            None => return Some("leads out of the repository".to_string()),
        }
    };
    if !root().join(&target).exists() {
        return Some(format!("{} does not exist", target.display()));
    }
    let anchor = anchor?;
    match anchors_of(&target) {
        None => Some(format!("#{anchor} points into {}, which is not a Markdown file", target.display())),
        Some(headings) if !headings.contains(&percent_decoded(anchor)) => {
            Some(format!("{} has no heading whose anchor is #{anchor}", target.display()))
        }
        Some(_) => None,
    }
}

#[test]
fn every_relative_link_in_the_docs_reaches_a_file_and_every_anchor_a_heading() {
    let mut files = Vec::new();
    markdown_files(root(), &mut files);
    files.sort();
    assert!(
        files.iter().any(|f| f == Path::new("README.md")) && files.len() > 5,
        "found the repository's Markdown files: {files:?}"
    );
    let mut cache: HashMap<PathBuf, Option<HashSet<String>>> = HashMap::new();
    let mut anchors_of = |target: &Path| {
        cache
            .entry(target.to_path_buf())
            .or_insert_with(|| {
                let is_markdown = target.extension().is_some_and(|e| e == "md");
                let text = std::fs::read_to_string(root().join(target)).ok().filter(|_| is_markdown)?;
                Some(anchors(&text))
            })
            .clone()
    };
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        for link in links(&text) {
            checked += 1;
            if let Some(why) = broken(file, &link.dest, &mut anchors_of) {
                problems.push(format!("{}:{}: ({}): {why}", file.display(), link.line, link.dest));
            }
        }
    }
    assert!(checked > 50, "read the links of {files:?}: only {checked}");
    assert!(problems.is_empty(), "{} broken link(s):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn both_readmes_are_front_pages_of_at_most_12000_bytes() {
    for readme in ["README.md", "ingest-agent/README.md"] {
        let bytes = std::fs::metadata(root().join(readme)).unwrap().len() as usize;
        assert!(
            bytes <= FRONT_PAGE_BYTES,
            "{readme} holds {bytes} bytes, over {FRONT_PAGE_BYTES}: move reference under docs/"
        );
    }
}

#[test]
fn anchors_follow_github_slugs() {
    let text = "# The server\n## `POST /api/v1/runs`\n## Faults, security and load\n## The server\n## The server\n\
                ```\n# not a heading\n```\n## Zig releases on a host that has none\n";
    let found = anchors(text);
    for expected in [
        "the-server",
        "post-apiv1runs",
        "faults-security-and-load",
        "the-server-1",
        "the-server-2",
        "zig-releases-on-a-host-that-has-none",
    ] {
        assert!(found.contains(expected), "{expected} among {found:?}");
    }
    assert!(!found.contains("not-a-heading"), "a fenced block holds no heading: {found:?}");
}

#[test]
fn links_in_code_are_not_links() {
    let text = "See [a](a.md) and `[b](b.md)`.\n\n```md\n[c](c.md)\n```\n\n[d](d.md#x)\n";
    let found: Vec<(usize, String)> = links(text).into_iter().map(|l| (l.line, l.dest)).collect();
    assert_eq!(found, vec![(1, "a.md".to_string()), (7, "d.md#x".to_string())]);
}

/// The crates whose `src/` docs/architecture.md maps, each with the code span its part's heading
/// holds (`### The server, `src/``).
const MAPPED_CRATES: [&str; 3] = ["src/", "core/src/", "ingest-agent/src/"];

/// What each heading of a Markdown text holds: the heading's own code spans, and the code spans of
/// the text below it up to the next heading.
fn code_spans_by_heading(text: &str) -> Vec<(HashSet<String>, HashSet<String>)> {
    let mut sections: Vec<(HashSet<String>, HashSet<String>)> = Vec::new();
    let mut in_heading = false;
    for event in Parser::new_ext(text, options()) {
        match event {
            Event::Start(Tag::Heading { .. }) => {
                in_heading = true;
                sections.push(Default::default());
            }
            Event::End(TagEnd::Heading(_)) => in_heading = false,
            Event::Code(code) => {
                if let Some((heading, body)) = sections.last_mut() {
                    if in_heading { heading } else { body }.insert(code.into_string());
                }
            }
            _ => {}
        }
    }
    sections
}

/// The map matches the house: every folder and every module file at the top of a crate's `src/`
/// is named in docs/architecture.md, in the part for its crate (the section under the heading
/// whose code span is the crate's `src/` path, as `### Core, `core/src/``), as a code span of its
/// own: `name/` for a folder, `name.rs` for a file. The listing is read from the file system, so a
/// folder or module added without a line in the map fails here.
#[test]
fn architecture_md_names_every_top_level_folder_and_module_file_of_each_crate() {
    let map = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let sections = code_spans_by_heading(&map);
    let mut missing = Vec::new();
    for src in MAPPED_CRATES {
        let Some((_, named)) = sections.iter().find(|(heading, _)| heading.contains(src)) else {
            missing.push(format!("a heading with `{src}` for the crate's part"));
            continue;
        };
        let mut entries: Vec<String> = std::fs::read_dir(root().join(src))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter_map(|path| {
                let name = path.file_name()?.to_string_lossy().into_owned();
                if name.starts_with('.') {
                    None
                } else if path.is_dir() {
                    Some(format!("{name}/"))
                } else {
                    name.ends_with(".rs").then_some(name)
                }
            })
            .collect();
        entries.sort();
        assert!(entries.iter().any(|e| e == "lib.rs"), "listed {src}: {entries:?}");
        missing.extend(entries.into_iter().filter(|e| !named.contains(e)).map(|e| format!("{src}: `{e}`")));
    }
    assert!(missing.is_empty(), "docs/architecture.md does not name:\n{}", missing.join("\n"));
}

#[test]
fn code_spans_are_gathered_under_their_heading() {
    let text = "# Top\n`a/`\n### Core, `core/src/`\n| x | `b.rs`, `c/` |\n|---|---|\n## Next\n`d.rs`\n";
    let sections = code_spans_by_heading(text);
    let core = sections.iter().find(|(h, _)| h.contains("core/src/")).unwrap();
    assert_eq!(core.1, HashSet::from(["b.rs".to_string(), "c/".to_string()]));
}
