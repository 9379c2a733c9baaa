//! The found probes' binary: the harness measuring one input shape of `c/contracts/shapes.h`,
//! named `contract.FUNCTION.AXIS~SHAPE` as the catalogue's probes are named, and built from these
//! files alone (none of the catalogue's probes is compiled into it).

/// Every file of the shapes binary, written flat into its build directory beside the harness.
pub const FILES: &[(&str, &str)] = &[
    ("shapes.h", include_str!("../../c/contracts/shapes.h")),
    ("shapes.def", include_str!("../../c/contracts/shapes.def")),
    ("shapes.c", include_str!("../../c/contracts/shapes.c")),
];
