//! The suppression file: exposures a team has looked at and accepts, each with a reason and a date
//! it expires on. A call an entry covers still shows, marked, and fails nothing until then.
//!
//! ```toml
//! [[accept]]
//! function = "strspn"
//! caller = "jsonTranslateTextToBlob"   # optional: only the calls from this function
//! reason = "inputs are under 4 KiB; upstream fix pending"
//! expires = 2027-03-01
//! ```

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::path::Path;
use time::Date;

/// Every entry of a suppression file.
#[derive(Debug, Default)]
pub struct Suppressions {
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    function: String,
    caller: Option<String>,
    reason: String,
    expires: Date,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    accept: Vec<RawEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    function: String,
    caller: Option<String>,
    reason: String,
    expires: toml::Value,
}

/// What the file says of one function an artifact reaches.
#[derive(Debug, Clone, PartialEq)]
pub enum Acceptance {
    /// Unexpired entries cover every call and reference.
    Accepted { reason: String, expires: Date },
    /// Entries would have covered them, but one has expired.
    Expired { reason: String, expired: Date },
    /// No entry covers them all.
    Not,
}

impl Suppressions {
    /// Reads and checks the file at `path`; an error names the entry and what is wrong with it.
    pub fn load(path: &Path) -> Result<Suppressions> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Suppressions::parse(&text).with_context(|| format!("suppression file {}", path.display()))
    }

    fn parse(text: &str) -> Result<Suppressions> {
        let file: File = toml::from_str(text)?;
        let mut entries = Vec::new();
        for (i, raw) in file.accept.into_iter().enumerate() {
            let at = format!("accept[{i}]");
            if raw.function.trim().is_empty() {
                bail!("{at}.function must name a function");
            }
            if raw.reason.trim().is_empty() {
                bail!("{at}.reason must say why the exposure is accepted");
            }
            let expires = date(&raw.expires).with_context(|| format!("{at}.expires"))?;
            entries.push(Entry {
                function: raw.function.trim().to_string(),
                caller: raw.caller.map(|c| c.trim().to_string()).filter(|c| !c.is_empty()),
                reason: raw.reason.trim().to_string(),
                expires,
            });
        }
        Ok(Suppressions { entries })
    }

    /// Whether the calls of `function` from `callers`, and its address taken when `referenced`,
    /// are accepted on `today`: each caller by an entry for it or for the whole function, a
    /// reference only by an entry for the whole function. The earliest expiry of the entries
    /// used is the acceptance's.
    pub fn judge(&self, function: &str, callers: &[&str], referenced: bool, today: Date) -> Acceptance {
        let whole = self.entries.iter().filter(|e| e.function == function && e.caller.is_none());
        let whole = whole.min_by_key(|e| std::cmp::Reverse(e.expires));
        let mut used: Vec<&Entry> = Vec::new();
        if referenced || callers.is_empty() {
            match whole {
                Some(e) => used.push(e),
                None => return Acceptance::Not,
            }
        }
        for caller in callers {
            let own = self
                .entries
                .iter()
                .filter(|e| e.function == function && e.caller.as_deref() == Some(*caller))
                .max_by_key(|e| e.expires);
            match own.or(whole) {
                Some(e) => used.push(e),
                None => return Acceptance::Not,
            }
        }
        let Some(first) = used.iter().min_by_key(|e| e.expires) else { return Acceptance::Not };
        if first.expires < today {
            Acceptance::Expired { reason: first.reason.clone(), expired: first.expires }
        } else {
            Acceptance::Accepted { reason: first.reason.clone(), expires: first.expires }
        }
    }
}

/// A date as TOML writes one (`2027-03-01`) or as a string of the same form.
fn date(value: &toml::Value) -> Result<Date> {
    let text = match value {
        toml::Value::Datetime(d) if d.time.is_none() && d.offset.is_none() => d.to_string(),
        toml::Value::String(s) => s.trim().to_string(),
        other => bail!("must be a date such as 2027-03-01, not {other}"),
    };
    let format = time::macros::format_description!("[year]-[month]-[day]");
    Date::parse(&text, &format).with_context(|| format!("{text:?} is not a date such as 2027-03-01"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    const FILE: &str = r#"
[[accept]]
function = "strspn"
caller = "jsonTranslateTextToBlob"
reason = "JSON documents are under 4 KiB"
expires = 2027-03-01

[[accept]]
function = "strspn"
caller = "old_parser"
reason = "going away"
expires = "2026-11-30"

[[accept]]
function = "memccpy"
reason = "we check the result ourselves"
expires = 2027-01-01
"#;

    #[test]
    fn an_entry_covers_its_callers_or_its_whole_function_until_it_expires() {
        let a = Suppressions::parse(FILE).unwrap();
        let today = date!(2026 - 12 - 05);
        assert_eq!(
            a.judge("strspn", &["jsonTranslateTextToBlob"], false, today),
            Acceptance::Accepted { reason: "JSON documents are under 4 KiB".into(), expires: date!(2027 - 03 - 01) }
        );
        assert_eq!(a.judge("strspn", &["jsonTranslateTextToBlob", "main"], false, today), Acceptance::Not);
        assert_eq!(a.judge("strspn", &["jsonTranslateTextToBlob"], true, today), Acceptance::Not, "a reference");
        assert_eq!(
            a.judge("strspn", &["old_parser"], false, today),
            Acceptance::Expired { reason: "going away".into(), expired: date!(2026 - 11 - 30) }
        );
        assert!(matches!(a.judge("memccpy", &["a", "b"], true, today), Acceptance::Accepted { .. }));
        assert!(matches!(a.judge("memccpy", &["a"], false, date!(2027 - 01 - 02)), Acceptance::Expired { .. }));
        assert_eq!(a.judge("strchr", &["a"], false, today), Acceptance::Not);
    }

    #[test]
    fn a_bad_entry_is_named() {
        let err = |text: &str| format!("{:#}", Suppressions::parse(text).unwrap_err());
        let no_reason = "[[accept]]\nfunction = \"strspn\"\nreason = \"\"\nexpires = 2027-01-01\n";
        assert!(err(no_reason).contains("accept[0].reason"), "{}", err(no_reason));
        let bad_date = "[[accept]]\nfunction = \"strspn\"\nreason = \"r\"\nexpires = \"soon\"\n";
        assert!(err(bad_date).contains("accept[0].expires"), "{}", err(bad_date));
        let unknown = "[[accept]]\nfunction = \"strspn\"\nreason = \"r\"\nexpires = 2027-01-01\nuntil = 1\n";
        assert!(err(unknown).contains("until"), "{}", err(unknown));
        assert!(err("[[accept]]\nfunction = \"strspn\"\n").contains("reason"));
    }
}
