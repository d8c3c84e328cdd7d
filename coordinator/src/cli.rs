//! Command-line interface of the `coordinator` binary (placeholder).

use std::process::ExitCode;

use clap::Parser;

/// Builds Rubik's-cube pruning tables and enumerates cosets.
#[derive(Debug, Parser)]
#[command(name = "coordinator", version, about)]
pub struct Cli {}

/// Parses the command line and runs the requested command.
pub fn main() -> ExitCode {
    let _cli = Cli::parse();
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
