//! Shards: what a worker returns for one task attempt, as bytes that cross the network.
//!
//! Layout: a bincode header (fixed-width little-endian integers) followed by the payload as its
//! [`Codec`] packs it (zstd frames unless the sender chose otherwise). The header names the task
//! and attempt and the codec, carries the payload's raw and packed lengths and the CRC-32 of the
//! packed bytes, and has its own CRC-32, so a truncated, corrupted or misrouted shard is
//! rejected before anything is merged.

mod codec;
mod stream;
#[cfg(test)]
mod tests;

pub use codec::Codec;
pub use stream::{decode_words_for, decode_words_into, raw_words_for, WordsDecoder};

use crate::checksum::crc32;
use codec::{compress, decompress, max_packed_len, pack_into, unpack_lz4};
use serde::{Deserialize, Serialize};

const MAGIC: [u8; 8] = *b"CFSHARD\0";
/// Version of the shard layout; a reader refuses other versions. (2: the codec byte.)
pub const SHARD_VERSION: u16 = 2;

/// The task number in the key of an input that belongs to a whole job (an H48 build's level),
/// encoded once and sent to every worker with attempt 0. (A row search's level inputs travel in
/// parts keyed by task: see `wire::PartCut`.)
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
    codec: u8,
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
    #[error("shard payload packed with codec {0}, which this build does not know")]
    UnknownCodec(u8),
    #[error("shard is for {found:?}, expected {expected:?}")]
    WrongTask { found: ShardKey, expected: ShardKey },
    #[error("shard claims {claimed} bytes, the task can produce at most {limit}")]
    TooLarge { claimed: u64, limit: u64 },
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
        codec: 0,
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
    assemble(key, Codec::Zstd, payload.len() as u64, &[&compress(payload)])
}

/// A shard for `key`: the header, then `frames` (the payload of `raw_len` bytes packed by
/// `codec`) copied once, after it.
fn assemble(key: ShardKey, codec: Codec, raw_len: u64, frames: &[&[u8]]) -> Vec<u8> {
    let head = header_of(key, codec, raw_len, frames);
    let mut out = Vec::with_capacity(head.len() + frames.iter().map(|f| f.len()).sum::<usize>());
    out.extend_from_slice(&head);
    frames.iter().for_each(|f| out.extend_from_slice(f));
    out
}

/// The encoded header of a shard for `key` whose payload is `frames` (`raw_len` bytes unpacked).
fn header_of(key: ShardKey, codec: Codec, raw_len: u64, frames: &[&[u8]]) -> Vec<u8> {
    let mut crc = crate::checksum::Crc32::default();
    frames.iter().for_each(|f| crc.update(f));
    encode_header(&Header {
        magic: MAGIC,
        version: SHARD_VERSION,
        key,
        codec: codec.code(),
        raw_len,
        payload_len: frames.iter().map(|f| f.len() as u64).sum(),
        payload_crc: crc.finish(),
    })
}

/// Bytes of a shard's header: a raw shard is this many bytes, then its payload.
pub fn raw_header_len() -> usize {
    header_len()
}

/// Writes into `header` ([`raw_header_len`] bytes) the header of a raw shard for `key` whose
/// payload is `payload`: a shard written in place, in a buffer the caller then writes out.
pub fn raw_header_into(key: ShardKey, payload: &[u8], header: &mut [u8]) {
    header.copy_from_slice(&header_of(key, Codec::Raw, payload.len() as u64, &[payload]));
}

/// Words in front of a payload that [`raw_bytes`] fills with the shard's header.
pub fn raw_head_words() -> usize {
    header_len().div_ceil(8)
}

/// The bytes of a raw shard for `key` whose payload is `words[raw_head_words()..]`, the
/// header written into the end of the words before it: one buffer from the payload's coder
/// to the socket, shared by the chunks that slice it, never copied. Equal to
/// [`encode_word_parts_with`] (raw) of the payload.
pub fn raw_bytes(key: ShardKey, mut words: Vec<u64>) -> bytes::Bytes {
    let head = raw_head_words();
    assert!(words.len() >= head, "room for the header");
    let header = header_of(key, Codec::Raw, (words.len() - head) as u64 * 8, &[as_bytes(&words[head..])]);
    let start = head * 8 - header.len();
    as_bytes_mut(&mut words[..head])[start..].copy_from_slice(&header);
    bytes::Bytes::from_owner(Framed { words, start })
}

/// A shard's bytes that start `start` bytes into a buffer of words, which goes back to
/// [`spare_words`] once the last chunk is sent.
struct Framed {
    words: Vec<u64>,
    start: usize,
}

impl AsRef<[u8]> for Framed {
    fn as_ref(&self) -> &[u8] {
        &as_bytes(&self.words)[self.start..]
    }
}

impl Drop for Framed {
    fn drop(&mut self) {
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        if spare.len() < SPARE_BUFFERS {
            spare.push(std::mem::take(&mut self.words));
        }
    }
}

/// Buffers of sent raw shards kept for the next ones: fresh memory costs its page faults and
/// the kernel's zeroing, as much as writing the message.
static SPARE: std::sync::Mutex<Vec<Vec<u64>>> = std::sync::Mutex::new(Vec::new());

/// Sent shards' buffers kept at most.
const SPARE_BUFFERS: usize = 4;

/// A buffer of a raw shard already sent, or a new one: its contents are to be overwritten.
pub fn spare_words() -> Vec<u64> {
    SPARE.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_default()
}

