//! Shards: what a worker returns for one task attempt, as bytes that cross the network.
//!
//! Layout: a bincode header (fixed-width little-endian integers) followed by the payload as its
//! [`Codec`] packs it (zstd frames unless the sender chose otherwise). The header names the task
//! and attempt and the codec, carries the payload's raw and packed lengths and the CRC-32 of the
//! packed bytes, and has its own CRC-32, so a truncated, corrupted or misrouted shard is
//! rejected before anything is merged.

use crate::checksum::crc32;
use serde::{Deserialize, Serialize};

const MAGIC: [u8; 8] = *b"CFSHARD\0";
/// Version of the shard layout; a reader refuses other versions. (2: the codec byte.)
pub const SHARD_VERSION: u16 = 2;

/// How a shard's payload is packed for the link: what it costs in CPU against what it saves
/// in bytes (measured in docs/distribution.md, "What a byte costs").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Codec {
    /// As it is: a copy, nothing else (links faster than the CPU can compress).
    Raw,
    /// LZ4 blocks: about one ns a byte to pack and a fifth of that to unpack.
    Lz4,
    /// zstd level 1 frames: the fewest bytes, several ns a byte.
    #[default]
    Zstd,
}

impl Codec {
    fn code(self) -> u8 {
        match self {
            Codec::Raw => 0,
            Codec::Lz4 => 1,
            Codec::Zstd => 2,
        }
    }

    fn of_code(code: u8) -> Option<Codec> {
        [Codec::Raw, Codec::Lz4, Codec::Zstd].into_iter().find(|c| c.code() == code)
    }
}

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

/// `input` compressed as one zstd frame (level 1), with this thread's compression context:
/// making a context costs more than compressing a small message.
fn compress(input: &[u8]) -> Vec<u8> {
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    CONTEXT.with(|c| {
        let mut c = c.borrow_mut();
        let context = c.get_or_insert_with(|| zstd::bulk::Compressor::new(1).expect("a zstd context"));
        context.compress(input).expect("zstd compresses any input")
    })
}

/// Bytes before each LZ4 block: its raw and packed lengths (a shard may hold several).
const LZ4_FRAME_HEAD: usize = 8;

/// `input` packed by `codec` as one self-delimiting frame, appended to `out`.
fn pack_into(codec: Codec, input: &[u8], out: &mut Vec<u8>) {
    match codec {
        Codec::Raw => out.extend_from_slice(input),
        Codec::Zstd => out.extend_from_slice(&compress(input)),
        Codec::Lz4 => {
            let at = out.len();
            out.resize(at + LZ4_FRAME_HEAD + lz4_flex::block::get_maximum_output_size(input.len()), 0);
            let n = lz4_flex::block::compress_into(input, &mut out[at + LZ4_FRAME_HEAD..])
                .expect("the buffer holds LZ4's worst case");
            out[at..at + 4].copy_from_slice(&(input.len() as u32).to_le_bytes());
            out[at + 4..at + 8].copy_from_slice(&(n as u32).to_le_bytes());
            out.truncate(at + LZ4_FRAME_HEAD + n);
        }
    }
}

/// Unpacks LZ4 frames of [`pack_into`] into `out`, which they must fill exactly.
fn unpack_lz4(mut packed: &[u8], out: &mut [u8]) -> Result<(), ShardError> {
    let bad = |why: &str| ShardError::Decompress(why.to_string());
    let mut written = 0;
    while !packed.is_empty() {
        if packed.len() < LZ4_FRAME_HEAD {
            return Err(bad("an LZ4 frame cut short"));
        }
        let raw = u32::from_le_bytes(packed[..4].try_into().expect("4 bytes")) as usize;
        let len = u32::from_le_bytes(packed[4..8].try_into().expect("4 bytes")) as usize;
        if len > packed.len() - LZ4_FRAME_HEAD || raw > out.len() - written {
            return Err(bad("an LZ4 frame longer than the shard"));
        }
        let n =
            lz4_flex::block::decompress_into(&packed[LZ4_FRAME_HEAD..][..len], &mut out[written..][..raw])
                .map_err(|e| ShardError::Decompress(e.to_string()))?;
        if n != raw {
            return Err(bad("an LZ4 frame shorter than it says"));
        }
        written += raw;
        packed = &packed[LZ4_FRAME_HEAD + len..];
    }
    if written != out.len() {
        return Err(ShardError::Decompress(format!("{written} bytes, header says {}", out.len())));
    }
    Ok(())
}

