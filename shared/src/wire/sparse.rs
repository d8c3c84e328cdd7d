//! Row sets as they travel between workers (and, for a table build, to the coordinator, and to
//! a worker's disk): one part of the rows ([`PartCut`](crate::bfs::owned::PartCut)) per message,
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

use crate::shard::{self, Codec, RawShard, ShardKey, WordPart};
use crate::wire::Malformed;

/// A part's row set as a message carries it: the payload is
/// - `blocks` words: one bit per row of the part, set when the row holds entries;
/// - `blocks` words: for those rows, set when the row is raw, clear when it is positions;
/// - each such row in order: raw, its words; positions, a word with their number `n`, then as
///   little-endian `u16`, four to a word (the last word padded with zeros), the entries in
///   each segment of 65,536 columns (one count per segment of the row), then the `n` columns
///   in order, each less its segment's first column;
/// - one word: its entries.
pub struct SparseRows {
    words_per_row: usize,
    rows: usize,
    blocks: usize,
    payload: Vec<u64>,
    entries: u64,
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

/// The `u16` view of words (the payload is little-endian words, so this is the wire order).
fn as_u16(words: &[u64]) -> &[u16] {
    // SAFETY: u16 has a smaller alignment than u64 and every bit pattern is a valid u16.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u16>(), words.len() * 4) }
}

fn as_u16_mut(words: &mut [u64]) -> &mut [u16] {
    // SAFETY: as in `as_u16`.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u16>(), words.len() * 4) }
}

#[cfg(not(target_endian = "little"))]
compile_error!("row messages are little-endian words");

impl SparseRows {
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
        if codec == Codec::Raw {
            let head = shard::raw_head_words();
            let mut buffer = shard::spare_words();
            buffer.clear();
            buffer.resize(head, 0);
            let framed = Self::payload(full, words_per_row, keep, false, buffer, head);
            return shard::raw_bytes(key, framed);
        }
        let payload = Self::payload(full, words_per_row, keep, true, Vec::new(), 0);
        shard::encode_word_parts_with(key, codec, &[WordPart::plain(&payload)]).into()
    }

    /// [`Self::encode_rows`] of all rows holding entries, raw, as a shard's two pieces: how a
    /// level is kept on disk, written without copying the rows once more. The payload is
    /// written into `buffer` (its contents dropped), which [`RawShard::into_words`] gives back
    /// for the next level.
    pub fn encode_rows_raw(key: ShardKey, full: &[u64], words_per_row: usize, buffer: Vec<u64>) -> RawShard {
        RawShard::new(key, Self::payload(full, words_per_row, &|_| true, false, buffer, 0))
    }

    /// The payload of the rows of `full` that `keep` accepts, in `buffer` after its first
    /// `base` words (kept; the rest cleared), grown once to its exact size if too small (the
    /// rows are counted first: a growing buffer would copy and fault in its pages several
    /// times over).
    fn payload(
        full: &[u64],
        words_per_row: usize,
        keep: &(dyn Fn(usize) -> bool + Sync),
        compressed: bool,
        buffer: Vec<u64>,
        base: usize,
    ) -> Vec<u64> {
        let w = words_per_row.max(1);
        let rows = full.len() / w;
        let blocks = rows.div_ceil(64);
        let segments = segments(words_per_row);
        // Compressed, rows wider than a segment go as bits, which zstd packs tighter than their
        // positions (`h` on two workers: 69.3 MiB against 117.8).
        let positions_allowed = segments == 1 || !compressed;
        let as_positions =
            |n: usize| positions_allowed && n < SEGMENT && positions_words(n, segments) < words_per_row;
        let counts: Vec<u32> = full
            .chunks(w)
            .enumerate()
            .map(|(i, row)| if keep(i) { crate::ones::ones(row) as u32 } else { 0 })
            .collect();
        let body: usize = counts
            .iter()
            .map(|&n| match n as usize {
                0 => 0,
                n if as_positions(n) => positions_words(n, segments),
                _ => words_per_row,
            })
            .sum();
        let mut payload = buffer;
        payload.truncate(base);
        payload.reserve_exact(2 * blocks + body + COUNTERS);
        payload.resize(base + 2 * blocks, 0);
        let mut entries = 0u64;
        for (i, (row, &n)) in full.chunks(w).zip(&counts).enumerate() {
            let n = n as usize;
            if n == 0 {
                continue;
            }
            entries += n as u64;
            payload[base + i / 64] |= 1 << (i % 64);
            if as_positions(n) {
                let at = payload.len();
                payload.resize(at + positions_words(n, segments), 0);
                payload[at] = n as u64;
                let (counts, out) = as_u16_mut(&mut payload[at + 1..]).split_at_mut(segments);
                let mut k = 0;
                for (j, &word) in row.iter().enumerate() {
                    let mut b = word;
                    counts[j * 64 / SEGMENT] += b.count_ones() as u16;
                    while b != 0 {
                        out[k] = (j * 64 % SEGMENT) as u16 + b.trailing_zeros() as u16;
                        k += 1;
                        b &= b - 1;
                    }
                }
            } else {
                payload[base + blocks + i / 64] |= 1 << (i % 64);
                payload.extend_from_slice(row);
            }
        }
        payload.push(entries);
        payload
    }

