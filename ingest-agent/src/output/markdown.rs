//! The report for a pull request: the slope table of `check` and `run` as Markdown, with the
//! toolchains, a summary line and, when asked, the change against a stored baseline.

use crate::measure::judged::Judged;
use crate::output::table;
use crate::server::baseline::Baseline;
use slopewatch_core::complexity::{Class, UNSURE};
use slopewatch_core::verdict::{Decision, Limits};
use slopewatch_core::wire::{Toolchain, VersionFrom};

/// Everything a report shows; rendering it does no I/O.
pub struct Report<'a> {
    /// The command that measured: `check` or `run`.
    pub command: &'a str,
    /// The toolchains measured, as their runs record them.
    pub toolchains: Vec<&'a Toolchain>,
    pub rows: &'a [Judged],
    /// The limits the rows were judged by, as the summary line names them.
    pub limits: &'a Limits,
    /// The baseline compared against, or why it could not be read; `None` when none was asked.
    pub baseline: Option<&'a Result<Baseline, String>>,
}

/// The "At the size you run" section: each workload's time at its size of interest; empty when
/// none has one.
fn costs(rows: &[Judged]) -> String {
    let lines = crate::output::costs::lines(rows);
    if lines.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("\n#### At the size you run\n\nPredicted from each fit, with its 95% prediction interval.\n\n");
    for l in &lines {
        let (workload, toolchain) = (escape(&l.workload), escape(&l.toolchain));
        out.push_str(&format!("- `{workload}` on **{toolchain}**: {}{}\n", escape(&l.sentence), escape(&l.against)));
    }
    out
}

/// The report as GitHub-flavoured Markdown. Everything that comes from users, compilers or the
/// server (names, versions, failure details) is escaped: it cannot end a table cell or a code
/// block, or become markup.
pub fn render(r: &Report) -> String {
    let mut out = format!("### slopewatch {}\n\n", escape(r.command));
    let toolchains: Vec<String> = r
        .toolchains
        .iter()
        .map(|t| {
            let libc = if t.libc.is_empty() { String::new() } else { format!(", {}", escape(&t.libc)) };
            let axis = match t.version_from {
                VersionFrom::Compiler => "",
                VersionFrom::Libc => " (the libc's version)",
            };
            // Another architecture than x86-64's is a series of its own on the server: say which.
            let arch = slopewatch_core::arch::of(&t.target, slopewatch_core::arch::DEFAULT);
            let arch = if arch == slopewatch_core::arch::DEFAULT { String::new() } else { format!(", for {arch}") };
            format!("**{}** {}{axis}{libc}{arch}", escape(&t.name), escape(&t.version))
        })
        .collect();
    out.push_str(&format!("Toolchains: {}\n\n", toolchains.join("; ")));
    out.push_str(&format!("{}\n\n", summary(r.rows, r.limits)));
    let baseline = match r.baseline {
        Some(Ok(b)) => {
            out.push_str(&format!(
                "Baseline: **{}**, from the server's stored slopes.\n\n",
                escape(&b.spec.to_string())
            ));
            Some(b)
        }
        Some(Err(why)) => {
            out.push_str(&format!("Baseline not available: {}\n\n", escape(why)));
            None
        }
        None => None,
    };
    out.push_str("| toolchain | workload | slope k | 95% CI | class | verdict |");
    out.push_str(if baseline.is_some() { " change |\n" } else { "\n" });
    out.push_str("|---|---|--:|---|---|---|");
    out.push_str(if baseline.is_some() { "---|\n" } else { "\n" });
    for row in r.rows {
        let cells = cells(row);
        out.push_str(&format!("| {} |", cells.join(" | ")));
        if let Some(b) = baseline {
            out.push_str(&format!(" {} |", change(row, b)));
        }
        out.push('\n');
    }
    if r.rows.iter().any(|row| row.partial && row.fit.is_ok()) {
        out.push_str("\n\\* partial: fitted from the sizes measured before the failure\n");
    }
    let doubts = table::doubts(r.rows);
    if !doubts.is_empty() {
        out.push('\n');
        for line in doubts.lines() {
            out.push_str(&format!("- {}\n", escape(line)));
        }
    }
    out.push_str(&costs(r.rows));
    out.push_str(&profiles(r.rows));
    out.push_str(&details(r.rows));
    out
}

