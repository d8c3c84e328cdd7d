//! `coordinator position`: what a move sequence does, for checking notation and conventions.

use anyhow::Result;
use shared::cube::{apply_moves, format_moves, parse_moves, Symmetry};
use std::fmt::Write as _;

/// A multi-line description of the position reached by `moves` from solved.
pub fn describe(moves: &str) -> Result<String> {
    let seq = parse_moves(moves)?;
    let x = apply_moves(&seq);
    let fixed = Symmetry::all().filter(|s| s.conjugate(&x) == x).count();
    let mut out = String::new();
    let plural = if seq.len() == 1 { "" } else { "s" };
    writeln!(out, "moves:        {} ({} move{plural})", format_moves(&seq), seq.len())?;
    writeln!(out, "cubies:       {x}")?;
    writeln!(out, "edge word:    {}", x.edge_word())?;
    writeln!(out, "corner word:  {}", x.corner_word())?;
    writeln!(out, "symmetries:   {fixed} of 48 fix it")?;
    Ok(out)
}
