//! The coordinator: command line, jobs, and (with the distribution issue) scheduling and the
//! gRPC service. Jobs run on the embedded default: computation in this process on rayon threads.

pub mod cli;
pub mod cluster;
pub mod enumerate;
pub mod hbuild;
pub mod journal;
pub mod output;
pub mod position;
pub mod product;
pub mod progress;
pub mod resources;
pub mod service;
pub mod table_verify;
pub mod tables;
