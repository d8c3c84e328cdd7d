//! Shards: what a worker returns for one task attempt, as bytes that cross the network.
//!
//! Layout: a bincode header (fixed-width little-endian integers) followed by the payload
//! compressed with zstd. The header names the task and attempt, carries the payload's raw and
//! compressed lengths and the CRC-32 of the compressed bytes, and has its own CRC-32, so a
//! truncated, corrupted or misrouted shard is rejected before anything is merged.

use crate::checksum::crc32;
use serde::{Deserialize, Serialize};

const MAGIC: [u8; 8] = *b"CFSHARD\0";
/// Version of the shard layout; a reader refuses other versions.
pub const SHARD_VERSION: u16 = 1;

/// The task number in the key of an input that belongs to a whole level (the frontier every
/// backward task reads), encoded once and sent to every worker with attempt 0.
pub const LEVEL_INPUT: u64 = u64::MAX;

/// Identity of the work a shard answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardKey {
    pub job: u64,
    pub task: u64,
    pub attempt: u32,
    pub level: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Header {
    magic: [u8; 8],
    version: u16,
    key: ShardKey,
    raw_len: u64,
    payload_len: u64,
    payload_crc: u32,
}

/// Why a shard was rejected.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardError {
    #[error("shard too short for its header ({len} bytes)")]
    Truncated { len: usize },
    #[error("not a shard (bad magic)")]
    Magic,
    #[error("shard layout version {found}, this build reads version {expected}")]
    Version { found: u16, expected: u16 },
    #[error("shard header checksum mismatch")]
    HeaderChecksum,
    #[error("shard payload is {found} bytes, header says {expected}")]
    PayloadLength { found: u64, expected: u64 },
    #[error("shard payload checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    PayloadChecksum { stored: u32, computed: u32 },
    #[error("shard payload does not decompress: {0}")]
    Decompress(String),
    #[error("shard is for {found:?}, expected {expected:?}")]
    WrongTask { found: ShardKey, expected: ShardKey },
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_fixed_int_encoding().with_little_endian()
}

/// Encoded header length: fixed, since every field has a fixed width.
fn header_len() -> usize {
    encode_header(&Header {
        magic: MAGIC,
        version: SHARD_VERSION,
        key: ShardKey { job: 0, task: 0, attempt: 0, level: 0 },
        raw_len: 0,
        payload_len: 0,
        payload_crc: 0,
    })
    .len()
}

fn encode_header(h: &Header) -> Vec<u8> {
    let mut bytes = bincode::serde::encode_to_vec(h, config()).expect("a fixed-width header encodes");
    let crc = crc32(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes
}

/// Compresses `payload` into a shard for `key`.
pub fn encode(key: ShardKey, payload: &[u8]) -> Vec<u8> {
    let compressed = zstd::bulk::compress(payload, 1).expect("zstd compresses any input");
    let header = Header {
        magic: MAGIC,
        version: SHARD_VERSION,
        key,
        raw_len: payload.len() as u64,
        payload_len: compressed.len() as u64,
        payload_crc: crc32(&compressed),
    };
    let mut out = encode_header(&header);
    out.extend_from_slice(&compressed);
    out
}

/// [`encode`] of 64-bit words as little-endian bytes, without copying them first.
pub fn encode_words(key: ShardKey, words: &[u64]) -> Vec<u8> {
    encode(key, as_bytes(words))
}

#[cfg(not(target_endian = "little"))]
compile_error!("shards carry little-endian words, read in place: a little-endian target is required");

fn as_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: u8 has alignment 1 and every byte of a u64 is initialized.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 8) }
}

/// Checks a shard's header and payload checksum; returns the header and compressed payload.
fn checked(bytes: &[u8]) -> Result<(Header, &[u8]), ShardError> {
    let hl = header_len();
    if bytes.len() < hl {
        return Err(ShardError::Truncated { len: bytes.len() });
    }
    if bytes[..8] != MAGIC {
        return Err(ShardError::Magic);
    }
    let (body, crc) = bytes[..hl].split_at(hl - 4);
    if crc32(body).to_le_bytes() != crc {
        return Err(ShardError::HeaderChecksum);
    }
    let (header, _): (Header, usize) =
        bincode::serde::decode_from_slice(body, config()).map_err(|_| ShardError::HeaderChecksum)?;
    if header.version != SHARD_VERSION {
        return Err(ShardError::Version { found: header.version, expected: SHARD_VERSION });
    }
    let payload = &bytes[hl..];
    if payload.len() as u64 != header.payload_len {
        return Err(ShardError::PayloadLength { found: payload.len() as u64, expected: header.payload_len });
    }
    let computed = crc32(payload);
    if computed != header.payload_crc {
        return Err(ShardError::PayloadChecksum { stored: header.payload_crc, computed });
    }
    Ok((header, payload))
}

