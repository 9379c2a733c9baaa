//! The class rule: where a version's complexity class stands against `[alerts] rule = "class"`
//! (or `"either"`). A regression may open on a step up from {O(1), O(log n), O(n), O(n log n)}
//! into {O(n²), O(n³)}, or from O(n²) to O(n³); an unsure class never opens or resolves anything.
//! The noise rule, beside the class's own (docs/complexity.md), is in `standing`.

use slopewatch_core::complexity::{Class, Complexity};
use slopewatch_core::wire::degree;

/// Where a version's class stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Over, at a level: 1 for O(n²), 2 for O(n³). A step to a higher level is a step up.
    Over(u8),
    Under,
    Unsure,
}

/// Where `complexity` stands: a named O(n²) is over, a named O(n³) a level further, a simpler
/// class under. `classify` names O(n²) only where the exponent's interval rules out linear growth
/// and O(n³) only where it rules out quadratic (docs/complexity.md), so a flat series whose
/// largest size came out high is unsure rather than over. Summaries classified before that rule
/// carry their class unchecked, so the same bounds are held here too: a steep class whose
/// interval reaches down to 1 is unsure, and an O(n³) reaching down to 2 counts as O(n²).
/// No complexity (a summary not classified) is unsure.
pub fn standing(complexity: Option<&Complexity>) -> Standing {
    let Some(c) = complexity else { return Standing::Unsure };
    let Some(class) = c.class else { return Standing::Unsure };
    let low = c.exponent_ci_low.unwrap_or(f64::NEG_INFINITY);
    match class {
        Class::Constant | Class::Log | Class::Linear | Class::NLogN => Standing::Under,
        Class::Cubic if low > 2.0 => Standing::Over(2),
        Class::Quadratic | Class::Cubic if low > 1.0 => Standing::Over(1),
        Class::Quadratic | Class::Cubic => Standing::Unsure,
    }
}

/// Where `complexity` stands against a contract of `expected`: over by as many polynomial degrees
/// as its class is above the expected one's (O(1) → O(n) is 1, O(n log n) → O(n²) is 1), under
/// when not above it, unsure when unnamed. As in [`standing`], a class is over only where its
/// exponent's interval rules out the expected degree.
pub fn against(complexity: Option<&Complexity>, expected: Class) -> Standing {
    let Some(c) = complexity else { return Standing::Unsure };
    let Some(class) = c.class else { return Standing::Unsure };
    let (have, allowed) = (degree(class), degree(expected));
    if have <= allowed {
        return Standing::Under;
    }
    let low = c.exponent_ci_low.unwrap_or(f64::NEG_INFINITY);
    if low > f64::from(allowed) {
        Standing::Over(have - allowed)
    } else {
        Standing::Unsure
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contract_is_broken_a_polynomial_step_up_and_only_as_far_as_the_exponent_bears_it_out() {
        let one = Class::Constant;
        assert_eq!(against(Some(&complexity(Some(Class::Linear), 0.9)), one), Standing::Over(1));
        assert_eq!(against(Some(&complexity(Some(Class::Log), 0.1)), one), Standing::Under, "a logarithm is no break");
        assert_eq!(against(Some(&complexity(Some(Class::Quadratic), 1.9)), Class::NLogN), Standing::Over(1));
        assert_eq!(against(Some(&complexity(Some(Class::Linear), -0.2)), one), Standing::Unsure, "flat not ruled out");
        assert_eq!(against(Some(&complexity(Some(Class::NLogN), 1.0)), Class::Linear), Standing::Under);
        assert_eq!(against(Some(&complexity(None, 1.0)), one), Standing::Unsure);
    }

    fn complexity(class: Option<Class>, low: f64) -> Complexity {
        Complexity {
            class,
            best: class.unwrap_or(Class::Linear),
            weight: 0.9,
            runner_up: Class::NLogN,
            runner_up_weight: 0.1,
            exponent: Some(low + 0.1),
            exponent_ci_low: Some(low),
            exponent_ci_high: Some(low + 0.2),
        }
    }

    #[test]
    fn a_class_is_over_only_as_far_as_its_exponent_bears_it_out() {
        assert_eq!(standing(Some(&complexity(Some(Class::Linear), 0.9))), Standing::Under);
        assert_eq!(standing(Some(&complexity(Some(Class::NLogN), 1.0))), Standing::Under);
        assert_eq!(standing(Some(&complexity(Some(Class::Quadratic), 1.9))), Standing::Over(1));
        assert_eq!(standing(Some(&complexity(Some(Class::Cubic), 2.9))), Standing::Over(2));
        assert_eq!(standing(Some(&complexity(Some(Class::Cubic), 1.5))), Standing::Over(1), "not above 2");
        assert_eq!(standing(Some(&complexity(Some(Class::Quadratic), 0.4))), Standing::Unsure, "linear not ruled out");
        assert_eq!(standing(Some(&complexity(None, 1.9))), Standing::Unsure);
        assert_eq!(standing(None), Standing::Unsure);
    }
}
