//! Row sets as they travel between workers (and, for a table build, to the coordinator, and to
//! a worker's disk): one part of the rows ([`PartCut`](crate::bfs::cut::PartCut)) per message,
//! each row that holds entries written the cheaper of two ways, checked against the entries the
//! message says it holds.
//!
//! A row is sent *raw* (its words) or as its *positions* (the columns of its entries, two bytes
//! each, grouped by segments of 65,536 columns), whichever is shorter: a row with fewer than
//! about one entry in 16 columns travels as positions, however wide (`h`'s rows hold 967,680
//! columns, 15 segments) in a message that goes uncompressed. In one that zstd or LZ4 packs,
//! rows wider than a segment go raw: zstd packs sparse bits tighter than their positions.
//! Early and late levels, and the messages of many workers (each sender holds a small share
//! of a part's images), are sparse; the middle levels are dense. Either way the cost of a
//! message follows its entries or its rows, never the whole part, and reading one is a walk
//! over its words that ORs them straight into the part (no decoded copy).

use crate::shard::{self, as_bytes, as_bytes_mut, Codec, ShardKey, WordPart};
use crate::wire::Malformed;
use columns::{gather_columns, GATHER_ROOM};

mod columns;

/// A part's row set as a message carries it: the payload is
/// - `blocks` words: one bit per row of the part, set when the row holds entries;
/// - `blocks` words: for those rows, set when the row is raw, clear when it is positions;
/// - each such row in order: raw, its words; positions, a word with their number `n`, then as
///   little-endian `u16`, four to a word (the last word padded with zeros), the entries in
///   each segment of 65,536 columns (one count per segment of the row), then the `n` columns
///   in order, each less its segment's first column;
/// - one word: its entries.
pub struct SparseRows<'a> {
    words_per_row: usize,
    rows: usize,
    blocks: usize,
    payload: Payload<'a>,
    entries: u64,
}

/// A message's payload: decoded into a buffer, or a raw message's bytes read where they arrived
/// (the buffer then unused, kept for the next message).
enum Payload<'a> {
    Decoded(Vec<u64>),
    InPlace(&'a [u8], Vec<u64>),
}

impl Payload<'_> {
    fn words(&self) -> LeWords<'_> {
        match self {
            Payload::Decoded(words) => LeWords(as_bytes(words)),
            Payload::InPlace(bytes, _) => LeWords(bytes),
        }
    }
}

/// Little-endian words at any alignment (a raw payload lies anywhere in gRPC's buffer).
#[derive(Clone, Copy)]
struct LeWords<'a>(&'a [u8]);

impl<'a> LeWords<'a> {
    fn len(self) -> usize {
        self.0.len() / 8
    }

    fn word(self, i: usize) -> u64 {
        u64::from_le_bytes(self.0[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
    }

    fn get(self, i: usize) -> Option<u64> {
        (i < self.len()).then(|| self.word(i))
    }

    fn range(self, words: std::ops::Range<usize>) -> Option<LeWords<'a>> {
        self.0.get(words.start * 8..words.end * 8).map(LeWords)
    }

    /// The `i`-th little-endian `u16`.
    fn half(self, i: usize) -> u16 {
        u16::from_le_bytes([self.0[2 * i], self.0[2 * i + 1]])
    }

    /// The set bits, counted by the processor's fastest path over the aligned middle.
    fn ones(self) -> u64 {
        // SAFETY: every bit pattern is a valid u64.
        let (head, middle, tail) = unsafe { self.0.align_to::<u64>() };
        let edges: u32 = head.iter().chain(tail).map(|b| b.count_ones()).sum();
        crate::ones::ones(middle) + edges as u64
    }

    /// ORs the words into `out` (as long as they are).
    fn or_into(self, out: &mut [u64]) {
        for (o, b) in out.iter_mut().zip(self.0.chunks_exact(8)) {
            *o |= u64::from_le_bytes(b.try_into().expect("8 bytes"));
        }
    }
}

/// Words after the rows: the entries.
const COUNTERS: usize = 1;

/// Columns in a segment of a positions row: a column within it fits in 16 bits.
const SEGMENT: usize = 1 << 16;

/// Segments of a row of `words_per_row` words.
fn segments(words_per_row: usize) -> usize {
    (words_per_row * 64).div_ceil(SEGMENT)
}

/// Words a positions row of `n` entries takes in rows of `segments` segments.
fn positions_words(n: usize, segments: usize) -> usize {
    1 + (segments + n).div_ceil(4)
}

#[cfg(not(target_endian = "little"))]
compile_error!("row messages are little-endian words");

/// A message's rows counted before it is written (so that its buffer is sized once: a growing
/// buffer copies and faults in its pages several times over): each row's entries and whether
/// it goes raw or as positions.
struct RowsLayout<'f> {
    rows: Rows<'f>,
    words_per_row: usize,
    /// Entries of each row of the part (0: not sent).
    counts: Vec<u32>,
    segments: usize,
    positions_allowed: bool,
    /// Bytes of the payload.
    bytes: usize,
}

