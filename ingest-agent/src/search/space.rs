//! The spaces the search climbs over: for each function it can search, its family of input
//! shapes (a few parameters that describe an input at any size, built by the generators of
//! `c/contracts/shapes.h`), the axes its contract bounds with the class allowed on each, and the
//! sizes each axis is measured at. Nothing here reads the contract catalogue's probes: the search
//! knows the standard's bounds and its own generators, no one's chosen inputs.

use slopewatch_core::complexity::Class;
use slopewatch_core::wire::{check_shape, Contract, SizeUnit, CONTRACT_PREFIX, SHAPE_SEPARATOR};

/// One parameter of a family: its key, its values (the first is the simplest, where a reduced
/// shape returns to), and the functions and axes it applies to.
struct Param {
    key: &'static str,
    values: &'static [&'static str],
    /// The functions it applies to; empty for all of its family's.
    functions: &'static [&'static str],
    /// The axes it applies to; empty for all.
    axes: &'static [&'static str],
}

const fn param(key: &'static str, values: &'static [&'static str]) -> Param {
    Param { key, values, functions: &[], axes: &[] }
}

/// An axis a contract bounds: what grows, the class the function may cost along it, the sizes it
/// is searched at (far enough that an algorithm changing past a work bound is judged by what it
/// does there) and what a break means.
#[derive(Debug, Clone, Copy)]
pub struct Axis {
    pub name: &'static str,
    pub expected: Class,
    pub start: u64,
    pub max: u64,
    pub broken: &'static str,
}

/// A family of functions whose inputs one generator builds.
struct ShapeFamily {
    name: &'static str,
    functions: &'static [&'static str],
    params: &'static [Param],
}

const LOW_HIGH: &[&str] = &["low", "high"];
const NO_YES: &[&str] = &["no", "yes"];
const ALIGN: &[&str] = &["0", "1", "7", "15"];

const FAMILIES: &[ShapeFamily] = &[
    ShapeFamily {
        name: "search",
        functions: &["strstr", "strcasestr", "memmem"],
        params: &[
            param("alphabet", &["1", "2", "3", "4"]),
            param("mismatch", &["last", "mid", "first", "second"]),
            Param { axes: &["needle", "haystack"], ..param("found", NO_YES) },
            Param { axes: &["haystack"], ..param("needle", &["32", "2", "3", "4", "8", "256"]) },
            param("high", NO_YES),
            Param { functions: &["strcasestr"], ..param("case", &["lower", "upper"]) },
            Param { functions: &["memmem"], ..param("guard", NO_YES) },
        ],
    },
    ShapeFamily {
        name: "span",
        functions: &["strspn", "strcspn", "strpbrk"],
        params: &[
            param("set", &["3", "1", "16", "64"]),
            param("at", &["first", "last"]),
            param("high", NO_YES),
            param("align", ALIGN),
        ],
    },
    ShapeFamily {
        name: "chr",
        functions: &["strchr", "strchrnul", "strrchr", "memchr", "memrchr"],
        params: &[
            param("byte", LOW_HIGH),
            // The terminator is found only at the end: on the distance axis alone.
            Param {
                functions: &["strchr", "strchrnul"],
                axes: &["distance"],
                ..param("byte", &["low", "high", "nul"])
            },
            Param { functions: &["memchr", "memrchr"], ..param("guard", NO_YES) },
            param("align", ALIGN),
        ],
    },
    ShapeFamily {
        name: "cmp",
        functions: &["strcmp", "strncmp", "memcmp", "strcasecmp", "strncasecmp"],
        params: &[
            Param { axes: &["remaining"], ..param("at", &["1", "8", "15", "16"]) },
            param("high", NO_YES),
            Param { functions: &["strcasecmp", "strncasecmp"], ..param("case", &["lower", "upper"]) },
            param("align", &["0", "1", "7"]),
        ],
    },
    ShapeFamily {
        name: "copy",
        functions: &["memccpy", "strncpy", "stpncpy", "strcpy", "strlen", "strnlen"],
        params: &[
            Param { axes: &["remaining"], ..param("at", &["1", "7", "16"]) },
            param("high", NO_YES),
            param("align", &["0", "1", "7"]),
        ],
    },
];

const ONE: &str = "costs more than a bounded amount while the rest of its input grows";
const LINEAR: &str = "costs more than linear time along this axis, or reads past its bound";

