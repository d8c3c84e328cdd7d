//! What crosses the network, over the checked, compressed [`crate::shard`] codec: the rows
//! that workers of a row search exchange as sparse row sets ([`SparseRows`], keyed by
//! [`row_message_key`]), bytes framed as words, the counters of product tasks ([`product`]),
//! and the level rows and table rows of H48 builds ([`h48`]). Every decoder checks the
//! sizes it is given against what the task can hold, so a damaged or hostile message is
//! refused, not trusted.

/// A [`Malformed`] error from a format string.
macro_rules! malformed {
    ($($arg:tt)*) => {
        $crate::wire::Malformed(format!($($arg)*))
    };
}

pub mod coset;
pub mod h48;
pub mod product;
mod sparse;

pub use sparse::SparseRows;

use crate::shard::ShardKey;

/// A message or result that fails its checks, and what was wrong with it: refused, never
/// trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Malformed(pub String);

impl Malformed {
    pub fn new(why: String) -> Self {
        Malformed(why)
    }
}

impl From<&str> for Malformed {
    fn from(why: &str) -> Self {
        Malformed(why.to_string())
    }
}

/// The key of a message of rows between the workers of a row search that own its rows (and of
/// a part an owner sends the coordinator): the job, the part, what it is (the protocol's
/// `PeerKind` number) and the depth it belongs to. A message read under another key is
/// refused (see [`SparseRows::decode_rows`]).
pub fn row_message_key(job: u64, part: u32, kind: u32, depth: u32) -> ShardKey {
    ShardKey { job, task: part as u64, attempt: kind, level: depth }
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
pub fn from_words(words: &[u64]) -> Result<Vec<u8>, Malformed> {
    let (&len, rest) = words.split_first().ok_or(Malformed::from("an empty result"))?;
    if len.div_ceil(8) != rest.len() as u64 {
        return Err(malformed!("a result claims {len} bytes in {} words", rest.len()));
    }
    let mut bytes: Vec<u8> = rest.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes.truncate(len as usize);
    Ok(bytes)
}
