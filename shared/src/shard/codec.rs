//! How a shard's payload is packed: raw, LZ4 blocks or zstd frames, each frame
//! self-delimiting so that a shard may hold several; zstd contexts kept per thread (making one
//! costs more than packing a small message).

use super::ShardError;
use serde::{Deserialize, Serialize};

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
    pub(super) fn code(self) -> u8 {
        match self {
            Codec::Raw => 0,
            Codec::Lz4 => 1,
            Codec::Zstd => 2,
        }
    }

    pub(super) fn of_code(code: u8) -> Option<Codec> {
        [Codec::Raw, Codec::Lz4, Codec::Zstd].into_iter().find(|c| c.code() == code)
    }
}

/// `input` compressed as one zstd frame (level 1), with this thread's compression context:
/// making a context costs more than compressing a small message.
pub(super) fn compress(input: &[u8]) -> Vec<u8> {
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

/// The most bytes `n` raw bytes in `frames` frames can take packed by any codec.
pub(super) fn max_packed_len(n: usize, frames: usize) -> usize {
    let lz4 = lz4_flex::block::get_maximum_output_size(n) + frames * (LZ4_FRAME_HEAD + 16);
    zstd::zstd_safe::compress_bound(n).max(lz4)
}

/// `input` packed by `codec` as one self-delimiting frame, appended to `out`.
pub(super) fn pack_into(codec: Codec, input: &[u8], out: &mut Vec<u8>) {
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
pub(super) fn unpack_lz4(mut packed: &[u8], out: &mut [u8]) -> Result<(), ShardError> {
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
pub(super) fn decoder() -> zstd::stream::raw::Decoder<'static> {
    use zstd::stream::raw::Operation;
    let spare = DECODERS.with(|d| d.borrow_mut().pop());
    match spare.map(|mut d| d.reinit().map(|()| d)) {
        Some(Ok(d)) => d,
        _ => zstd::stream::raw::Decoder::new().expect("a zstd decoder context"),
    }
}

pub(super) fn give_back(decoder: zstd::stream::raw::Decoder<'static>) {
    DECODERS.with(|d| {
        let mut d = d.borrow_mut();
        if d.len() < 4 {
            d.push(decoder);
        }
    });
}

/// `payload` (zstd frames) decompressed, at most `capacity` bytes.
pub(super) fn decompress(payload: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
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