thread_local! {
    /// Decompression contexts of this thread, reused (see [`compress`]).
    static DECODERS: std::cell::RefCell<Vec<zstd::stream::raw::Decoder<'static>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// A decompression context, from this thread's spares when it has one.
fn decoder() -> zstd::stream::raw::Decoder<'static> {
    use zstd::stream::raw::Operation;
    let spare = DECODERS.with(|d| d.borrow_mut().pop());
    match spare.map(|mut d| d.reinit().map(|()| d)) {
        Some(Ok(d)) => d,
        _ => zstd::stream::raw::Decoder::new().expect("a zstd decoder context"),
    }
}

fn give_back(decoder: zstd::stream::raw::Decoder<'static>) {
    DECODERS.with(|d| {
        let mut d = d.borrow_mut();
        if d.len() < 4 {
            d.push(decoder);
        }
    });
}

/// `payload` (zstd frames) decompressed, at most `capacity` bytes.
fn decompress(payload: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    CONTEXT.with(|c| {
        let mut c = c.borrow_mut();
        let context = match c.as_mut() {
            Some(context) => context,
            None => c.insert(zstd::bulk::Decompressor::new()?),
        };
        context.decompress(payload, capacity)
    })
}

/// Compresses `payload` into a shard for `key`.
pub fn encode(key: ShardKey, payload: &[u8]) -> Vec<u8> {
    let compressed = compress(payload);
    let header = Header {
        magic: MAGIC,
        version: SHARD_VERSION,
        key,
        codec: Codec::Zstd.code(),
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
        self.words.iter().map(|w| w.count_ones() as u64).sum()
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
    if codec == Codec::Raw {
        let raw_len: u64 = parts.iter().map(|p| p.words.len() as u64 * 8).sum();
        let mut crc = crate::checksum::Crc32::default();
        parts.iter().for_each(|p| crc.update(as_bytes(p.words)));
        let header = Header {
            magic: MAGIC,
            version: SHARD_VERSION,
            key,
            codec: codec.code(),
            raw_len,
            payload_len: raw_len,
            payload_crc: crc.finish(),
        };
        let head = encode_header(&header);
        let mut out = Vec::with_capacity(head.len() + raw_len as usize);
        out.extend_from_slice(&head);
        parts.iter().for_each(|p| out.extend_from_slice(as_bytes(p.words)));
        return out;
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
    // path (measured on `h` with two workers: 15 % of the workers' CPU). The frames are copied
    // once, after the header.
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
    let mut crc = crate::checksum::Crc32::default();
    frames.iter().for_each(|f| crc.update(f));
    let header = Header {
        magic: MAGIC,
        version: SHARD_VERSION,
        key,
        codec: codec.code(),
        raw_len: parts.iter().map(|p| p.words.len() as u64 * 8).sum(),
        payload_len: frames.iter().map(|f| f.len() as u64).sum(),
        payload_crc: crc.finish(),
    };
    let head = encode_header(&header);
    let mut out = Vec::with_capacity(head.len() + header.payload_len as usize);
    out.extend_from_slice(&head);
    frames.iter().for_each(|f| out.extend_from_slice(f));
    out
}

fn as_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: u8 has alignment 1 and every byte of a u64 is initialized.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), words.len() * 8) }
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
    let n = max_words * 8;
    let frames = max_words.div_ceil(GROUP_WORDS).max(1);
    let lz4 = lz4_flex::block::get_maximum_output_size(n) + frames * (LZ4_FRAME_HEAD + 16);
    header_len() as u64 + zstd::zstd_safe::compress_bound(n).max(lz4) as u64
}

/// [`decode_for`] of a payload of at most `max_len` 64-bit words, decompressed straight into the
/// words (no intermediate byte copy: a frontier can be gigabytes).
pub fn decode_words_for(bytes: &[u8], expected: ShardKey, max_len: usize) -> Result<Vec<u64>, ShardError> {
    decode_words_into(bytes, expected, max_len, Vec::new())
}

