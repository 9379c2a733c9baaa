//! Ordering of toolchain versions: semver-aware, so `0.9.0 < 0.10.0 < 0.17.0-dev.12+abc < 0.17.0`.
//!
//! Strings that are not versions sort after every version, in the order they were first seen.

use std::cmp::Ordering;

/// A version parsed leniently: an optional `v`, one to four numeric components, an optional
/// `-prerelease` and an optional `+build`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    numbers: Vec<u64>,
    pre: Vec<Identifier>,
    build: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Identifier {
    // Numeric identifiers have lower precedence than alphanumeric ones (semver §11.4.3).
    Numeric(u64),
    Alpha(String),
}

impl Version {
    pub fn parse(s: &str) -> Option<Version> {
        let s = s.trim();
        let s = s.strip_prefix(['v', 'V']).unwrap_or(s);
        let (rest, build) = match s.split_once('+') {
            Some((r, b)) => (r, b.to_string()),
            None => (s, String::new()),
        };
        let (core, pre) = match rest.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (rest, None),
        };
        let numbers =
            core.split('.')
                .map(|part| {
                    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                        None
                    } else {
                        part.parse().ok()
                    }
                })
                .collect::<Option<Vec<u64>>>()?;
        if numbers.is_empty() || numbers.len() > 4 {
            return None;
        }
        let pre = match pre {
            None => Vec::new(),
            Some(p) => p
                .split('.')
                .map(|id| {
                    if id.is_empty() {
                        None
                    } else if id.bytes().all(|b| b.is_ascii_digit()) {
                        id.parse().ok().map(Identifier::Numeric)
                    } else {
                        Some(Identifier::Alpha(id.to_string()))
                    }
                })
                .collect::<Option<Vec<_>>>()?,
        };
        Some(Version { numbers, pre, build })
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let width = self.numbers.len().max(other.numbers.len());
        let component = |v: &Version, i: usize| v.numbers.get(i).copied().unwrap_or(0);
        (0..width)
            .map(|i| component(self, i).cmp(&component(other, i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                // A pre-release comes before its release.
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => self.pre.cmp(&other.pre),
            })
            // Build metadata has no precedence; compare it last only to make the order total.
            .then_with(|| self.build.cmp(&other.build))
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Sorts version strings in place. `first_seen` gives each string's first-seen rank (any
/// comparable key), used for strings that are not versions.
pub fn sort_versions<T, K: Ord>(items: &mut [T], version: impl Fn(&T) -> &str, first_seen: impl Fn(&T) -> K) {
    items.sort_by_cached_key(|item| {
        let v = version(item);
        match Version::parse(v) {
            Some(parsed) => (0u8, Some(parsed), None, v.to_string()),
            None => (1u8, None, Some(first_seen(item)), v.to_string()),
        }
    });
}

/// Compares two version strings; non-versions sort after versions, then by text.
pub fn compare(a: &str, b: &str) -> Ordering {
    match (Version::parse(a), Version::parse(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_by_semver_precedence() {
        let expected = ["0.9.0", "0.10.0", "0.16.0", "0.17.0-dev.2", "0.17.0-dev.12+abc", "0.17.0", "0.17.1"];
        let mut shuffled = vec!["0.17.1", "0.10.0", "0.17.0", "0.17.0-dev.12+abc", "0.9.0", "0.17.0-dev.2", "0.16.0"];
        sort_versions(&mut shuffled, |s| s, |_| 0);
        assert_eq!(shuffled, expected);
    }

    #[test]
    fn pre_release_identifiers_follow_semver_rules() {
        let order = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
        ];
        for pair in order.windows(2) {
            assert_eq!(compare(pair[0], pair[1]), Ordering::Less, "{} < {}", pair[0], pair[1]);
        }
    }

    #[test]
    fn short_and_prefixed_versions_parse() {
        assert_eq!(compare("12", "12.2.0"), Ordering::Less);
        assert_eq!(compare("v1.2", "1.2.0"), Ordering::Equal);
        assert_eq!(compare("12.2.0", "14"), Ordering::Less);
        assert!(Version::parse("1.2.3.4.5").is_none());
        assert!(Version::parse("1..2").is_none());
        assert!(Version::parse("nightly").is_none());
    }

    #[test]
    fn non_versions_follow_versions_in_first_seen_order() {
        let mut items = vec![("trunk", 3), ("2.0.0", 9), ("main-abc", 1), ("1.0.0", 5)];
        sort_versions(&mut items, |i| i.0, |i| i.1);
        let names: Vec<_> = items.iter().map(|i| i.0).collect();
        assert_eq!(names, ["1.0.0", "2.0.0", "main-abc", "trunk"]);
    }
}