/// The rows a layout codes: read where they lie (a kept level), or a buffer whose coded rows
/// are cleared as they are coded (a message's rows, in a buffer its sender reuses zeroed:
/// clearing each row while the coding has it in the cache saves a pass over the buffer).
enum Rows<'f> {
    Read(&'f [u64]),
    Cleared(&'f mut [u64]),
}

impl Rows<'_> {
    fn words(&self) -> &[u64] {
        match self {
            Rows::Read(words) => words,
            Rows::Cleared(words) => words,
        }
    }
}

impl<'f> RowsLayout<'f> {
    /// The rows of `rows` that hold entries and that `keep` accepts; `compressed`: the message
    /// will be packed, so rows wider than a segment go as bits, which zstd packs tighter than
    /// their positions (`h` on two workers: 69.3 MiB against 117.8).
    fn new(
        rows: Rows<'f>,
        words_per_row: usize,
        keep: &(dyn Fn(usize) -> bool + Sync),
        compressed: bool,
    ) -> Self {
        let w = words_per_row.max(1);
        let counts: Vec<u32> = rows
            .words()
            .chunks(w)
            .enumerate()
            .map(|(i, row)| if keep(i) { crate::ones::ones(row) as u32 } else { 0 })
            .collect();
        Self::counted(rows, words_per_row, counts, compressed)
    }

    /// The layout of the rows of `rows` whose entries `counts` gives (0: not sent).
    fn counted(rows: Rows<'f>, words_per_row: usize, counts: Vec<u32>, compressed: bool) -> Self {
        let segments = segments(words_per_row);
        let mut layout = RowsLayout {
            rows,
            words_per_row,
            counts,
            segments,
            positions_allowed: segments == 1 || !compressed,
            bytes: 0,
        };
        let body: usize = layout.counts.iter().map(|&n| layout.row_words(n as usize)).sum();
        layout.bytes = (2 * layout.blocks() + body + COUNTERS) * 8;
        layout
    }

    fn blocks(&self) -> usize {
        self.counts.len().div_ceil(64)
    }

    fn as_positions(&self, n: usize) -> bool {
        self.positions_allowed && n < SEGMENT && positions_words(n, self.segments) < self.words_per_row
    }

    /// Words a row of `n` entries takes in the payload.
    fn row_words(&self, n: usize) -> usize {
        match n {
            0 => 0,
            n if self.as_positions(n) => positions_words(n, self.segments),
            _ => self.words_per_row,
        }
    }