/// The "Where the instructions went" section: each profiled workload's sentence; empty when
/// nothing was profiled.
fn profiles(rows: &[Judged]) -> String {
    let lines = table::profiles(rows);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n#### Where the instructions went\n\n");
    for line in lines.lines() {
        out.push_str(&format!("- {}\n", escape(line.trim())));
    }
    out
}

/// `2 of 24 over the limit`, then how many failed and how many are unsure where any are; over
/// its contract is the contract table's to say. `limits` are those the rows were judged by.
pub fn summary(rows: &[Judged], limits: &Limits) -> String {
    let counted = rows.iter().filter_map(Judged::counted);
    let over = counted.clone().filter(|d| over_a_limit(d)).count();
    let unsure = counted.filter(|d| matches!(d, Decision::Unsure(_))).count();
    let failed = rows.iter().filter(|r| r.failure.is_some()).count();
    let mut s = format!("**{over} of {} over the limit**", rows.len());
    if failed > 0 {
        s.push_str(&format!(", {failed} failed"));
    }
    if unsure > 0 {
        s.push_str(&format!(", {unsure} unsure"));
    }
    s.push_str(&format!(" (limits: {}).", limits_said(limits)));
    s
}

pub(crate) fn limits_said(limits: &Limits) -> String {
    let slope = limits.max_slope.map(|k| format!("slope {k}"));
    let class = limits.max_class.map(|c| format!("class {}", c.label()));
    slope.into_iter().chain(class).collect::<Vec<_>>().join(", ")
}

/// Over the slope or class limit, rather than a contract.
fn over_a_limit(decision: &Decision) -> bool {
    matches!(decision, Decision::Over(b) if b.contract.is_none())
}

/// A row's cells before the change: toolchain, workload, slope, interval, class and verdict.
fn cells(r: &Judged) -> [String; 6] {
    let mark = if r.partial { "\\*" } else { "" };
    let (slope, ci) = match &r.fit {
        Ok(f) => (
            format!("{:.2}{mark}", f.slope),
            if f.ci_low.is_finite() && f.ci_high.is_finite() {
                format!("[{:.2}, {:.2}]", f.ci_low, f.ci_high)
            } else {
                "–".into()
            },
        ),
        Err(_) => ("–".into(), "–".into()),
    };
    let class = r.complexity.as_ref().map_or("–", |c| c.class.map_or(UNSURE, Class::label));
    let verdict = match (&r.failure, table::absent(r)) {
        (Some(f), _) => format!("✗ {}", escape(&slopewatch_core::format::failure(f, r.unit))),
        (None, Some(absent)) => absent.to_string(),
        (None, None) if over_a_limit(&r.decision) => format!("**{}**", table::verdict(&r.decision)),
        (None, None) => table::verdict(&r.decision),
    };
    [escape(&r.label()), escape(&r.workload), slope, ci, class.to_string(), verdict]
}

/// `k 1.00 at 0.15.2 → 2.00 here`, or `no baseline` when the server holds no slope for the
/// workload at the baseline version.
fn change(r: &Judged, b: &Baseline) -> String {
    let Some(stored) = b.slopes.get(&r.workload) else { return "no baseline".into() };
    let here = match (&r.fit, &r.failure) {
        (Ok(f), _) => format!("{:.2} here", f.slope),
        (Err(_), Some(f)) => format!("{} here", f.kind.label()),
        (Err(_), None) => "no slope here".into(),
    };
    format!("k {:.2} at {} → {here}", stored.slope, escape(&b.spec.version))
}

