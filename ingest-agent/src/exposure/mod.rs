//! Exposure: which libc functions an artifact calls or references that the toolchain that built it
//! breaks. The binary is read for its calls and callers (`artifact`); whose libc code it carries is
//! told by the toolchains' fingerprints (`owner`); the toolchain's verdicts come from the catalogue
//! (`verdicts`); a suppression file marks what a team accepts (`accept`); each artifact is judged
//! (`judge`) and the answer written for a terminal, a pull request, a machine (`report`) or code
//! scanning (`sarif`). The `exposure` command puts them together.

pub(crate) mod accept;
pub(crate) mod judge;
pub(crate) mod owner;
pub(crate) mod report;
pub(crate) mod sarif;
pub(crate) mod verdicts;