    /// Writes the payload (see [`SparseRows`]) into `out`, exactly [`Self::bytes`] long, at
    /// any alignment; every byte is written. Rows to be cleared are zero afterwards where
    /// they were coded.
    fn write(&mut self, out: &mut [u8]) {
        assert_eq!(out.len(), self.bytes, "a payload's bytes");
        let (w, blocks, segments) = (self.words_per_row.max(1), self.blocks(), self.segments);
        // The two row bitmaps, set in place: bit i of little-endian words is bit i % 8 of
        // byte i / 8.
        let (present, rest) = out.split_at_mut(blocks * 8);
        let (raw, out) = rest.split_at_mut(blocks * 8);
        present.fill(0);
        raw.fill(0);
        let mut at = 0;
        let mut entries = 0u64;
        // A segment's columns, gathered with room for the writes past the last one; made at
        // the first row that goes as positions (a message of raw rows needs none).
        let mut gathered = Vec::new();
        for i in 0..self.counts.len() {
            let n = self.counts[i] as usize;
            if n == 0 {
                continue;
            }
            let span = i * w..((i + 1) * w).min(self.rows.words().len());
            let row = &self.rows.words()[span.clone()];
            entries += n as u64;
            present[i / 8] |= 1 << (i % 8);
            if self.as_positions(n) {
                let size = positions_words(n, segments) * 8;
                let (count, halves) = out[at..at + size].split_at_mut(8);
                count.copy_from_slice(&(n as u64).to_le_bytes());
                // Each segment's count (the columns it wrote), then the columns; the last
                // word's padding is zeros.
                let (counts, columns) = halves.split_at_mut(2 * segments);
                if gathered.is_empty() {
                    gathered.resize((w * 64).min(SEGMENT) + GATHER_ROOM, 0u16);
                }
                let mut k = 0;
                // Dense: about one entry in two words or more (the faster way to gather them).
                for (tally, words) in counts.chunks_exact_mut(2).zip(row.chunks(SEGMENT / 64)) {
                    let written = gather_columns(words, &mut gathered, 2 * n >= w);
                    for (to, c) in columns[2 * k..2 * (k + written)].chunks_exact_mut(2).zip(&gathered) {
                        to.copy_from_slice(&c.to_le_bytes());
                    }
                    k += written;
                    tally.copy_from_slice(&(written as u16).to_le_bytes());
                }
                columns[2 * k..].fill(0);
                at += size;
            } else {
                raw[i / 8] |= 1 << (i % 8);
                out[at..at + w * 8].copy_from_slice(as_bytes(row));
                at += w * 8;
            }
            if let Rows::Cleared(full) = &mut self.rows {
                full[span].fill(0);
            }
        }
        out[at..].copy_from_slice(&entries.to_le_bytes());
    }
}

/// A part's level counted for keeping (see [`SparseRows::kept_level`]).
pub struct KeptLevel<'f> {
    key: ShardKey,
    layout: RowsLayout<'f>,
}

impl KeptLevel<'_> {
    /// Bytes of the kept shard.
    pub fn len(&self) -> usize {
        shard::raw_header_len() + self.layout.bytes
    }

    /// Writes the shard into `out`, exactly [`Self::len`] long, at any alignment.
    pub fn write(&mut self, out: &mut [u8]) {
        let (header, payload) = out.split_at_mut(shard::raw_header_len());
        self.layout.write(payload);
        shard::raw_header_into(self.key, payload, header);
    }
}

impl<'a> SparseRows<'a> {
    /// A message of rows: the rows of `full` (one part's rows of `words_per_row` words) that
    /// hold entries and that `keep` (given the row's index in the part) accepts, each raw or as
    /// positions (see the module's comment for which), packed by `codec`, with their entry
    /// count, so that the reader checks the rows against it (see [`Self::decode_rows`]). Raw,
    /// the payload is written behind room for the shard's header and never copied again.
    pub fn encode_rows(
        key: ShardKey,
        full: &[u64],
        words_per_row: usize,
        keep: &(dyn Fn(usize) -> bool + Sync),
        codec: Codec,
    ) -> bytes::Bytes {
        Self::encode(key, Rows::Read(full), words_per_row, keep, codec)
    }

    /// [`Self::encode_rows`], leaving zero every row it codes: how a sender gives back the
    /// buffer it made a message in, clean, without a pass of its own over the rows. Rows that
    /// `keep` refuses are left as they are.
    pub fn encode_rows_clearing(
        key: ShardKey,
        full: &mut [u64],
        words_per_row: usize,
        keep: &(dyn Fn(usize) -> bool + Sync),
        codec: Codec,
    ) -> bytes::Bytes {
        Self::encode(key, Rows::Cleared(full), words_per_row, keep, codec)
    }

    fn encode(
        key: ShardKey,
        rows: Rows,
        words_per_row: usize,
        keep: &(dyn Fn(usize) -> bool + Sync),
        codec: Codec,
    ) -> bytes::Bytes {
        let raw = codec == Codec::Raw;
        let mut layout = RowsLayout::new(rows, words_per_row, keep, !raw);
        let (mut buffer, head) =
            if raw { (shard::spare_words(), shard::raw_head_words()) } else { (Vec::new(), 0) };
        // Every byte of the payload is written: a reused buffer is not cleared first.
        let len = head + layout.bytes / 8;
        if buffer.len() >= len {
            buffer.truncate(len);
        } else {
            buffer.resize(len, 0);
        }
        layout.write(&mut as_bytes_mut(&mut buffer)[head * 8..]);
        if raw {
            return shard::raw_bytes(key, buffer);
        }
        shard::encode_word_parts_with(key, codec, &[WordPart::plain(&buffer)]).into()
    }

