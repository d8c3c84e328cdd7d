//! Log lines of both binaries through `tracing`: to stderr, level from `RUST_LOG` (default
//! `info`; invalid directives are ignored), colours only when stderr is a terminal.

use std::io::IsTerminal;
use tracing_subscriber::filter::{EnvFilter, LevelFilter};

/// Installs the stderr subscriber; a second call (an embedding process has one) does nothing.
pub fn init() {
    let filter = EnvFilter::builder().with_default_directive(LevelFilter::INFO.into()).from_env_lossy();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}
