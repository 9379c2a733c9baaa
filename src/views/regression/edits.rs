//! What editors may write on a regression, whether through its page or carried over by import.

use super::markdown;

/// Longest note accepted, in bytes.
pub const NOTE_LIMIT: usize = 64 * 1024;
/// Longest link URL accepted, in bytes.
pub const URL_LIMIT: usize = 2048;
/// Longest link title accepted, in bytes.
pub const TITLE_LIMIT: usize = 200;

/// The note as stored (trimmed), or why it is refused.
pub fn note(body: &str) -> Result<&str, String> {
    let body = body.trim();
    if body.is_empty() || body.len() > NOTE_LIMIT {
        return Err(format!("a note must be 1 to {NOTE_LIMIT} bytes"));
    }
    Ok(body)
}

/// The link's title and URL as stored (trimmed; an empty title is the URL), or why it is refused.
pub fn link<'a>(title: &'a str, url: &'a str) -> Result<(&'a str, &'a str), String> {
    let (title, url) = (title.trim(), url.trim());
    // URL parsers drop tabs and line breaks silently; stored, they would break the lines of
    // whatever shows the link (the Markdown postmortem).
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("a link URL cannot contain spaces, tabs, line breaks or control characters".into());
    }
    if title.chars().any(char::is_control) {
        return Err("a link title cannot contain tabs, line breaks or control characters".into());
    }
    if !markdown::is_web_url(url) || url.len() > URL_LIMIT {
        return Err("a link must be an http or https URL".into());
    }
    let title = if title.is_empty() { url } else { title };
    if title.len() > TITLE_LIMIT {
        return Err(format!("a link title must be at most {TITLE_LIMIT} bytes"));
    }
    Ok((title, url))
}