    /// A part's level as it is kept ([`Self::encode_rows`] of all rows holding entries, raw,
    /// as a whole shard), whose rows' entries `counts` gives, one per row (as the level's start
    /// or finish counted them, each row in the cache, so that keeping it takes no pass of its
    /// own to count them): [`KeptLevel::write`] writes it straight into the buffer a store
    /// writes from.
    pub fn kept_level(key: ShardKey, full: &[u64], words_per_row: usize, counts: Vec<u32>) -> KeptLevel<'_> {
        assert_eq!(counts.len() * words_per_row.max(1), full.len(), "a count for every row");
        debug_assert!(
            full.chunks(words_per_row.max(1))
                .zip(&counts)
                .all(|(row, &n)| crate::ones::ones(row) == n as u64),
            "a row's entries as counted"
        );
        KeptLevel { key, layout: RowsLayout::counted(Rows::Read(full), words_per_row, counts, false) }
    }

    /// Reads a message of [`Self::encode_rows`] for a part of `rows` rows: refused unless it
    /// is whole, for `key`, within the part's size, well formed, and holds the entries it
    /// reports.
    pub fn decode_rows(
        bytes: &'a [u8],
        key: ShardKey,
        rows: usize,
        words_per_row: usize,
    ) -> Result<Self, Malformed> {
        Self::decode_rows_into(bytes, key, rows, words_per_row, Vec::new())
    }

    /// [`Self::decode_rows`] into `buffer`'s memory (a receiver that reads message after
    /// message keeps one buffer's pages instead of faulting in fresh ones each time; see
    /// [`Self::into_words`]). A raw message is not decoded at all: it is read where it lies in
    /// `bytes`, whose words it checks and ORs at any alignment.
    pub fn decode_rows_into(
        bytes: &'a [u8],
        key: ShardKey,
        rows: usize,
        words_per_row: usize,
        buffer: Vec<u64>,
    ) -> Result<Self, Malformed> {
        let max = Self::max_words(rows, words_per_row);
        let bad = |e: shard::ShardError| Malformed::new(e.to_string());
        let payload = match shard::raw_words_for(bytes, key, max).map_err(bad)? {
            Some(raw) => Payload::InPlace(raw, buffer),
            None => Payload::Decoded(shard::decode_words_into(bytes, key, max, buffer).map_err(bad)?),
        };
        Self::from_payload(payload, rows, words_per_row)
    }

    /// Its payload's buffer (or the one it did not need), for the next message.
    pub fn into_words(self) -> Vec<u64> {
        match self.payload {
            Payload::Decoded(words) | Payload::InPlace(_, words) => words,
        }
    }

    /// Entries it holds.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// The most words a message of a part of `rows` rows can hold.
    pub fn max_words(rows: usize, words_per_row: usize) -> usize {
        2 * rows.div_ceil(64) + rows * words_per_row + COUNTERS
    }

    /// The most bytes a message of a part of `rows` rows can take on the wire.
    pub fn max_message_bytes(rows: usize, words_per_row: usize) -> u64 {
        shard::max_shard_bytes(Self::max_words(rows, words_per_row))
    }

    /// A payload for `rows` rows, checked (see [`Self::checked_entries`]).
    fn from_payload(payload: Payload<'a>, rows: usize, words_per_row: usize) -> Result<Self, Malformed> {
        let entries = Self::checked_entries(payload.words(), rows, words_per_row)?;
        Ok(SparseRows { words_per_row, rows, blocks: rows.div_ceil(64), payload, entries })
    }

    /// Checks a payload for `rows` rows: its row bits, each row's length and columns, and its
    /// entries against the entries it reports, which it returns.
    fn checked_entries(payload: LeWords, rows: usize, words_per_row: usize) -> Result<u64, Malformed> {
        let blocks = rows.div_ceil(64);
        if payload.len() < 2 * blocks + COUNTERS {
            return Err(malformed!("a row set of {} words is shorter than its row bits", payload.len()));
        }
        let tail = rows % 64;
        if tail != 0 && payload.word(blocks - 1) >> tail != 0 {
            return Err(Malformed::from("a row set marks rows past the end"));
        }
        if (0..blocks).any(|k| payload.word(blocks + k) & !payload.word(k) != 0) {
            return Err(Malformed::from("a row set says rows it does not hold are raw"));
        }
        let body = payload.range(2 * blocks..payload.len() - COUNTERS).expect("checked above");
        let columns = words_per_row * 64;
        let segments = segments(words_per_row);
        let mut at = 0usize;
        let mut entries = 0u64;
        for k in 0..blocks {
            let (mut bits, r) = (payload.word(k), payload.word(blocks + k));
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let row = k * 64 + bit as usize;
                if r >> bit & 1 == 1 {
                    let words = body
                        .range(at..at + words_per_row)
                        .ok_or_else(|| malformed!("row {row} is cut short"))?;
                    entries += words.ones();
                    at += words_per_row;
                } else {
                    let n = body.get(at).ok_or_else(|| malformed!("row {row} is cut short"))? as usize;
                    let size = positions_words(n, segments);
                    if n == 0 || n >= SEGMENT || size >= words_per_row {
                        return Err(malformed!("row {row} holds {n} positions, which a row never sends"));
                    }
                    // The segments' counts, then the columns: `segments + n` halves.
                    let halves =
                        body.range(at + 1..at + size).ok_or_else(|| malformed!("row {row} is cut short"))?;
                    if (0..segments).map(|s| halves.half(s) as usize).sum::<usize>() != n {
                        return Err(malformed!("row {row} counts other than its {n} positions by segment"));
                    }
                    // Only the last segment may be cut short by the row's end.
                    let last = (segments - 1) * SEGMENT;
                    let in_last = segments + n - halves.half(segments - 1) as usize..segments + n;
                    if in_last.into_iter().any(|i| last + halves.half(i) as usize >= columns) {
                        return Err(malformed!("row {row} names a column past its end"));
                    }
                    entries += n as u64;
                    at += size;
                }
            }
        }
        if at != body.len() {
            return Err(malformed!("a row set of {} words holds {at} words of rows", body.len()));
        }
        let reported = payload.word(payload.len() - COUNTERS);
        if reported != entries {
            return Err(malformed!("a row set reports {reported} entries and holds {entries}"));
        }
        Ok(entries)
    }

    /// ORs the rows into `dest` (the part's rows, `words_per_row` words each): how a message is
    /// merged into a level, and how a kept level is read back into zeroed rows.
    pub fn or_into(&self, dest: &mut [u64]) {
        let w = self.words_per_row;
        let segments = segments(w);
        assert_eq!(dest.len(), self.rows * w, "a part's rows");
        let (blocks, payload) = (self.blocks, self.payload.words());
        let body = payload.range(2 * blocks..payload.len() - COUNTERS).expect("a checked payload");
        let mut at = 0usize;
        for k in 0..blocks {
            let (mut bits, raw) = (payload.word(k), payload.word(blocks + k));
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let out = &mut dest[(k * 64 + bit as usize) * w..][..w];
                if raw >> bit & 1 == 1 {
                    body.range(at..at + w).expect("a checked row").or_into(out);
                    at += w;
                } else {
                    let n = body.word(at) as usize;
                    let size = positions_words(n, segments);
                    let halves = body.range(at + 1..at + size).expect("a checked row");
                    let mut next = segments;
                    for segment in 0..segments {
                        let count = halves.half(segment) as usize;
                        let words = &mut out[segment * (SEGMENT / 64)..];
                        for i in next..next + count {
                            let c = halves.half(i);
                            words[c as usize / 64] |= 1 << (c % 64);
                        }
                        next += count;
                    }
                    at += size;
                }
            }
        }
    }

    /// Per row of the part, whether the set holds entries in it.
    pub fn present(&self) -> Vec<bool> {
        let payload = self.payload.words();
        (0..self.rows).map(|i| payload.word(i / 64) >> (i % 64) & 1 == 1).collect()
    }

    /// The rows as whole rows of the part (absent rows zero).
    pub fn to_rows(&self) -> Vec<u64> {
        let mut rows = vec![0u64; self.rows * self.words_per_row];
        self.or_into(&mut rows);
        rows
    }
}

#[cfg(test)]
mod tests;