/// The axes `function`'s contract bounds, as the standard and every sound libc have them.
pub fn axes(function: &str) -> &'static [Axis] {
    const fn near(name: &'static str) -> Axis {
        Axis { name, expected: Class::Constant, start: 256, max: 64 * 1024, broken: ONE }
    }
    const fn linear(name: &'static str, max: u64) -> Axis {
        Axis { name, expected: Class::Linear, start: 256, max, broken: LINEAR }
    }
    const SEARCH: &[Axis] = &[
        near("remaining"),
        Axis {
            name: "needle",
            expected: Class::Linear,
            start: 256,
            max: 16 * 1024,
            broken: "costs more than linear time in the needle and the haystack together",
        },
        linear("haystack", 64 * 1024),
    ];
    const SPAN: &[Axis] = &[near("remaining"), linear("distance", 64 * 1024)];
    const BOUNDED: &[Axis] = &[near("remaining"), linear("bound", 64 * 1024)];
    const TERMINATED: &[Axis] = &[near("remaining"), linear("length", 64 * 1024)];
    const LENGTH: &[Axis] = &[linear("length", 64 * 1024)];
    const BOUND: &[Axis] = &[linear("bound", 64 * 1024)];
    match family(function).map(|f| f.name) {
        Some("search") => SEARCH,
        Some("span") => SPAN,
        _ => match function {
            "strchr" | "strchrnul" => SPAN,
            "strrchr" | "strcpy" | "strlen" => LENGTH,
            "strncpy" | "stpncpy" | "strnlen" => BOUND,
            "strcmp" | "strcasecmp" => TERMINATED,
            "memchr" | "memrchr" | "strncmp" | "memcmp" | "strncasecmp" | "memccpy" => BOUNDED,
            _ => &[],
        },
    }
}

fn family(function: &str) -> Option<&'static ShapeFamily> {
    FAMILIES.iter().find(|f| f.functions.contains(&function))
}

/// Every function the search has a space for, in the order of its families.
pub fn functions() -> Vec<&'static str> {
    FAMILIES.iter().flat_map(|f| f.functions.iter().copied()).collect()
}

/// The parameters of `function` on `axis`, in the order a shape lists them: a later parameter of
/// the same key (a function's own values) replaces an earlier one.
fn params(function: &str, axis: &str) -> Vec<&'static Param> {
    let Some(f) = family(function) else { return Vec::new() };
    let mut out: Vec<&Param> = Vec::new();
    for p in f.params {
        let applies = (p.functions.is_empty() || p.functions.contains(&function))
            && (p.axes.is_empty() || p.axes.contains(&axis));
        if !applies {
            continue;
        }
        match out.iter().position(|q| q.key == p.key) {
            Some(i) => out[i] = p,
            None => out.push(p),
        }
    }
    out
}

/// One shape: a function, an axis and a value for each of its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shape {
    pub function: String,
    pub axis: String,
    /// (key, value), in the order of the family's parameters.
    pub values: Vec<(String, String)>,
}

impl Shape {
    /// The simplest shape of `function` on `axis`: each parameter at its first value.
    pub fn base(function: &str, axis: &str) -> Shape {
        let values = params(function, axis).iter().map(|p| (p.key.to_string(), p.values[0].to_string())).collect();
        Shape { function: function.to_string(), axis: axis.to_string(), values }
    }

    /// Reads `contract.FUNCTION.AXIS~SHAPE` (or `FUNCTION.AXIS~SHAPE`), checking each parameter
    /// against the function's space.
    pub fn parse(name: &str) -> Result<Shape, String> {
        let rest = name.strip_prefix(CONTRACT_PREFIX).unwrap_or(name);
        let (head, text) = rest
            .split_once(SHAPE_SEPARATOR)
            .ok_or_else(|| format!("{name} is not FUNCTION.AXIS{SHAPE_SEPARATOR}SHAPE"))?;
        let (function, axis) = head.split_once('.').ok_or_else(|| format!("{name}: no axis after the function"))?;
        Shape::of(function, axis, text)
    }

    /// The shape of `function` on `axis` that `text` (`key=value,…`) gives, its other parameters
    /// at their simplest.
    pub fn of(function: &str, axis: &str, text: &str) -> Result<Shape, String> {
        if family(function).is_none() {
            return Err(format!("the search has no shapes for {function}; it has {}", functions().join(", ")));
        }
        if !axes(function).iter().any(|a| a.name == axis) {
            let known: Vec<&str> = axes(function).iter().map(|a| a.name).collect();
            return Err(format!("{function} has no axis {axis}; its axes are {}", known.join(", ")));
        }
        check_shape(text)?;
        let mut shape = Shape::base(function, axis);
        for pair in text.split(',') {
            let (key, value) = pair.split_once('=').expect("checked above");
            let p = params(function, axis)
                .into_iter()
                .find(|p| p.key == key)
                .ok_or_else(|| format!("{function} on {axis} has no parameter {key}"))?;
            if !p.values.contains(&value) {
                return Err(format!("{key} must be one of {}", p.values.join(", ")));
            }
            let slot = shape.values.iter_mut().find(|(k, _)| k == key).expect("every parameter has a slot");
            slot.1 = value.to_string();
        }
        Ok(shape)
    }

