//! Where a workload's instructions go, in words and compared: a profile's sentence, and where the
//! cost went between a last good version's profile and a first bad one's. The profile itself is
//! the wire's ([`crate::wire::Profile`]).

pub use crate::wire::{Caller, Profile, ProfiledFunction, COVERED, MAX_CALLERS, MAX_FUNCTIONS, MAX_PROFILE_BYTES};
use serde::Serialize;

impl Profile {
    /// Where the instructions went, in one sentence: "97.6 % of the 808.7 M instructions at
    /// 64 KiB are in strspn (string.zig), called from sw_run (bench.c:12)".
    pub fn sentence(&self, unit: crate::wire::SizeUnit) -> Option<String> {
        let (f, share) = self.hottest()?;
        let place = f.file.as_deref().map(|p| format!(" ({})", short_path(p))).unwrap_or_default();
        let caller = f.callers.first().map(|c| {
            let site = c.site.as_deref().map(|s| format!(" ({})", short_path(s))).unwrap_or_default();
            format!(", called from {}{site}", c.name)
        });
        Some(format!(
            "{:.1} % of the {} instructions at {} are in {}{place}{}",
            share * 100.0,
            crate::format::count(self.total as f64),
            crate::format::size(self.size, unit),
            f.name,
            caller.unwrap_or_default()
        ))
    }
}

/// Most functions a comparison lists.
pub const SHIFT_ROWS: usize = 10;

/// Where the cost went between two profiles of one workload at one size: each function's own
/// instructions before and after, worst added first, and the sentence that sums it up.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostShift {
    /// The size both were profiled at (the bad one's, where there is no good one).
    pub size: u64,
    /// All instructions before (none without a good profile at that size) and after.
    pub before: Option<u64>,
    pub after: u64,
    /// By function, most instructions added first; without a good profile, most instructions first.
    pub functions: Vec<FunctionShift>,
    /// "97.6 % of the added instructions are in strspn (called from jsonTranslateTextToBlob,
    /// sqlite3.c:…)", or for the bad profile alone "… of the instructions at 64 KiB are in …".
    pub sentence: String,
    /// The function most of the cost went to, as the catalogue names it (`strspn`).
    pub function: String,
}

/// One function's instructions in a [`CostShift`].
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionShift {
    pub name: String,
    /// Its own instructions before (none where the good profile has no row for it, or there is no
    /// good profile) and after (none where the bad profile has none).
    pub before: Option<u64>,
    pub after: Option<u64>,
    /// After over before, where both are there.
    pub ratio: Option<f64>,
    /// Its share of the instructions added (or, alone, of all instructions), 0 to 1.
    pub share: f64,
}

impl CostShift {
    /// `after` (the first bad version's profile) against `before` (the last good version's), when
    /// both were taken at one size; the bad profile alone otherwise. `None` for an empty profile.
    pub fn of(before: Option<&Profile>, after: &Profile, unit: crate::wire::SizeUnit) -> Option<CostShift> {
        let before = before.filter(|b| b.size == after.size);
        let own = |p: &Profile, name: &str| p.functions.iter().find(|f| f.name == name).map(|f| f.own);
        let mut names: Vec<&str> = after.functions.iter().map(|f| f.name.as_str()).collect();
        if let Some(b) = before {
            names.extend(b.functions.iter().map(|f| f.name.as_str()).filter(|n| own(after, n).is_none()));
        }
        let added = before.map(|b| after.total as f64 - b.total as f64).filter(|a| *a > 0.0);
        let mut functions: Vec<FunctionShift> = names
            .into_iter()
            .map(|name| {
                let (b, a) = (before.and_then(|p| own(p, name)), own(after, name));
                let delta = a.unwrap_or(0) as f64 - b.unwrap_or(0) as f64;
                let share = match added {
                    Some(added) => delta / added,
                    None => a.unwrap_or(0) as f64 / after.total.max(1) as f64,
                };
                let ratio = b.zip(a).filter(|(b, _)| *b > 0).map(|(b, a)| a as f64 / b as f64);
                FunctionShift { name: name.to_string(), before: b, after: a, ratio, share }
            })
            .collect();
        functions.sort_by(|x, y| y.share.total_cmp(&x.share).then_with(|| x.name.cmp(&y.name)));
        functions.truncate(SHIFT_ROWS);
        let top = functions.first()?;
        let hot = after.functions.iter().find(|f| f.name == top.name);
        let caller = hot.and_then(|f| f.callers.first()).map(|c| {
            let site = c.site.as_deref().map(|s| format!(", {}", short_path(s))).unwrap_or_default();
            format!(" (called from {}{site})", c.name)
        });
        let what = match added {
            Some(_) => "of the added instructions".to_string(),
            None => format!("of the instructions at {}", crate::format::size(after.size, unit)),
        };
        let sentence = format!("{:.1} % {what} are in {}{}", top.share * 100.0, top.name, caller.unwrap_or_default());
        Some(CostShift {
            size: after.size,
            before: before.map(|b| b.total),
            after: after.total,
            function: catalogue_name(&top.name).to_string(),
            functions,
            sentence,
        })
    }
}

