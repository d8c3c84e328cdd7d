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
use crate::shard::ShardKey;

/// The key of a message of rows between the workers of a row search that own its rows (and of
/// a part an owner sends the coordinator): the job, the part, what it is (the protocol's
/// `PeerKind` number) and the depth it belongs to. A message read under another key is
/// refused (see [`SparseRows::decode_rows`]).
pub fn row_message_key(job: u64, part: u32, kind: u32, depth: u32) -> ShardKey {
    ShardKey { job, task: part as u64, attempt: kind, level: depth }
}

/// The name under which workers download a level's input: the frontier of a forward level,
/// the unvisited entries of a backward one (`<name>/<depth>`; a forward task also reads the
/// previous level's input, or unvisited entries of this one, as its [`Before`]).
pub fn level_input_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Backward => "unvisited-all",
        _ => "frontier-all",
    }
}

/// The flag of an unvisited round's level number: its tasks, and the parts they return, belong
/// to no search level (those of input `unvisited-all/D` are keyed as of level
/// `(D - 1) | UNVISITED_ROUND`), so a late result of level D - 1 cannot pass for one of them.
pub const UNVISITED_ROUND: u32 = 1 << 31;

/// The depth by which the parts of the row input `name` ("<input>/<depth>") are keyed (see
/// [`PartCut::key`]), or `None` if the name is not a row input's.
pub fn input_key_depth(name: &str) -> Option<u32> {
    let (input, depth) = name.rsplit_once('/')?;
    let depth: u32 = depth.parse().ok().filter(|d| d & UNVISITED_ROUND == 0)?;
    match input {
        "frontier-all" => Some(depth),
        "unvisited-all" => Some(depth | UNVISITED_ROUND),
        _ => None,
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
