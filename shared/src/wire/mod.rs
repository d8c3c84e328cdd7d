//! What tasks send and receive, over the checked, compressed [`crate::shard`] codec: the level
//! inputs and results of row searches as sparse row sets ([`SparseRows`]), bytes framed as
//! words, the counters of product tasks ([`product`]), and the level rows and table rows of H48
//! builds ([`h48`]). Every decoder checks the
//! sizes it is given against what the task can hold, so a damaged or hostile message is
//! refused, not trusted.

pub mod h48;
mod pool;
pub mod product;
mod sparse;

pub use pool::WordPool;
pub use sparse::{Before, KnownVisited, PartCut, PartedRows, PartsDecoder, SparseRows, Unvisited};

use crate::bfs::Direction;

/// The name under which workers download a level's input: the frontier of a forward level,
/// the unvisited entries of a backward one (`<name>/<depth>`; a forward task also reads the
/// previous level's input, or unvisited entries of this one, as its [`Before`]).
pub fn level_input_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Backward => "unvisited-all",
        _ => "frontier-all",
    }
}

/// Bytes as words: the length, then the bytes, zero-padded.
pub fn to_words(bytes: &[u8]) -> Vec<u64> {
    let mut words = Vec::with_capacity(1 + bytes.len().div_ceil(8));
    words.push(bytes.len() as u64);
    words.extend(bytes.chunks(8).map(|c| {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(b)
    }));
    words
}

/// The bytes of [`to_words`].
pub fn from_words(words: &[u64]) -> Result<Vec<u8>, String> {
    let (&len, rest) = words.split_first().ok_or("an empty result")?;
    if len.div_ceil(8) != rest.len() as u64 {
        return Err(format!("a result claims {len} bytes in {} words", rest.len()));
    }
    let mut bytes: Vec<u8> = rest.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes.truncate(len as usize);
    Ok(bytes)
}
