//! The labelled corpus (`corpus.rs` beside this file) classified: the confusion matrix, and the
//! targets of docs/complexity.md held at the fixed seed. `SLOPEWATCH_CORPUS_SEED=<n>` also runs a
//! held-out seed; `-- --nocapture` prints the matrices.

mod corpus;

use corpus::{Series, Shape};
use slopewatch_core::complexity::{classify, classify_with, Class, Complexity, Noise};

/// Rows the shapes, columns the six classes and unsure last.
struct Confusion {
    counts: Vec<[usize; 7]>,
}

impl Confusion {
    /// The corpus classified as `noise` says, each series held to the rule that a class is never
    /// named above a simpler one the exponent's interval holds.
    fn of(corpus: &[Series], noise: Noise) -> Confusion {
        let mut counts = vec![[0; 7]; Shape::ALL.len()];
        for series in corpus {
            let row = Shape::ALL.iter().position(|&s| s == series.shape).unwrap();
            let complexity = classify_with(&series.points, noise).unwrap();
            assert_no_simpler_class_is_left_open(&complexity, &series.points);
            counts[row][complexity.class.map_or(6, |c| c as usize)] += 1;
        }
        Confusion { counts }
    }

    fn cells(&self) -> impl Iterator<Item = (Shape, Option<Class>, usize)> + '_ {
        Shape::ALL.into_iter().zip(&self.counts).flat_map(|(shape, row)| {
            row.iter().enumerate().map(move |(i, &count)| (shape, Class::ALL.get(i).copied(), count))
        })
    }

    fn total(&self) -> usize {
        self.cells().map(|c| c.2).sum()
    }

    fn unsure(&self) -> usize {
        self.cells().filter(|c| c.1.is_none()).map(|c| c.2).sum()
    }

    fn decided(&self) -> usize {
        self.total() - self.unsure()
    }

    fn right(&self) -> usize {
        self.cells().filter(|&(shape, class, _)| class.is_some_and(|c| shape.accepts().contains(&c))).map(|c| c.2).sum()
    }

    /// Linear shapes named O(n²) or worse, and quadratic ones named O(n) or better.
    fn gross_errors(&self) -> usize {
        self.cells()
            .filter(|&(shape, class, _)| match class {
                Some(c) => shape.is_linear() && c >= Class::Quadratic || shape.is_quadratic() && c <= Class::Linear,
                None => false,
            })
            .map(|c| c.2)
            .sum()
    }

    /// The matrix as a Markdown table, shapes without series left out; accepted cells are starred.
    fn table(&self) -> String {
        let mut out = String::from("| shape | O(1) | O(log n) | O(n) | O(n log n) | O(n²) | O(n³) | unsure |\n");
        out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (shape, row) in Shape::ALL.into_iter().zip(&self.counts).filter(|(_, row)| row.iter().sum::<usize>() > 0) {
            out.push_str(&format!("| {} |", shape.name()));
            for (i, count) in row.iter().enumerate() {
                let accepted = Class::ALL.get(i).is_some_and(|c| shape.accepts().contains(c));
                out.push_str(&format!(" {count}{} |", if accepted { "*" } else { "" }));
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "\n{} series: {} decided, {} right ({:.1}%), {} unsure ({:.1}%), {} gross errors\n",
            self.total(),
            self.decided(),
            self.right(),
            100.0 * self.right() as f64 / self.decided() as f64,
            self.unsure(),
            100.0 * self.unsure() as f64 / self.total() as f64,
            self.gross_errors(),
        ));
        out
    }
}

/// O(n log n) and O(n²) need an interval above 1, O(n³) one above 2: the rule of
/// docs/complexity.md, seen from outside.
fn assert_no_simpler_class_is_left_open(complexity: &Complexity, points: &[(f64, f64)]) {
    let simpler_power = match complexity.class {
        Some(Class::NLogN | Class::Quadratic) => 1.0,
        Some(Class::Cubic) => 2.0,
        _ => return,
    };
    let low = complexity.exponent_ci_low.unwrap();
    assert!(low > simpler_power, "{complexity:?} named with k = {simpler_power} in its interval: {points:?}");
}

fn assert_targets(seed: u64) {
    let confusion = Confusion::of(&corpus::corpus(seed), Noise::Measured);
    println!("seed {seed}\n{}", confusion.table());
    assert!(confusion.total() >= 300);
    assert!(
        confusion.right() as f64 >= 0.95 * confusion.decided() as f64,
        "under 95% of decided series right at seed {seed}"
    );
    assert!((confusion.unsure() as f64) < 0.15 * confusion.total() as f64, "unsure on 15% or more at seed {seed}");
    assert_eq!(confusion.gross_errors(), 0, "a linear shape named O(n²)+ or a quadratic one O(n)- at seed {seed}");
}

