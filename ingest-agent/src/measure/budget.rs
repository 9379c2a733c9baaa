//! How much measuring one workload may cost, and the sizes its sweep spans.

use crate::builds::workloads::Workload;
use slopewatch_core::complexity;
use std::time::Duration;

/// Fewest sizes a workload is measured at, whatever the budget (a valid run needs only
/// [`slopewatch_core::wire::MIN_SIZES`]): one more than the fewest a class is named from. Steep
/// growth is what stops a sweep early, and `classify` names O(n²) or O(n³) only when the class
/// below is ruled out with the largest size left out too; from five sizes that leaves four, whose
/// exponent interval rests on one degree of freedom and rules out little. On a loaded 2-core
/// machine Zig 0.16.0's quadratic `strchr` and `strspn` read unsure 9 times in 10 at five sizes,
/// O(n²) 16 times in 20 at six.
pub const MIN_SIZES: usize = complexity::MIN_SIZES + 1;

/// The fewest sizes a workload is measured at: [`MIN_SIZES`], or for an `exact` measure (counts
/// that are the same on every run) the fewest a class is named from, since there is no noise for
/// a sixth size to outvote.
pub fn fewest_sizes(exact: bool) -> usize {
    if exact {
        complexity::MIN_SIZES
    } else {
        MIN_SIZES
    }
}

/// How much measuring each workload may cost.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Timed repetitions per size (after one warm-up).
    pub reps: u32,
    /// Doubling stops once one repetition takes longer than this.
    pub per_size: Duration,
    /// The most one workload may take on one toolchain, warm-ups included.
    pub total: Duration,
    /// Overrides every workload's first size.
    pub start: Option<u64>,
    /// Overrides every workload's largest size; widening to name a class never passes it either.
    pub max: Option<u64>,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget { reps: 5, per_size: Duration::from_secs(1), total: Duration::from_secs(60), start: None, max: None }
    }
}

impl Budget {
    /// The (first, max) sizes of the sweep for `w`: the start widened downwards so at least
    /// [`MIN_SIZES`] sizes fit, and the rise begun one size below it, so that the growth is known
    /// before the larger sizes cost (see the sweep's rise).
    /// An `exact` measure needs one size fewer (see [`fewest_sizes`]), and its rise begins two
    /// sizes below the start rather than one. Not lower: its small sizes would be mostly fixed
    /// cost, and a slope fitted through them reads a quadratic as 1.5 where its top reads 1.9.
    pub fn sizes_for(&self, w: &Workload, exact: bool) -> (u64, u64) {
        let max = self.max.unwrap_or(w.max);
        let mut start = self.start.unwrap_or(w.start).min(max);
        while start > 1 && max / start < 1 << (fewest_sizes(exact) - 2) {
            start /= 2;
        }
        // Counted, the rise begins two sizes below: a size costs Valgrind's slowed time, and the
        // first doubling is blind to the growth.
        (start.div_ceil(if exact { 4 } else { 2 }), max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_always_span_enough_sizes_to_name_a_steep_class() {
        let w = crate::builds::workloads::builtin().remove(0);
        let b = Budget { max: Some(100_000), start: Some(64 * 1024), ..Budget::default() };
        let (start, max) = b.sizes_for(&w, false);
        assert_eq!((start, max), (2048, 100_000), "32× at least: six sizes");
        assert_eq!(Budget::default().sizes_for(&w, false), (32 * 1024, 4 * 1024 * 1024), "a size below the start");
        let tiny = Budget { max: Some(8), ..Budget::default() };
        assert_eq!(tiny.sizes_for(&w, false), (1, 8), "never below 1");
        let narrow = Budget { max: Some(1 << 20), start: Some(1 << 18), ..Budget::default() };
        assert_eq!(narrow.sizes_for(&w, false).0, 1 << 15, "six sizes: 32×, begun one below");
        assert_eq!(narrow.sizes_for(&w, true).0, 1 << 15, "five exact sizes: 16×, begun two below");
    }
}