    /// Reads a message of [`Self::encode_rows`] for a part of `rows` rows: refused unless it
    /// is whole, for `key`, within the part's size, well formed, and holds the entries it
    /// reports.
    pub fn decode_rows(
        bytes: &[u8],
        key: ShardKey,
        rows: usize,
        words_per_row: usize,
    ) -> Result<Self, Malformed> {
        Self::decode_rows_into(bytes, key, rows, words_per_row, Vec::new())
    }

    /// [`Self::decode_rows`] into `buffer`'s memory (a receiver that reads message after
    /// message keeps one buffer's pages instead of faulting in fresh ones each time; see
    /// [`Self::into_words`]).
    pub fn decode_rows_into(
        bytes: &[u8],
        key: ShardKey,
        rows: usize,
        words_per_row: usize,
        buffer: Vec<u64>,
    ) -> Result<Self, Malformed> {
        let max = Self::max_words(rows, words_per_row);
        let words =
            shard::decode_words_into(bytes, key, max, buffer).map_err(|e| Malformed::new(e.to_string()))?;
        Self::from_payload(words, rows, words_per_row)
    }

    /// Its payload's buffer, for the next message.
    pub fn into_words(self) -> Vec<u64> {
        self.payload
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

    /// Checks a payload for `rows` rows: its row bits, each row's length and columns, and its
    /// entries against the entries it reports.
    fn from_payload(payload: Vec<u64>, rows: usize, words_per_row: usize) -> Result<Self, Malformed> {
        let blocks = rows.div_ceil(64);
        if payload.len() < 2 * blocks + COUNTERS {
            return Err(malformed!("a row set of {} words is shorter than its row bits", payload.len()));
        }
        let tail = rows % 64;
        if tail != 0 && payload[blocks - 1] >> tail != 0 {
            return Err(Malformed::from("a row set marks rows past the end"));
        }
        let (present, raw) = (&payload[..blocks], &payload[blocks..2 * blocks]);
        if present.iter().zip(raw).any(|(p, r)| r & !p != 0) {
            return Err(Malformed::from("a row set says rows it does not hold are raw"));
        }
        let body = &payload[2 * blocks..payload.len() - COUNTERS];
        let columns = words_per_row * 64;
        let segments = segments(words_per_row);
        let mut at = 0usize;
        let mut entries = 0u64;
        for (k, (&p, &r)) in present.iter().zip(raw).enumerate() {
            let mut bits = p;
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let row = k * 64 + bit as usize;
                if r >> bit & 1 == 1 {
                    let words = body
                        .get(at..at + words_per_row)
                        .ok_or_else(|| malformed!("row {row} is cut short"))?;
                    entries += crate::ones::ones(words);
                    at += words_per_row;
                } else {
                    let n = *body.get(at).ok_or_else(|| malformed!("row {row} is cut short"))? as usize;
                    let size = positions_words(n, segments);
                    if n == 0 || n >= SEGMENT || size >= words_per_row {
                        return Err(malformed!("row {row} holds {n} positions, which a row never sends"));
                    }
                    let words =
                        body.get(at + 1..at + size).ok_or_else(|| malformed!("row {row} is cut short"))?;
                    let (counts, lows) = as_u16(words).split_at(segments);
                    if counts.iter().map(|&c| c as usize).sum::<usize>() != n {
                        return Err(malformed!("row {row} counts other than its {n} positions by segment"));
                    }
                    // Only the last segment may be cut short by the row's end.
                    let last = (segments - 1) * SEGMENT;
                    let tail = &lows[n - counts[segments - 1] as usize..n];
                    if tail.iter().any(|&c| last + c as usize >= columns) {
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
        let reported = payload[payload.len() - COUNTERS];
        if reported != entries {
            return Err(malformed!("a row set reports {reported} entries and holds {entries}"));
        }
        Ok(SparseRows { words_per_row, rows, blocks, payload, entries })
    }

    /// ORs the rows into `dest` (the part's rows, `words_per_row` words each): how a message is
    /// merged into a level, and how a kept level is read back into zeroed rows.
    pub fn or_into(&self, dest: &mut [u64]) {
        let w = self.words_per_row;
        let segments = segments(w);
        assert_eq!(dest.len(), self.rows * w, "a part's rows");
        let (blocks, payload) = (self.blocks, &self.payload);
        let body = &payload[2 * blocks..payload.len() - COUNTERS];
        let mut at = 0usize;
        for k in 0..blocks {
            let (mut bits, raw) = (payload[k], payload[blocks + k]);
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let out = &mut dest[(k * 64 + bit as usize) * w..][..w];
                if raw >> bit & 1 == 1 {
                    out.iter_mut().zip(&body[at..at + w]).for_each(|(o, s)| *o |= s);
                    at += w;
                } else {
                    let n = body[at] as usize;
                    let size = positions_words(n, segments);
                    let (counts, mut lows) = as_u16(&body[at + 1..at + size]).split_at(segments);
                    for (segment, &count) in counts.iter().enumerate() {
                        let (these, rest) = lows.split_at(count as usize);
                        let words = &mut out[segment * (SEGMENT / 64)..];
                        for &c in these {
                            words[c as usize / 64] |= 1 << (c % 64);
                        }
                        lows = rest;
                    }
                    at += size;
                }
            }
        }
    }

    /// Per row of the part, whether the set holds entries in it.
    pub fn present(&self) -> Vec<bool> {
        (0..self.rows).map(|i| self.payload[i / 64] >> (i % 64) & 1 == 1).collect()
    }

    /// The rows as whole rows of the part (absent rows zero).
    pub fn to_rows(&self) -> Vec<u64> {
        let mut rows = vec![0u64; self.rows * self.words_per_row];
        self.or_into(&mut rows);
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part of 10 rows of 2 words (100 columns): empty rows, sparse rows (sent as
    /// positions: fewer than a word's worth) and dense ones.
    fn part() -> Vec<u64> {
        (0..20u64)
            .map(|i| match i % 5 {
                0 => 0,
                1 => 1 << (i % 64),
                _ => (i * 0x9e37_79b9_7f4a_7c15) & 0xf_ffff_ffff,
            })
            .collect()
    }

    const KEY: ShardKey = ShardKey { job: 9, task: 2, attempt: 0, level: 5 };

    #[test]
    fn messages_read_back_with_only_the_rows_kept_whatever_the_codec() {
        let full = part();
        for codec in [Codec::Raw, Codec::Lz4, Codec::Zstd] {
            let message = |keep: &(dyn Fn(usize) -> bool + Sync)| {
                let bytes = SparseRows::encode_rows(KEY, &full, 2, keep, codec);
                SparseRows::decode_rows(&bytes, KEY, 10, 2).unwrap().to_rows()
            };
            let (all, even) = (message(&|_| true), message(&|i| i % 2 == 0));
            assert_eq!(all, full, "{codec:?}");
            for r in 0..10 {
                let want: &[u64] = if r % 2 == 0 { &full[r * 2..][..2] } else { &[0, 0] };
                assert_eq!(&even[r * 2..][..2], want, "row {r} ({codec:?})");
            }
        }
    }

    #[test]
    fn sparse_rows_travel_as_positions_and_dense_rows_raw() {
        // 630 words a row (the rows of H): one entry in a row takes 2 words, not 630.
        let w = 630;
        let mut full = vec![0u64; 3 * w];
        full[w + 17] = 1 << 5; // row 1: one entry
        full[2 * w..].iter_mut().for_each(|x| *x = 0x5555_5555_5555_5555); // row 2: dense
        let bytes = SparseRows::encode_rows(KEY, &full, w, &|_| true, Codec::Raw);
        let set = SparseRows::decode_rows(&bytes, KEY, 3, w).unwrap();
        assert_eq!(set.payload.len(), 2 + 2 + w + COUNTERS);
        assert_eq!(set.entries(), 1 + 32 * w as u64);
        assert_eq!(set.to_rows(), full);
        // ORed into rows that hold other entries, it adds its own.
        let mut dest = vec![0u64; 3 * w];
        dest[0] = 3;
        set.or_into(&mut dest);
        assert_eq!((dest[0], dest[w + 17], dest[2 * w]), (3, 1 << 5, 0x5555_5555_5555_5555));
    }

    #[test]
    fn rows_wider_than_a_segment_travel_as_positions() {
        // The rows of H: 15,120 words, 967,680 columns in 15 segments, the last of 50,176.
        let w = 15_120;
        let mut full = vec![0u64; 2 * w];
        for c in [0usize, 65_535, 65_536, 7 * 65_536 + 4_001, 967_679] {
            full[c / 64] |= 1 << (c % 64);
        }
        full[w + 14_000] = 0xff; // row 1: 8 entries in segment 13
        let bytes = SparseRows::encode_rows(KEY, &full, w, &|_| true, Codec::Raw);
        let set = SparseRows::decode_rows(&bytes, KEY, 2, w).unwrap();
        // Row 0: a count word, then 15 counts and 5 columns (5 words); row 1: 1 + 6 words.
        assert_eq!(set.payload.len(), 2 + 6 + 7 + COUNTERS);
        assert_eq!((set.entries(), set.to_rows()), (13, full.clone()));
        // Compressed, the same rows go as bits.
        let bytes = SparseRows::encode_rows(KEY, &full, w, &|_| true, Codec::Zstd);
        let set = SparseRows::decode_rows(&bytes, KEY, 2, w).unwrap();
        assert_eq!(set.payload.len(), 2 + 2 * w + COUNTERS);
        assert_eq!((set.entries(), set.to_rows()), (13, full));
        // A column past the row's end in the last segment is refused.
        let mut payload = vec![1u64, 0, 1, 0, 0, 0, 1 << 32 | 50_176 << 48, 1];
        let forged = |p: &[u64]| {
            let bytes = shard::encode_word_parts_with(KEY, Codec::Raw, &[WordPart::plain(p)]);
            SparseRows::decode_rows(&bytes, KEY, 1, w).map(|s| s.to_rows())
        };
        assert!(forged(&payload).unwrap_err().0.contains("past its end"));
        payload[6] = 1 << 32 | 50_175 << 48;
        assert_eq!(forged(&payload).unwrap()[w - 1], 1 << 63);
    }

    #[test]
    fn damaged_misrouted_oversized_or_malformed_messages_are_refused() {
        let bytes = SparseRows::encode_rows(KEY, &part(), 2, &|_| true, Codec::Zstd);
        let other = ShardKey { level: 6, ..KEY };
        assert!(SparseRows::decode_rows(&bytes, other, 10, 2).is_err(), "another level's message");
        let mut damaged = bytes.to_vec();
        let last = damaged.len() - 3;
        damaged[last] ^= 1;
        assert!(SparseRows::decode_rows(&damaged, KEY, 10, 2).is_err());
        // Read as a part of fewer rows, it holds more than such a part can.
        assert!(SparseRows::decode_rows(&bytes, KEY, 4, 2).is_err());
        // Well-checksummed payloads that lie: entries, lengths, columns, flags.
        // One row of `w` words.
        let forged_in = |payload: &[u64], w: usize| {
            let bytes = shard::encode_word_parts_with(KEY, Codec::Raw, &[WordPart::plain(payload)]);
            SparseRows::decode_rows(&bytes, KEY, 1, w).map(|_| ()).unwrap_err().0
        };
        let forged = |payload: &[u64]| forged_in(payload, 2);
        assert!(forged(&[1, 1, 1, 0, 2]).contains("reports 2 entries"));
        // A positions word: the count of the row's one segment, then the columns.
        let one_at = |c: u64| 1 | c << 16;
        assert!(
            forged_in(&[1, 0, 1, one_at(5), 9, 1], 8).contains("holds 2 words of rows"),
            "a word too many"
        );
        assert!(forged_in(&[1, 0, 1, 2 | 5 << 16, 1], 8).contains("counts other than"));
        assert!(forged(&[1, 1, 1, 1]).contains("cut short"));
        assert!(forged(&[0, 1, 0]).contains("does not hold"));
        assert!(forged(&[2, 2, 0]).contains("past the end"));
        // A positions row in a row of 2 words: never sent so (it would not be shorter).
        assert!(forged(&[1, 0, 1, 3, 1]).contains("never sends"));
        let w = 8; // 512 columns; one position at column 600
        let mut p = vec![1, 0, 1, one_at(600), 1];
        let bytes = shard::encode_word_parts_with(KEY, Codec::Raw, &[WordPart::plain(&p)]);
        let err = SparseRows::decode_rows(&bytes, KEY, 1, w).map(|_| ()).unwrap_err();
        assert!(err.0.contains("past its end"), "{err}");
        p[3] = one_at(500);
        let bytes = shard::encode_word_parts_with(KEY, Codec::Raw, &[WordPart::plain(&p)]);
        assert_eq!(SparseRows::decode_rows(&bytes, KEY, 1, w).unwrap().to_rows()[7], 1 << 52);
    }
}