/// [`decode_words_for`] into `words`, whose memory is reused (a process that decodes shard
/// after shard keeps one buffer's pages instead of faulting in fresh ones each time); its words
/// are overwritten, not zeroed first, so pass it with its old length.
pub fn decode_words_into(
    bytes: &[u8],
    expected: ShardKey,
    max_len: usize,
    words: Vec<u64>,
) -> Result<Vec<u64>, ShardError> {
    let mut decoder = WordsDecoder::new(expected, max_len).with_buffer(words);
    decoder.push(bytes)?;
    decoder.finish()
}

/// Decodes a shard of at most `max_len` 64-bit words as its bytes arrive, straight into the
/// words: a download never holds the compressed shard whole. The header is checked (and the
/// words allocated, as many as it announces) once its bytes are in; the words are handed out only
/// after the payload's length and checksum have been checked at the end.
pub struct WordsDecoder {
    expected: ShardKey,
    max_len: usize,
    head: Vec<u8>,
    header: Option<Header>,
    crc: crate::checksum::Crc32,
    received: u64,
    /// Its context, for a zstd shard (given back to this thread's spares when it is dropped).
    zstd: Option<zstd::stream::raw::Decoder<'static>>,
    /// The packed payload of an LZ4 shard, unpacked at the end (its frames are blocks).
    lz4: Vec<u8>,
    words: Vec<u64>,
    written: usize,
}

impl WordsDecoder {
    pub fn new(expected: ShardKey, max_len: usize) -> Self {
        WordsDecoder {
            expected,
            max_len,
            head: Vec::new(),
            header: None,
            crc: Default::default(),
            received: 0,
            zstd: None,
            lz4: Vec::new(),
            words: Vec::new(),
            written: 0,
        }
    }

    /// Decodes into `words` (its memory reused: see [`Self::push`]) instead of a new buffer.
    pub fn with_buffer(mut self, words: Vec<u64>) -> Self {
        self.words = words;
        self
    }

    /// How many more bytes this shard takes (its header's, then its payload's): a reader of
    /// shards sent one after another feeds each at most this many.
    pub fn wanted(&self) -> u64 {
        match &self.header {
            None => (header_len() - self.head.len()) as u64,
            Some(h) => h.payload_len.saturating_sub(self.received),
        }
    }

    /// Feeds the next bytes of the shard.
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<(), ShardError> {
        use zstd::stream::raw::Operation;
        if self.header.is_none() {
            let hl = header_len();
            let take = (hl - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.head.len() < hl {
                return Ok(());
            }
            let header = check_header(&self.head)?;
            if header.key != self.expected {
                return Err(ShardError::WrongTask { found: header.key, expected: self.expected });
            }
            if header.raw_len > self.max_len as u64 * 8 {
                return Err(ShardError::TooLarge { claimed: header.raw_len, limit: self.max_len as u64 * 8 });
            }
            let payload_limit = max_shard_bytes(self.max_len) - hl as u64;
            if header.payload_len > payload_limit {
                return Err(ShardError::TooLarge { claimed: header.payload_len, limit: payload_limit });
            }
            if header.raw_len % 8 != 0 {
                return Err(ShardError::Decompress(format!("{} bytes are not whole words", header.raw_len)));
            }
            // Every word is overwritten (`finish` checks that all were), so a reused buffer's
            // old words are kept rather than zeroed first; only words it never held are zeroed.
            let n = header.raw_len as usize / 8;
            if self.words.capacity() >= n {
                self.words.truncate(n);
                self.words.resize(n, 0);
            } else {
                self.words = vec![0u64; n];
            }
            if header.codec == Codec::Zstd.code() {
                self.zstd = Some(decoder());
            }
            self.header = Some(header);
        }
        let header = self.header.expect("read above");
        if self.received + bytes.len() as u64 > header.payload_len {
            return Err(ShardError::PayloadLength {
                found: self.received + bytes.len() as u64,
                expected: header.payload_len,
            });
        }
        self.received += bytes.len() as u64;
        self.crc.update(bytes);
        // SAFETY: any byte pattern is a valid u64; the view covers exactly the words' bytes.
        let out = unsafe {
            std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast::<u8>(), self.words.len() * 8)
        };
        if header.codec == Codec::Raw.code() {
            // The payload is the words (its length was checked against theirs above).
            out[self.written..self.written + bytes.len()].copy_from_slice(bytes);
            self.written += bytes.len();
            return Ok(());
        }
        if header.codec == Codec::Lz4.code() {
            self.lz4.extend_from_slice(bytes);
            return Ok(());
        }
        while !bytes.is_empty() {
            let status = self
                .zstd
                .as_mut()
                .expect("a context until dropped")
                .run_on_buffers(bytes, &mut out[self.written..])
                .map_err(|e| ShardError::Decompress(e.to_string()))?;
            self.written += status.bytes_written;
            bytes = &bytes[status.bytes_read..];
            if status.bytes_read == 0 && status.bytes_written == 0 {
                return Err(ShardError::Decompress("payload longer than its words".into()));
            }
        }
        Ok(())
    }

