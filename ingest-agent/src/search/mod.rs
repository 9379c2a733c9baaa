//! The search for each function's worst input: shape spaces over the generators of
//! `c/contracts/shapes.h` (`space`, described in `words`), the climb that measures them
//! (`climb`), the breaks kept as found probes (`found`), and the reproducers written from them
//! (`reproduce`).

pub mod climb;
pub mod found;
pub mod reproduce;
pub mod space;
pub mod words;