#[test]
fn the_corpus_is_named_right_with_few_unsure_and_no_gross_errors() {
    assert_targets(corpus::SEED);
    if let Some(seed) = std::env::var("SLOPEWATCH_CORPUS_SEED").ok().and_then(|s| s.parse().ok()) {
        assert_targets(seed);
    }
}

/// Linear work is named O(n) wherever the exponent's interval holds 1: never a class above it, and
/// only the odd one (a fixed cost that hides growth) simpler or unsure.
#[test]
fn linear_shapes_are_named_o_n_wherever_o_n_is_not_ruled_out() {
    let (mut open, mut named_linear) = (0, 0);
    for series in corpus::corpus(corpus::SEED).iter().filter(|s| s.shape.is_linear()) {
        let complexity = classify(&series.points).unwrap();
        if complexity.exponent_ci_low.unwrap() <= 1.0 {
            open += 1;
            named_linear += usize::from(complexity.class == Some(Class::Linear));
            assert!(complexity.class <= Some(Class::Linear), "{complexity:?}");
        }
    }
    println!("linear shapes whose interval holds 1: {open}, named O(n): {named_linear}");
    assert!(named_linear as f64 >= 0.95 * open as f64, "{named_linear} of {open} named O(n)");
}

/// Instruction counts, the same on every run, with lower-order terms and fixed costs: each named
/// its own class, none unsure, from 5 sizes on.
#[test]
fn exact_counts_are_named_their_class_and_never_unsure() {
    let held_out = std::env::var("SLOPEWATCH_CORPUS_SEED").ok().and_then(|s| s.parse().ok());
    for seed in std::iter::once(corpus::SEED).chain(held_out) {
        let confusion = Confusion::of(&corpus::exact_counts(seed), Noise::Exact);
        println!("exact counts, seed {seed}\n{}", confusion.table());
        assert_eq!(confusion.unsure(), 0, "exact counts unsure at seed {seed}");
        assert_eq!(confusion.right(), confusion.total(), "exact counts misnamed at seed {seed}");
    }
}

#[test]
fn the_corpus_is_the_same_every_time() {
    let a = corpus::corpus(corpus::SEED);
    let b = corpus::corpus(corpus::SEED);
    assert!(a.iter().zip(&b).all(|(a, b)| a.shape == b.shape && a.points == b.points));
    assert!(a.iter().all(|s| (6..=8).contains(&s.points.len())));
}

/// Where a fixed cost hides most of the growth, or there is none, the few sizes that rise look
/// like one raised end, which a fixed cost plus steep growth fits; the exponent's interval shows
/// that linear growth (or none) is not ruled out, and the class must not be O(n²) or O(n³).
#[test]
fn hidden_growth_is_never_named_quadratic_or_cubic() {
    let series = corpus::hidden_growth(corpus::SEED, 2000);
    let mut named = [[0usize; 7]; 2];
    for (flat, points) in &series {
        let class = classify(points).unwrap().class;
        named[usize::from(*flat)][class.map_or(6, |c| c as usize)] += 1;
    }
    for (label, row) in ["fixed 64–256× + n", "flat"].iter().zip(&named) {
        println!("{label}: {:?} (O(1), O(log n), O(n), O(n log n), O(n²), O(n³), unsure)", row);
        assert_eq!(row[Class::Quadratic as usize] + row[Class::Cubic as usize], 0, "{label} named O(n²) or O(n³)");
    }
}

/// Counts that change regime at one size (a step up or down, the two sides growing alike) are
/// named the class of their two sides, or left unsure, and never a class above it.
#[test]
fn exact_counts_that_step_once_are_never_named_above_their_class() {
    let confusion = Confusion::of(&corpus::exact_steps(corpus::SEED), Noise::Exact);
    println!("exact counts with a step, seed {}\n{}", corpus::SEED, confusion.table());
    for series in corpus::exact_steps(corpus::SEED) {
        let complexity = classify_with(&series.points, Noise::Exact).unwrap();
        let Shape::Class(class) = series.shape else { unreachable!() };
        assert!(complexity.class.is_none_or(|named| named <= class), "{class:?}: {complexity:?} {:?}", series.points);
        // Growth up to O(n log n) changes little from one pair of sizes to the next, so the two
        // sides of the step agree; a fixed cost giving way to O(n³) may not.
        if class <= Class::NLogN {
            assert!(complexity.step.is_some(), "no step found in {:?}", series.points);
        }
    }
    assert!(confusion.right() as f64 >= 0.95 * confusion.total() as f64, "under 95% named their class");
}