/// A function as the catalogue names it: Zig's libc also names its functions by their module
/// (`c.string.strspn`), and a C function is named alone.
pub fn catalogue_name(name: &str) -> &str {
    if name.contains(['(', ':', ' ', '<']) {
        return name;
    }
    name.rsplit('.').next().unwrap_or(name)
}

/// The file name of a path, with its line where it has one: `sqlite3.c:1234`.
fn short_path(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        let caller = Caller { name: "sw_run".into(), calls: 8192, inclusive: 980, site: Some("bench.c:12".into()) };
        let f = ProfiledFunction {
            name: "strspn".into(),
            file: Some("/lib/c/string.zig".into()),
            own: 980,
            inclusive: 980,
            callers: vec![caller],
        };
        Profile { size: 65536, total: 1000, functions: vec![f] }
    }

    #[test]
    fn the_sentence_names_the_share_the_function_and_its_caller() {
        assert_eq!(
            profile().sentence(crate::wire::SizeUnit::Bytes).unwrap(),
            "98.0 % of the 1,000 instructions at 64 KiB are in strspn (string.zig), called from sw_run (bench.c:12)"
        );
        assert_eq!(Profile { functions: vec![], ..profile() }.sentence(crate::wire::SizeUnit::Bytes), None);
    }

    #[test]
    fn the_added_cost_is_shared_out_by_function_and_the_bad_profile_alone_is_said_so() {
        let f = |name: &str, own: u64| ProfiledFunction {
            name: name.into(),
            file: None,
            own,
            inclusive: own,
            callers: vec![Caller {
                name: "jsonTranslateTextToBlob".into(),
                calls: 3,
                inclusive: own,
                site: Some("/s/sqlite3.c:210".into()),
            }],
        };
        let good = Profile {
            size: 1000,
            total: 25_600,
            functions: vec![f("printf_core", 6900), f("memcpy", 2000), f("c.string.strspn", 100)],
        };
        let bad = Profile {
            size: 1000,
            total: 1_252_600,
            functions: vec![f("c.string.strspn", 1_222_500), f("printf_core", 6900)],
        };
        let shift = CostShift::of(Some(&good), &bad, crate::wire::SizeUnit::Records).unwrap();
        assert_eq!(shift.function, "strspn");
        assert_eq!(shift.sentence, "99.6 % of the added instructions are in c.string.strspn (called from jsonTranslateTextToBlob, sqlite3.c:210)");
        let names: Vec<&str> = shift.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["c.string.strspn", "printf_core", "memcpy"], "memcpy left the top: its cost fell");
        assert_eq!(shift.functions[0].ratio, Some(12_225.0));
        assert_eq!((shift.functions[2].before, shift.functions[2].after), (Some(2000), None));
        let alone = CostShift::of(None, &bad, crate::wire::SizeUnit::Records).unwrap();
        assert!(
            alone.sentence.starts_with("97.6 % of the instructions at 1,000 records are in c.string.strspn"),
            "{}",
            alone.sentence
        );
        let elsewhere = Profile { size: 500, ..good };
        assert_eq!(
            CostShift::of(Some(&elsewhere), &bad, crate::wire::SizeUnit::Records).unwrap().before,
            None,
            "another size is no comparison"
        );
    }

    #[test]
    fn a_malformed_oversized_or_unprintable_profile_is_refused_with_its_field() {
        assert!(profile().validate("p").is_ok());
        let refused = |p: Profile, field: &str, reason: &str| {
            let e = p.validate("p").unwrap_err();
            assert_eq!(e.field, field, "{e:?}");
            assert!(e.reason.contains(reason), "{e:?}");
        };
        refused(Profile { size: 0, ..profile() }, "p.size", "not a size");
        let mut p = profile();
        p.functions[0].name = "str\u{1b}[31mspn".into();
        refused(p, "p.functions[0].name", "control characters");
        let mut p = profile();
        p.functions[0].callers[0].name = " ".into();
        refused(p, "p.functions[0].callers[0].name", "empty");
        let mut p = profile();
        p.functions[0].own = 2000;
        refused(p, "p.functions[0]", "exceed");
        let mut p = profile();
        p.functions = (0..MAX_FUNCTIONS + 1).map(|_| profile().functions[0].clone()).collect();
        refused(p, "p.functions", "more than 50");
        let mut p = profile();
        p.functions[0].file = Some("x".repeat(1000));
        p.functions[0].callers[0].site = Some("y".repeat(1000));
        p.functions[0].callers = (0..MAX_CALLERS).map(|_| p.functions[0].callers[0].clone()).collect();
        p.functions = (0..MAX_FUNCTIONS).map(|_| p.functions[0].clone()).collect();
        refused(p, "p", "the limit is 65536");
    }
}
