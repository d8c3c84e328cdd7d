//! The shared crate's integration tests, one module per concept, built as one test binary: one
//! link instead of eleven, generic code instantiated once, and tests of different modules run
//! side by side (a binary's tests share its threads; separate binaries run one after another).

mod common;
mod corners;
mod coset;
mod edges;
mod h48_levels;
mod kociemba;
mod nxopt;
mod owned;
mod phase2;
mod product;
mod sim;
mod tasks;
