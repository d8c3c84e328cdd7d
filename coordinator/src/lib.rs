//! Coordinator library: command line and (later) job scheduling and the
//! gRPC `Coordinator` service.

pub mod cli;
