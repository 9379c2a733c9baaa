//! A reproducer upstream can run: one self-contained C file, without the agent's harness, that
//! builds a probe's input with the same generator the search measured (the parts of
//! `c/contracts/shapes.h` its function needs), and shows the break standalone: the cost at two
//! sizes 16× apart against what the contract allows, a read past the bound ending in SIGSEGV at
//! an unreadable page, or a wrong result printed with what was expected. It exits 1 when the
//! break shows and 0 when it does not.

use crate::builds::shapes;
use crate::search::climb::exponent;
use crate::search::space::Shape;
use crate::search::words;
use slopewatch_core::wire::{FoundProbe, CONTRACT_PREFIX, SHAPE_SEPARATOR};

/// How far apart the reproducer's two sizes are.
pub const SPREAD: u64 = 16;

/// The shape a probe's name stands for: a found probe's own, or for a hand-written probe
/// (`contract.FUNCTION.AXIS`) the simplest shape of its function on that axis.
pub fn shape_of(probe: &str) -> Result<Shape, String> {
    if probe.contains(SHAPE_SEPARATOR) {
        return Shape::parse(probe);
    }
    let rest = probe.strip_prefix(CONTRACT_PREFIX).unwrap_or(probe);
    let (function, axis) =
        rest.split_once('.').ok_or_else(|| format!("{probe} is not a probe's name (contract.FUNCTION.AXIS)"))?;
    if crate::search::space::axes(function).iter().all(|a| a.name != axis) {
        return Err(format!(
            "no generator builds the input of {probe}: reproducers cover {} on the axes their contracts bound",
            crate::search::space::functions().join(", ")
        ));
    }
    Ok(Shape::base(function, axis))
}

/// The parts of shapes.h between `@begin NAME` and `@end NAME`.
fn slice(name: &str) -> String {
    let text = shapes::FILES.iter().find(|(f, _)| *f == "shapes.h").expect("shapes.h").1;
    let (begin, end) = (format!("/* @begin {name} */"), format!("/* @end {name} */"));
    let from = text.find(&begin).unwrap_or_else(|| panic!("shapes.h has no @begin {name}"));
    let to = text[from..].find(&end).unwrap_or_else(|| panic!("shapes.h has no @end {name}")) + from;
    text[from + begin.len()..to].trim_matches('\n').to_string()
}

/// The family a function's generator is in, as shapes.def pairs them.
fn family(function: &str) -> &'static str {
    let def = shapes::FILES.iter().find(|(f, _)| *f == "shapes.def").expect("shapes.def").1;
    def.lines()
        .filter_map(|l| l.strip_prefix("SW_SHAPE_FN(")?.strip_suffix(')'))
        .filter_map(|args| args.split_once(", "))
        .find(|(_, f)| *f == function)
        .map(|(family, _)| family)
        .expect("every function searched has a family in shapes.def")
}

/// What the head comment says of the toolchain and the finding.
pub struct Heading {
    /// e.g. `zig-cc-musl (Zig 0.16.0, musl)`.
    pub toolchain: String,
    /// The compile command, e.g. `zig cc -target x86_64-linux-musl -O2 -fno-builtin -o repro repro.c`.
    pub build: String,
    /// What a search found, when it is a found probe.
    pub found: Option<FoundProbe>,
    /// What the file printed when built and run here, once written.
    pub measured: Vec<String>,
}