    /// Checks that the whole shard arrived intact and returns the words.
    pub fn finish(mut self) -> Result<Vec<u64>, ShardError> {
        use zstd::stream::raw::Operation;
        let Some(header) = self.header else { return Err(ShardError::Truncated { len: self.head.len() }) };
        if self.received != header.payload_len {
            return Err(ShardError::PayloadLength { found: self.received, expected: header.payload_len });
        }
        let computed = std::mem::take(&mut self.crc).finish();
        if computed != header.payload_crc {
            return Err(ShardError::PayloadChecksum { stored: header.payload_crc, computed });
        }
        // SAFETY: as in `push`.
        let out = unsafe {
            std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast::<u8>(), self.words.len() * 8)
        };
        if header.codec == Codec::Lz4.code() {
            unpack_lz4(&self.lz4, out)?;
            return Ok(std::mem::take(&mut self.words));
        }
        if header.codec == Codec::Raw.code() {
            if self.written != out.len() {
                return Err(ShardError::Decompress(format!(
                    "{} bytes, header says {}",
                    self.written,
                    out.len()
                )));
            }
            return Ok(std::mem::take(&mut self.words));
        }
        let mut tail = zstd::stream::raw::OutBuffer::around(&mut out[self.written..]);
        let zstd = self.zstd.as_mut().expect("a context until dropped");
        let left = zstd.finish(&mut tail, true).map_err(|e| ShardError::Decompress(e.to_string()))?;
        self.written += tail.pos();
        if left != 0 || self.written != self.words.len() * 8 {
            return Err(ShardError::Decompress(format!(
                "{} bytes, header says {}",
                self.written, header.raw_len
            )));
        }
        Ok(std::mem::take(&mut self.words))
    }
}