/// Checks a shard and returns its key and decompressed payload.
pub fn decode(bytes: &[u8]) -> Result<(ShardKey, Vec<u8>), ShardError> {
    let (header, payload) = checked(bytes)?;
    let raw = zstd::bulk::decompress(payload, header.raw_len as usize)
        .map_err(|e| ShardError::Decompress(e.to_string()))?;
    if raw.len() as u64 != header.raw_len {
        return Err(ShardError::Decompress(format!("{} bytes, header says {}", raw.len(), header.raw_len)));
    }
    Ok((header.key, raw))
}

/// [`decode`], also checking that the shard answers `expected`.
pub fn decode_for(bytes: &[u8], expected: ShardKey) -> Result<Vec<u8>, ShardError> {
    let (found, raw) = decode(bytes)?;
    if found != expected {
        return Err(ShardError::WrongTask { found, expected });
    }
    Ok(raw)
}

/// [`decode_for`] of a payload of exactly `len` 64-bit words, decompressed straight into the
/// words (no intermediate byte copy: a frontier can be gigabytes). The length is checked before
/// anything is allocated.
pub fn decode_words_for(bytes: &[u8], expected: ShardKey, len: usize) -> Result<Vec<u64>, ShardError> {
    let (header, payload) = checked(bytes)?;
    if header.key != expected {
        return Err(ShardError::WrongTask { found: header.key, expected });
    }
    if header.raw_len != len as u64 * 8 {
        return Err(ShardError::Decompress(format!("{} bytes, expected {len} words", header.raw_len)));
    }
    let mut words = vec![0u64; header.raw_len as usize / 8];
    // SAFETY: any byte pattern is a valid u64; the view covers exactly the words' bytes.
    let view = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 8) };
    let n =
        zstd::bulk::decompress_to_buffer(payload, view).map_err(|e| ShardError::Decompress(e.to_string()))?;
    if n as u64 != header.raw_len {
        return Err(ShardError::Decompress(format!("{n} bytes, header says {}", header.raw_len)));
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: ShardKey = ShardKey { job: 7, task: 42, attempt: 2, level: 11 };

    #[test]
    fn round_trip_and_compression() {
        let payload: Vec<u8> = (0..100_000u32).map(|i| if i % 97 == 0 { 0xff } else { 0 }).collect();
        let shard = encode(KEY, &payload);
        assert!(shard.len() < payload.len() / 10, "sparse bits compress: {} bytes", shard.len());
        assert_eq!(decode(&shard), Ok((KEY, payload.clone())));
        assert_eq!(decode_for(&shard, KEY), Ok(payload));
        assert!(matches!(
            decode_for(&shard, ShardKey { attempt: 3, ..KEY }),
            Err(ShardError::WrongTask { .. })
        ));
        assert_eq!(decode(&encode(KEY, &[])), Ok((KEY, vec![])));
    }

    #[test]
    fn words_round_trip_in_place() {
        let words: Vec<u64> =
            (0..5000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 64)).collect();
        let shard = encode_words(KEY, &words);
        assert_eq!(decode_words_for(&shard, KEY, 5000), Ok(words.clone()));
        assert!(matches!(decode_words_for(&shard, KEY, 4999), Err(ShardError::Decompress(_))));
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(decode_for(&shard, KEY), Ok(bytes));
        assert!(matches!(decode_words_for(&encode(KEY, b"odd"), KEY, 0), Err(ShardError::Decompress(_))));
    }

    #[test]
    fn every_single_bit_flip_is_rejected() {
        let shard = encode(KEY, b"some bits of a frontier row, some bits of a frontier row");
        for i in 0..shard.len() {
            for bit in 0..8 {
                let mut bad = shard.clone();
                bad[i] ^= 1 << bit;
                assert!(decode(&bad).is_err(), "flip of byte {i} bit {bit} accepted");
            }
        }
        assert!(matches!(decode(&shard[..shard.len() - 1]), Err(ShardError::PayloadLength { .. })));
        assert!(matches!(decode(&shard[..10]), Err(ShardError::Truncated { .. })));
    }
}
