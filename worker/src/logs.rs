//! Log lines of both binaries through `tracing`: to stderr, level from `RUST_LOG` (default
//! `info`; a level, or `target=level` directives separated by commas; a value that does not
//! parse gives the default), colours only when stderr is a terminal.

use std::io::IsTerminal;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Installs the stderr subscriber; a second call (an embedding process has one) does nothing.
pub fn init() {
    let filter = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .and_then(|v| v.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(LevelFilter::INFO));
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    let _ = tracing_subscriber::registry().with(layer).with(filter).try_init();
}
