//! Pages in a real headless Chromium, checked in the rendered DOM, with screenshots saved under
//! `target/test-output/screenshots` (or `$SLOPEWATCH_TEST_OUTPUT`).

mod architectures;
mod contracts;
mod every_page;
mod numbers;
mod overview;
mod tuned;
mod versions;