/// Every failure's full detail in a collapsed section, one code block each; empty when nothing
/// failed or no failure has detail.
fn details(rows: &[Judged]) -> String {
    let failed: Vec<(&Judged, &slopewatch_core::wire::Failure)> = rows
        .iter()
        .filter_map(|r| r.failure.as_ref().map(|f| (r, f)))
        .filter(|(_, f)| !f.detail.trim().is_empty())
        .collect();
    if failed.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n<details><summary>Failure details</summary>\n\n");
    for (r, f) in failed {
        out.push_str(&format!(
            "**{}**: {}\n\n",
            escape(&r.name()),
            escape(&slopewatch_core::format::failure(f, r.unit))
        ));
        let detail: String = f.detail.chars().filter(|c| !c.is_control() || matches!(c, '\n' | '\t')).collect();
        let fence = "`".repeat(longest_run(&detail, '`').max(2) + 1);
        out.push_str(&format!("{fence}text\n{}\n{fence}\n\n", detail.trim_end()));
    }
    out.push_str("</details>\n");
    out
}

fn longest_run(s: &str, c: char) -> usize {
    s.split(|x| x != c).map(str::len).max().unwrap_or(0)
}

/// Text safe inside a table cell or a paragraph: the Markdown punctuation that can start markup is
/// backslash-escaped (`(` and `!` need not be, with `[` escaped), HTML's `&`, `<` and `>` become
/// entities, and line breaks become spaces (a newline would end the row).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::judged::tests::{judged, judged_by, points};
    use crate::server::baseline::{parse_spec, Stored};
    use slopewatch_core::wire::{Failure, FailureKind};
    use std::collections::BTreeMap;

    /// The limits of the rendered report: the default slope limit and O(n).
    fn limits() -> Limits {
        Limits { max_class: Some(Class::Linear), ..Limits::default() }
    }

    /// A row measured with `toolchain`, judged by the report's limits.
    fn row(toolchain: &str, workload: &str, p: Vec<(f64, f64)>) -> Judged {
        Judged { toolchain: toolchain.into(), ..judged_by(workload, p, &limits()) }
    }

    fn wrong_result(toolchain: &str, workload: &str) -> Judged {
        let failure = Failure {
            kind: FailureKind::WrongResult,
            size: Some(32 << 10),
            detail: "wrong result: -1, expected 4681\n</details> <script>alert(1)</script>\n```\n| x |".into(),
            exit_status: Some(3),
            signal: None,
            limit_ms: None,
            got: Some("-1".into()),
            expected: Some("4681".into()),
        };
        Judged { failure: Some(failure), partial: true, ..row(toolchain, workload, points(|n| 3.0 * n)[..3].to_vec()) }
    }

    fn toolchain(name: &str, version: &str, libc: &str) -> Toolchain {
        Toolchain {
            name: name.into(),
            version: version.into(),
            libc: libc.into(),
            target: String::new(),
            compiler: String::new(),
            flags: String::new(),
            version_from: VersionFrom::Compiler,
        }
    }

    fn rendered(rows: &[Judged], baseline: Option<&Result<Baseline, String>>) -> String {
        let gcc = toolchain("gcc-glibc", "12.2.0", "glibc 2.36");
        render(&Report { command: "check", toolchains: vec![&gcc], rows, limits: &limits(), baseline })
    }

    /// The table's lines, header and rule included: the first run of lines that start with `|`.
    fn table(md: &str) -> Vec<&str> {
        md.lines().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|')).collect()
    }

    /// A row's cells, split on the `|` that are not escaped.
    fn cells_of(line: &str) -> Vec<String> {
        let mut cells = vec![String::new()];
        let mut escaped = false;
        for c in line.trim().trim_matches('|').chars() {
            match c {
                '|' if !escaped => cells.push(String::new()),
                c => cells.last_mut().unwrap().push(c),
            }
            escaped = c == '\\' && !escaped;
        }
        cells.into_iter().map(|c| c.trim().to_string()).collect()
    }

    #[test]
    fn names_from_users_cannot_break_the_table_or_inject_markup() {
        assert_eq!(escape("a|b"), "a\\|b");
        assert_eq!(escape("`x`"), "\\`x\\`");
        assert_eq!(escape("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
        assert_eq!(escape("&lt;"), "&amp;lt;");
        assert_eq!(escape("two\nlines\x1b[31m"), "two lines\\[31m");
        assert_eq!(escape("[link](http://x) *em* _em_"), "\\[link\\](http://x) \\*em\\* \\_em\\_");

        let hostile = row("gcc-glibc", "a|b`c`<b>bold</b>", points(|n| 3.0 * n));
        let md = rendered(&[hostile], None);
        let lines = table(&md);
        assert_eq!(lines.len(), 3, "{md}");
        let cells = cells_of(lines[2]);
        assert_eq!(cells.len(), 6, "{md}");
        assert_eq!(cells[1], "a\\|b\\`c\\`&lt;b&gt;bold&lt;/b&gt;");
        assert!(!md.contains("<b>"), "{md}");
    }

    #[test]
    fn a_profiled_workload_says_where_its_instructions_went_escaped() {
        use slopewatch_core::profile::{Profile, ProfiledFunction};
        let mut r = row("zig", "strspn", points(|n| n * n));
        let f = ProfiledFunction { name: "str<b>spn".into(), file: None, own: 976, inclusive: 976, callers: vec![] };
        r.profile = Some(Profile { size: 65536, total: 1000, functions: vec![f] });
        let md = rendered(&[r], None);
        assert!(md.contains("#### Where the instructions went\n\n- zig/strspn: 97.6 % of the 1,000 instructions at 64 KiB are in str&lt;b&gt;spn\n"), "{md}");
        assert!(!rendered(&[row("zig", "strchr", points(|n| n))], None).contains("Where the instructions went"));
    }

    #[test]
    fn a_table_row_gives_slope_interval_class_and_verdict() {
        let md = rendered(
            &[row("gcc-glibc", "scan", points(|n| 3.0 * n)), row("gcc-glibc", "tokenize", points(|n| n * n))],
            None,
        );
        let lines = table(&md);
        assert_eq!(cells_of(lines[0]), ["toolchain", "workload", "slope k", "95% CI", "class", "verdict"]);
        let scan = cells_of(lines[2]);
        assert_eq!(scan[..3], ["gcc-glibc", "scan", "1.00"]);
        assert!(scan[3].starts_with('[') && scan[3].ends_with(']'), "{md}");
        assert_eq!(scan[4..], ["O(n)", "ok"]);
        assert_eq!(cells_of(lines[3])[4..], ["O(n²)", "**OVER 1.5, O(n)**"]);
        assert!(md.starts_with("### slopewatch check\n\nToolchains: **gcc-glibc** 12.2.0, glibc 2.36\n"), "{md}");
        let musl = Toolchain { version_from: VersionFrom::Libc, ..toolchain("musl-gcc", "1.2.3", "musl 1.2.3") };
        let limits = Limits::default();
        let md =
            render(&Report { command: "check", toolchains: vec![&musl], rows: &[], limits: &limits, baseline: None });
        assert!(md.contains("**musl-gcc** 1.2.3 (the libc's version), musl 1.2.3"), "{md}");
        let a64 = Toolchain { target: "aarch64-linux-musl".into(), ..toolchain("zig-a64", "0.16.0", "musl 1.2.5") };
        let md =
            render(&Report { command: "check", toolchains: vec![&a64], rows: &[], limits: &limits, baseline: None });
        assert!(md.contains("**zig-a64** 0.16.0, musl 1.2.5, for aarch64\n"), "{md}");
    }

    #[test]
    fn a_failed_row_gives_its_failure_and_the_detail_stays_inside_its_code_block() {
        let md = rendered(&[wrong_result("musl-gcc", "strchr")], None);
        let cells = cells_of(table(&md)[2]);
        assert_eq!(cells[2], "1.00\\*", "partial: fitted from the sizes before the failure");
        assert_eq!(cells[5], "✗ wrong result at 32 KiB: got -1, expected 4681");
        assert!(md.contains("\\* partial: fitted from the sizes measured before the failure"), "{md}");
        // The detail holds three backticks, so its fence is four; the HTML in it stays text.
        let details = &md[md.find("<details>").unwrap()..];
        assert!(details.contains("**musl-gcc/strchr**: wrong result at 32 KiB"), "{md}");
        assert!(details.contains("````text\nwrong result: -1, expected 4681\n</details> <script>"), "{md}");
        assert!(details.ends_with("| x |\n````\n\n</details>\n"), "{md}");
        assert_eq!(md.matches("</details>").count(), 2, "{md}");
    }

    #[test]
    fn the_change_column_compares_each_workload_with_the_baseline() {
        let slopes = BTreeMap::from([
            ("strchr".to_string(), Stored { slope: 1.0, class: Some(Class::Linear) }),
            ("sscanf".to_string(), Stored { slope: 1.02, class: None }),
        ]);
        let spec = parse_spec("gcc-glibc@0.15.2").unwrap();
        let baseline = Ok(Baseline { spec, slopes });
        let rows = [
            row("gcc-glibc", "strchr", points(|n| n * n)),
            wrong_result("gcc-glibc", "sscanf"),
            row("gcc-glibc", "strspn", points(|n| n)),
        ];
        let md = rendered(&rows, Some(&baseline));
        assert!(md.contains("Baseline: **gcc-glibc@0.15.2**"), "{md}");
        let lines = table(&md);
        assert_eq!(cells_of(lines[0]).last().unwrap(), "change");
        assert_eq!(cells_of(lines[2]).last().unwrap(), "k 1.00 at 0.15.2 → 2.00 here");
        assert_eq!(cells_of(lines[3]).last().unwrap(), "k 1.02 at 0.15.2 → 1.00 here", "partial: the sizes before");
        assert_eq!(cells_of(lines[4]).last().unwrap(), "no baseline");
        assert!(lines.iter().all(|l| cells_of(l).len() == 7), "{md}");

        let missing = Err("the baseline server http://127.0.0.1:9 has no version 9.9 of lineage gcc-glibc".to_string());
        let md = rendered(&rows, Some(&missing));
        assert!(md.contains("Baseline not available: the baseline server http://127.0.0.1:9 has no version"), "{md}");
        assert!(table(&md).iter().all(|l| cells_of(l).len() == 6), "no change column: {md}");
    }

    #[test]
    fn the_summary_line_counts_what_is_over_failed_and_unsure() {
        let limits = Limits::default();
        let mut disturbed = points(|n| 3.0 * n);
        disturbed[3].1 *= 10.0;
        let rows = [
            judged("scan", points(|n| 3.0 * n)),
            judged("tokenize", points(|n| n * n)),
            judged("erratic", disturbed),
            wrong_result("gcc-glibc", "strchr"),
        ];
        assert_eq!(summary(&rows, &limits), "**1 of 4 over the limit**, 1 failed, 1 unsure (limits: slope 1.5).");
        assert_eq!(summary(&rows[..1], &limits), "**0 of 1 over the limit** (limits: slope 1.5).");
        let both = Limits { max_class: Some(Class::Linear), ..limits };
        assert!(summary(&rows[..2], &both).ends_with("(limits: slope 1.5, class O(n))."));
        let md = rendered(&rows, None);
        assert!(md.contains("\n\n**1 of 4 over the limit**, 1 failed, 1 unsure"), "{md}");
        assert!(md.contains("\n- unsure: gcc-glibc/erratic (R² 0."), "{md}");
    }
}
