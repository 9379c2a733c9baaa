//! Notes are Markdown written by editors and read by everyone, so they are rendered with raw
//! HTML shown as text and links limited to web and mail schemes: no note can run script.

use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag};

/// Renders Markdown to HTML that is safe to embed in a page.
pub fn render(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(markdown, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Link { link_type, dest_url: safe_url(dest_url, true), title, id })
        }
        Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Image { link_type, dest_url: safe_url(dest_url, false), title, id })
        }
        other => other,
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

/// Keeps relative URLs and http(s) ones (and mailto for links); anything else becomes `#`.
/// Browsers ignore whitespace and control characters inside a scheme, so they are dropped first.
fn safe_url(url: CowStr<'_>, allow_mailto: bool) -> CowStr<'_> {
    let cleaned: String = url.chars().filter(|c| !c.is_ascii_whitespace() && !c.is_control()).collect();
    let scheme_end = cleaned.find(':');
    let path_start = cleaned.find(['/', '?', '#']);
    let scheme = match (scheme_end, path_start) {
        (Some(colon), Some(path)) if colon > path => None,
        (Some(colon), _) => Some(cleaned[..colon].to_ascii_lowercase()),
        (None, _) => None,
    };
    match scheme.as_deref() {
        None | Some("http") | Some("https") => url,
        Some("mailto") if allow_mailto => url,
        Some(_) => CowStr::Borrowed("#"),
    }
}

/// Checks a link an editor adds: http or https, nothing else.
pub fn is_web_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders_and_html_is_shown_as_text() {
        let html =
            render("**Fixed** upstream.\n\n<script>alert(1)</script>\n\nand <img src=x onerror=alert(2)> inline");
        assert!(html.contains("<strong>Fixed</strong>"), "{html}");
        assert!(!html.contains("<script>") && html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.contains("<img") && html.contains("&lt;img"), "{html}");
    }

    /// Every `href` and `src` value in rendered HTML.
    fn urls(html: &str) -> Vec<String> {
        [" href=\"", " src=\""]
            .iter()
            .flat_map(|attr| html.split(attr).skip(1))
            .map(|s| s[..s.find('"').unwrap()].to_string())
            .collect()
    }

    #[test]
    fn script_urls_are_dropped_from_links_and_images() {
        let hostile = [
            "[x](javascript:alert(1))",
            "[x](<JaVa\tScript:alert(1)>)",
            "[x](<java\nscript:alert(1)>)",
            "![x](data:text/html,hi)",
            "[x](vbscript:y)",
            "<javascript:alert(1)>",
        ];
        for md in hostile {
            let html = render(md);
            for url in urls(&html) {
                assert_eq!(url, "#", "{md} -> {html}");
            }
        }
        assert!(render("[issue](https://example.org/i/1)").contains("href=\"https://example.org/i/1\""));
        assert!(render("[run](/runs/1)").contains("href=\"/runs/1\""));
        assert!(render("[a](./x:y)").contains("href=\"./x:y\""));
    }
}
