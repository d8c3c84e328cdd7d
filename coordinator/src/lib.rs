//! The coordinator, one way down: [`cli`] (clap) makes the validated requests of [`config`];
//! [`jobs`] run them through the search [`driver`] (journal, resume) and the [`cluster`]
//! runtime (scheduler, gRPC service); [`journal`], [`progress`], [`resources`], [`output`] and
//! [`position`] support them. Jobs run embedded (on rayon threads in this process) unless asked
//! to serve workers.

pub mod cli;
pub mod cluster;
pub mod config;
pub mod driver;
pub mod jobs;
pub mod journal;
pub mod output;
pub mod position;
pub mod progress;
pub mod resources;
