//! The coordinator's integration tests, one module per concern, built as one test binary: one
//! link, and tests of different modules run side by side (separate binaries run one after
//! another). The multi-process cluster runs are a binary of their own (`cluster/`), so that
//! their timeouts do not share a run with these tests' table builds.

#[path = "../support/mod.rs"]
mod support;

mod architecture;
mod cli;
mod coset;
mod readme;
mod rokicki;
mod tables;