/// [`encode`] of 64-bit words as little-endian bytes, without copying them first.
pub fn encode_words(key: ShardKey, words: &[u64]) -> Vec<u8> {
    encode(key, as_bytes(words))
}

/// A run of words for [`encode_word_parts`].
#[derive(Clone, Copy, Debug)]
pub struct WordPart<'a> {
    words: &'a [u64],
}

impl<'a> WordPart<'a> {
    pub fn plain(words: &'a [u64]) -> Self {
        WordPart { words }
    }

    /// Set bits among the part's words.
    pub fn count_ones(&self) -> u64 {
        crate::ones::ones(self.words)
    }
}

/// Words of each frame of a shard (16 MiB).
const GROUP_WORDS: usize = 2 << 20;

/// [`encode_words`] of the concatenation of `parts`, which is never built: the parts are cut
/// into groups of about 16 MiB, each compressed as its own zstd frame on rayon threads, and the
/// frames concatenated (a zstd stream may hold several frames). A gigabyte frontier is then
/// compressed by every core while the workers wait for it.
pub fn encode_word_parts(key: ShardKey, parts: &[WordPart]) -> Vec<u8> {
    encode_word_parts_with(key, Codec::Zstd, parts)
}

/// [`encode_word_parts`] packed by `codec`. Raw parts are copied once, straight after the
/// header.
pub fn encode_word_parts_with(key: ShardKey, codec: Codec, parts: &[WordPart]) -> Vec<u8> {
    let raw_len = parts.iter().map(|p| p.words.len() as u64 * 8).sum();
    if codec == Codec::Raw {
        let frames: Vec<&[u8]> = parts.iter().map(|p| as_bytes(p.words)).collect();
        return assemble(key, codec, raw_len, &frames);
    }
    use rayon::prelude::*;
    let mut groups: Vec<Vec<WordPart>> = vec![Vec::new()];
    let mut in_group = 0;
    for &part in parts {
        if in_group >= GROUP_WORDS {
            groups.push(Vec::new());
            in_group = 0;
        }
        groups.last_mut().expect("non-empty").push(part);
        in_group += part.words.len();
    }
    // A group is compressed from one contiguous input (its parts copied together when it has
    // several): fed part by part, zstd's stream goes through its window buffer and a slower
    // path (measured on `h` with two workers: 15 % of the workers' CPU).
    let frames: Vec<Vec<u8>> = groups
        .par_iter()
        .map(|group| {
            let joined: Vec<u8>;
            let input = match group.as_slice() {
                [one] => as_bytes(one.words),
                parts => {
                    let mut bytes = Vec::with_capacity(parts.iter().map(|p| p.words.len() * 8).sum());
                    parts.iter().for_each(|p| bytes.extend_from_slice(as_bytes(p.words)));
                    joined = bytes;
                    &joined
                }
            };
            let mut frame = Vec::new();
            pack_into(codec, input, &mut frame);
            frame
        })
        .collect();
    let frames: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
    assemble(key, codec, raw_len, &frames)
}

/// The bytes of words, little-endian (the wire order of every payload of words).
pub(crate) fn as_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: u8 has alignment 1 and every byte of a u64 is initialized.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 8) }
}

pub(crate) fn as_bytes_mut(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: as in `as_bytes`, and every byte pattern is a valid u64.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 8) }
}

/// Checks and decodes the header (the first [`header_len`] bytes of a shard).
fn check_header(head: &[u8]) -> Result<Header, ShardError> {
    if head[..8] != MAGIC {
        return Err(ShardError::Magic);
    }
    let (body, crc) = head.split_at(head.len() - 4);
    if crc32(body).to_le_bytes() != crc {
        return Err(ShardError::HeaderChecksum);
    }
    let (header, _): (Header, usize) =
        bincode::serde::decode_from_slice(body, config()).map_err(|_| ShardError::HeaderChecksum)?;
    if header.version != SHARD_VERSION {
        return Err(ShardError::Version { found: header.version, expected: SHARD_VERSION });
    }
    if Codec::of_code(header.codec).is_none() {
        return Err(ShardError::UnknownCodec(header.codec));
    }
    Ok(header)
}

/// Checks a shard's header and payload checksum; returns the header and compressed payload.
fn checked(bytes: &[u8]) -> Result<(Header, &[u8]), ShardError> {
    let hl = header_len();
    if bytes.len() < hl {
        return Err(ShardError::Truncated { len: bytes.len() });
    }
    let header = check_header(&bytes[..hl])?;
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
    let raw = match Codec::of_code(header.codec) {
        Some(Codec::Raw) => payload.to_vec(),
        Some(Codec::Lz4) => {
            let mut raw = vec![0u8; header.raw_len as usize];
            unpack_lz4(payload, &mut raw)?;
            raw
        }
        _ => {
            decompress(payload, header.raw_len as usize).map_err(|e| ShardError::Decompress(e.to_string()))?
        }
    };
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

/// The most bytes an encoded shard of at most `max_words` words can take: its header and the
/// worst case of any codec for the payload. A peer that sends more is refused before it is
/// buffered.
pub fn max_shard_bytes(max_words: usize) -> u64 {
    let frames = max_words.div_ceil(GROUP_WORDS).max(1);
    header_len() as u64 + max_packed_len(max_words * 8, frames) as u64
}