/// The reproducer of `shape`'s probe `probe`.
pub fn file(probe: &str, shape: &Shape, heading: &Heading) -> String {
    let axis = shape.axis();
    let allowed = exponent(axis.expected);
    let small = axis.start.max(512).min(axis.max / SPREAD).max(16);
    let large = small * SPREAD;
    let mut head = vec![
        format!("Reproducer of slopewatch's probe {probe}:"),
        format!(
            "{} on {}: its contract allows {} along {}.",
            shape.function,
            shape.axis,
            axis.expected.label(),
            shape.axis
        ),
        format!("Input: {}.", words::describe(shape)),
        format!("Toolchain: {}.", heading.toolchain),
        format!("Build: {}", heading.build),
        "Run: ./repro (exits 1 when the break shows, 0 when it does not).".to_string(),
        format!(
            "It calls {} on inputs of {small} and {large} bytes, times each (median of 7), and compares the",
            shape.function
        ),
        format!(
            "cost's growth with what {} allows (x{:.0}); with a bound, the input ends against an",
            axis.expected.label(),
            (SPREAD as f64).powf(allowed)
        ),
        "unreadable page, so a read past it ends in SIGSEGV; a wrong result is printed as such.".to_string(),
    ];
    if let Some(f) = &heading.found {
        head.push(format!(
            "Found by slopewatch's search against {} {} on {}: {}{}.",
            f.toolchain,
            f.version.as_deref().unwrap_or(""),
            f.found_at.date(),
            f.kind.as_str(),
            f.class.map(|c| format!(", {}", c.label())).unwrap_or_default()
        ));
    }
    if !heading.measured.is_empty() {
        head.push("Measured when written, with that toolchain:".to_string());
        head.extend(heading.measured.iter().map(|l| format!("  {l}")));
    }
    let comment: String =
        head.iter().map(|l| format!(" * {}\n", l.replace("*/", "* /")).replace(" * \n", " *\n")).collect();
    let body = [slice("common"), slice(family(&shape.function)), slice(&shape.function)].join("\n\n");
    format!(
        "/*\n{comment} */\n{body}\n\n{main}",
        main = MAIN
            .replace("@NAME@", &shape.name())
            .replace("@FUNCTION@", &shape.function)
            .replace("@SMALL@", &small.to_string())
            .replace("@LARGE@", &large.to_string())
            .replace("@ALLOWED@", &format!("{allowed:.1}"))
            .replace("@CALLS@", if shape.axis == "needle" { "1" } else { "64" })
            .replace("@FAMILY@", family(&shape.function))
    )
}

/// The reproducer's `main`: the two sizes timed, the bound guarded, the result checked.
const MAIN: &str = r#"#include <math.h>
#include <time.h>

static const char *sw_name = "@NAME@";

static double sw_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int sw_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The input at `size`, checked once: a wrong result ends the program with status 1. */
static void sw_prepare(struct sw_shape *s, long long size) {
    if (sw_shape_parse(s, sw_name) || sw_@FAMILY@_build(s, size)) {
        fprintf(stderr, "cannot build the input of %lld bytes\n", size);
        exit(2);
    }
    if (s->guard) sw_shape_guard(s, "@FUNCTION@ ", ": SIGSEGV at the unreadable page after it");
    if (!sw_call_@FUNCTION@(s)) {
        printf("@FUNCTION@ returned a wrong result at %lld bytes (see above)\n", size);
        exit(1);
    }
}

/* The median time of `calls` calls, over 7 rounds. */
static double sw_time(struct sw_shape *s, long calls) {
    double t[7];
    for (int r = 0; r < 7; r++) {
        double begun = sw_now();
        for (long i = 0; i < calls; i++) {
            struct sw_shape *p = s;
            __asm__ volatile("" : "+r"(p));
            sw_call_@FUNCTION@(p);
        }
        t[r] = sw_now() - begun;
    }
    qsort(t, 7, sizeof t[0], sw_cmp_double);
    return t[3];
}

int main(void) {
    static struct sw_shape small, large;
    sw_prepare(&small, @SMALL@);
    sw_prepare(&large, @LARGE@);
    /* Enough calls that the small size's round takes 2 ms or more. */
    long calls = @CALLS@;
    while (sw_time(&small, calls) < 0.002 && calls < (1L << 24)) calls *= 2;
    double a = sw_time(&small, calls), b = sw_time(&large, calls);
    double growth = log(b / a) / log((double)@LARGE@ / @SMALL@), allowed = @ALLOWED@;
    printf("@FUNCTION@: %lld bytes %.3g s, %lld bytes %.3g s (%ld calls): x%.1f, growth %.2f; its contract allows %.1f\n",
           (long long)@SMALL@, a, (long long)@LARGE@, b, calls, b / a, growth, allowed);
    if (growth > allowed + 0.5) {
        printf("BROKEN: the cost grows as n^%.2f where the contract allows n^%.1f\n", growth, allowed);
        return 1;
    }
    printf("not broken here\n");
    return 0;
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reproducer_holds_only_its_functions_code_and_no_harness() {
        let shape = shape_of("contract.strspn.remaining").unwrap();
        let heading = Heading {
            toolchain: "gcc".into(),
            build: "gcc -O2 -o repro repro.c -lm".into(),
            found: None,
            measured: vec![],
        };
        let c = file("contract.strspn.remaining", &shape, &heading);
        assert!(c.contains("sw_call_strspn") && c.contains("sw_span_build"));
        assert!(!c.contains("sw_call_strcspn") && !c.contains("slopewatch.h") && !c.contains("@"), "{c}");
        assert!(shape_of("contract.qsort.sorted").unwrap_err().contains("no generator"));
    }
}