    /// The axis's contract and sizes.
    pub fn axis(&self) -> Axis {
        *axes(&self.function).iter().find(|a| a.name == self.axis).expect("a shape's axis is one of its function's")
    }

    /// Its parameters as the generators read them: `key=value,…`.
    pub fn text(&self) -> String {
        self.values.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
    }

    /// Its probe's workload name: `contract.FUNCTION.AXIS~SHAPE`.
    pub fn name(&self) -> String {
        format!("{CONTRACT_PREFIX}{}.{}{SHAPE_SEPARATOR}{}", self.function, self.axis, self.text())
    }

    /// What each size counts.
    pub fn unit(&self) -> SizeUnit {
        SizeUnit::Bytes
    }

    /// The contract its probe carries.
    pub fn contract(&self) -> Contract {
        let axis = self.axis();
        Contract {
            function: self.function.clone(),
            axis: self.axis.clone(),
            broken: axis.broken.to_string(),
            ..Contract::expecting(axis.expected)
        }
    }

    fn value(&self, key: &str) -> &str {
        self.values.iter().find(|(k, _)| k == key).map_or("", |(_, v)| v.as_str())
    }

    /// Every shape one parameter away.
    pub fn neighbours(&self) -> Vec<Shape> {
        let mut out = Vec::new();
        for p in params(&self.function, &self.axis) {
            for v in p.values.iter().filter(|v| **v != self.value(p.key)) {
                let mut s = self.clone();
                s.values.iter_mut().find(|(k, _)| k == p.key).expect("slot").1 = v.to_string();
                out.push(s);
            }
        }
        out
    }

    /// Each shape that returns one of its parameters to that parameter's simplest value.
    pub fn simpler(&self) -> Vec<Shape> {
        params(&self.function, &self.axis)
            .iter()
            .filter(|p| self.value(p.key) != p.values[0])
            .map(|p| {
                let mut s = self.clone();
                s.values.iter_mut().find(|(k, _)| k == p.key).expect("slot").1 = p.values[0].to_string();
                s
            })
            .collect()
    }

    /// How many parameters are off their simplest value.
    pub fn complexity(&self) -> usize {
        params(&self.function, &self.axis).iter().filter(|p| self.value(p.key) != p.values[0]).count()
    }

    /// The value of `key` (empty where the shape has no such parameter).
    pub fn get(&self, key: &str) -> &str {
        self.value(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_searched_has_axes_and_a_base_shape_its_parser_reads_back() {
        for f in functions() {
            assert!(!axes(f).is_empty(), "{f} has no axis");
            for a in axes(f) {
                let base = Shape::base(f, a.name);
                assert!(!base.values.is_empty(), "{f}.{} has no parameter", a.name);
                assert_eq!(Shape::parse(&base.name()).unwrap(), base);
                for n in base.neighbours() {
                    assert_eq!(Shape::parse(&n.name()).unwrap(), n, "{}", n.name());
                    assert_eq!(n.complexity(), 1);
                    assert_eq!(n.simpler(), vec![base.clone()]);
                }
            }
        }
    }

    #[test]
    fn the_terminator_is_sought_only_where_finding_it_may_cost_the_whole_string() {
        assert!(Shape::parse("contract.strchr.distance~byte=nul").is_ok());
        assert!(Shape::parse("contract.strchr.remaining~byte=nul").unwrap_err().contains("one of low, high"));
    }

    #[test]
    fn shapes_out_of_the_space_are_refused_with_what_is_allowed() {
        assert!(Shape::parse("contract.strstr.needle~alphabet=9").unwrap_err().contains("one of 1, 2, 3, 4"));
        assert!(Shape::parse("contract.strstr.width~alphabet=1").unwrap_err().contains("its axes are"));
        assert!(Shape::parse("contract.qsort.sorted~x=1").unwrap_err().contains("no shapes for qsort"));
        assert!(Shape::parse("contract.strstr.needle~case=upper").unwrap_err().contains("no parameter case"));
        assert!(Shape::parse("contract.strstr.needle").unwrap_err().contains("FUNCTION.AXIS~SHAPE"));
        let s = Shape::parse("contract.strcasestr.needle~case=upper").unwrap();
        assert_eq!(s.text(), "alphabet=1,mismatch=last,found=no,high=no,case=upper");
    }
}
