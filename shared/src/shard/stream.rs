//! Reading a shard of words as its bytes arrive, straight into the words.

use super::codec::{decoder, give_back, unpack_lz4, Codec};
use super::{check_header, header_len, max_shard_bytes, Header, ShardError, ShardKey};

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

/// The payload of a raw shard for `expected` of at most `max_len` words, checked as
/// [`decode_words_into`] checks it (header, key, lengths, checksum) and left where it lies in
/// `bytes`, at any alignment: a receiver reads the words there instead of copying them out.
/// `Ok(None)` for a packed shard, which [`decode_words_into`] unpacks.
pub fn raw_words_for(bytes: &[u8], expected: ShardKey, max_len: usize) -> Result<Option<&[u8]>, ShardError> {
    let hl = header_len();
    if bytes.len() < hl {
        return Err(ShardError::Truncated { len: bytes.len() });
    }
    let header = check_header(&bytes[..hl])?;
    if header.codec != Codec::Raw.code() {
        return Ok(None);
    }
    if header.key != expected {
        return Err(ShardError::WrongTask { found: header.key, expected });
    }
    if header.raw_len > max_len as u64 * 8 {
        return Err(ShardError::TooLarge { claimed: header.raw_len, limit: max_len as u64 * 8 });
    }
    let payload = &bytes[hl..];
    if payload.len() as u64 != header.payload_len {
        return Err(ShardError::PayloadLength { found: payload.len() as u64, expected: header.payload_len });
    }
    if header.raw_len != header.payload_len || header.raw_len % 8 != 0 {
        return Err(ShardError::Decompress(format!(
            "a raw payload of {} bytes, header says {} in whole words",
            header.payload_len, header.raw_len
        )));
    }
    let computed = crate::checksum::crc32(payload);
    if computed != header.payload_crc {
        return Err(ShardError::PayloadChecksum { stored: header.payload_crc, computed });
    }
    Ok(Some(payload))
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