impl Drop for WordsDecoder {
    fn drop(&mut self) {
        if let Some(d) = self.zstd.take() {
            give_back(d);
        }
    }
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
        assert_eq!(decode_words_for(&shard, KEY, 6000), Ok(words.clone()));
        assert!(matches!(decode_words_for(&shard, KEY, 4999), Err(ShardError::TooLarge { .. })));
        // Into a reused buffer, longer and holding other words, or shorter.
        assert_eq!(decode_words_into(&shard, KEY, 5000, vec![u64::MAX; 9000]), Ok(words.clone()));
        assert_eq!(decode_words_into(&shard, KEY, 5000, vec![1; 10]), Ok(words.clone()));
        let parts = [&words[..10], &[], &words[10..]].map(WordPart::plain);
        assert_eq!(decode_words_for(&encode_word_parts(KEY, &parts), KEY, 5000), Ok(words.clone()));
        // Several frames (groups of 2 Mi words), decoded in one stream and in pieces.
        let big: Vec<u64> = (0..5_000_000u64).map(|i| i * i).collect();
        let halves: Vec<WordPart> = big.chunks(1_500_000).map(WordPart::plain).collect();
        let framed = encode_word_parts(KEY, &halves);
        assert_eq!(decode_words_for(&framed, KEY, big.len()).as_deref(), Ok(&big[..]));
        let mut d = WordsDecoder::new(KEY, big.len());
        for piece in framed.chunks(1 << 20) {
            d.push(piece).unwrap();
        }
        assert_eq!(d.finish().as_deref(), Ok(&big[..]));
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(decode_for(&shard, KEY), Ok(bytes));
        assert!(matches!(decode_words_for(&encode(KEY, b"odd"), KEY, 1), Err(ShardError::Decompress(_))));
        // Fed in pieces of every size, as a download arrives.
        for piece in [1, 7, 64, 1000] {
            let mut d = WordsDecoder::new(KEY, 5000);
            for part in shard.chunks(piece) {
                d.push(part).unwrap();
            }
            assert_eq!(d.finish(), Ok(words.clone()), "pieces of {piece}");
        }
        // A truncated or corrupted stream is refused at the end at the latest.
        let mut d = WordsDecoder::new(KEY, 5000);
        d.push(&shard[..shard.len() - 3]).unwrap();
        assert!(d.finish().is_err());
        for at in [0, 30, shard.len() / 2, shard.len() - 1] {
            let mut bad = shard.clone();
            bad[at] ^= 4;
            let mut d = WordsDecoder::new(KEY, 5000);
            let result = d.push(&bad).and_then(|()| d.finish().map(|_| ()));
            assert!(result.is_err(), "flip at {at} accepted");
        }
    }

    #[test]
    fn every_codec_round_trips_in_pieces_and_refuses_damage() {
        let words: Vec<u64> = (0..300_000u64).map(|i| if i % 5 == 0 { i * 0x9E37 } else { 0 }).collect();
        let parts = [&words[..1000], &words[1000..]].map(WordPart::plain);
        for codec in [Codec::Raw, Codec::Lz4, Codec::Zstd] {
            let shard = encode_word_parts_with(KEY, codec, &parts);
            assert!(shard.len() as u64 <= max_shard_bytes(words.len()), "{codec:?}");
            assert_eq!(decode_words_for(&shard, KEY, words.len()).as_deref(), Ok(&words[..]), "{codec:?}");
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            assert_eq!(decode_for(&shard, KEY), Ok(bytes), "{codec:?}");
            for piece in [1, 999, 1 << 16] {
                let mut d = WordsDecoder::new(KEY, words.len());
                shard.chunks(piece).for_each(|p| d.push(p).unwrap());
                assert_eq!(d.finish().as_deref(), Ok(&words[..]), "{codec:?} in pieces of {piece}");
            }
            for at in [0, 20, shard.len() / 2, shard.len() - 1] {
                let mut bad = shard.clone();
                bad[at] ^= 0x10;
                assert!(decode_words_for(&bad, KEY, words.len()).is_err(), "{codec:?}: flip at {at}");
            }
            assert!(decode_words_for(&shard[..shard.len() - 1], KEY, words.len()).is_err());
        }
        // Raw is the words; LZ4 and zstd are shorter on sparse words.
        let size = |c| encode_word_parts_with(KEY, c, &parts).len();
        assert_eq!(size(Codec::Raw), header_len() + words.len() * 8);
        assert!(size(Codec::Zstd) < size(Codec::Lz4) && size(Codec::Lz4) < size(Codec::Raw) / 3);
        // A codec this build does not know is named.
        let shard = encode_words(KEY, &words[..10]);
        let (header, payload) = checked(&shard).unwrap();
        let mut other = encode_header(&Header { codec: 9, ..header });
        other.extend_from_slice(payload);
        assert_eq!(decode(&other), Err(ShardError::UnknownCodec(9)));
    }

    #[test]
    fn sizes_beyond_the_task_are_refused_before_allocating() {
        // A header claiming 2^40 raw bytes (8 TiB) must be refused from the header alone.
        let shard = encode_words(KEY, &[1, 2, 3]);
        let hl = header_len();
        let (header, payload) = checked(&shard).unwrap();
        let mut forged = encode_header(&Header { raw_len: 1 << 40, ..header });
        forged.extend_from_slice(payload);
        let limit = 1000 * 8;
        assert_eq!(
            decode_words_for(&forged, KEY, 1000),
            Err(ShardError::TooLarge { claimed: 1 << 40, limit })
        );
        // So is a payload longer than zstd's worst case for the most words the task can return.
        let long = encode_header(&Header { payload_len: 1 << 40, ..header });
        assert!(matches!(decode_words_for(&long, KEY, 1000), Err(ShardError::TooLarge { .. })));
        // And a result larger than the task's limit, honestly encoded.
        let big = encode_words(KEY, &vec![7u64; 1001]);
        assert!(matches!(decode_words_for(&big, KEY, 1000), Err(ShardError::TooLarge { .. })));
        assert_eq!(decode_words_for(&big, KEY, 1001), Ok(vec![7u64; 1001]));
        assert!(shard.len() as u64 <= max_shard_bytes(3) && hl < shard.len());
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
