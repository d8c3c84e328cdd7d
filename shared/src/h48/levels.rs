//! The level store: one BFS level (the entries at one exact depth) of a row space too large for
//! dense bit arrays, kept as a compact set of columns per row.
//!
//! A row's set is either Elias-Fano coded (each column split into `l` low bits, stored
//! verbatim, and a high part, stored in unary as a bitmap with one 1 per column: about
//! 2 + log2(U / n) bits per column for n columns out of U) or, where that is smaller, a plain
//! bitmap of the U columns. Both decode in column order; dense rows exist only inside a task.
//! A level is saved to and loaded from a file with a versioned header and a CRC-32.

use crate::checksum::Crc32;
use std::io::{Read, Write};
use std::path::Path;

/// A sorted set of distinct columns below a universe.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColumnSet {
    len: u64,
    universe: u32,
    /// Elias-Fano: low bits per column (u8::MAX marks a plain bitmap).
    low_bits: u8,
    /// Elias-Fano: the low parts (len x low_bits bits), then the high bitmap from word
    /// `high_at`; bitmap: the U bits.
    words: Vec<u64>,
    high_at: usize,
}

const BITMAP: u8 = u8::MAX;

impl ColumnSet {
    /// The empty set over `universe` columns.
    pub fn empty(universe: u32) -> Self {
        ColumnSet { universe, ..Default::default() }
    }

    /// Codes sorted, distinct columns below `universe`.
    pub fn from_sorted(columns: &[u32], universe: u32) -> Self {
        let n = columns.len() as u64;
        debug_assert!(columns.windows(2).all(|w| w[0] < w[1]));
        debug_assert!(columns.last().is_none_or(|&c| c < universe));
        if n == 0 {
            return Self::empty(universe);
        }
        let l = Self::low_bits_for(n, universe);
        if Self::ef_words(n, universe, l) > (universe as usize).div_ceil(64) {
            let mut words = vec![0u64; (universe as usize).div_ceil(64)];
            for &c in columns {
                words[c as usize / 64] |= 1 << (c % 64);
            }
            return ColumnSet { len: n, universe, low_bits: BITMAP, words, high_at: 0 };
        }
        let low_words = (n as usize * l as usize).div_ceil(64);
        let mut words = vec![0u64; Self::ef_words(n, universe, l)];
        let mask = (1u64 << l) - 1;
        for (i, &c) in columns.iter().enumerate() {
            if l > 0 {
                let (bit, low) = (i * l as usize, c as u64 & mask);
                words[bit / 64] |= low << (bit % 64);
                if bit % 64 + l as usize > 64 {
                    words[bit / 64 + 1] |= low >> (64 - bit % 64);
                }
            }
            let high = (c >> l) as usize + i;
            words[low_words + high / 64] |= 1 << (high % 64);
        }
        ColumnSet { len: n, universe, low_bits: l, words, high_at: low_words }
    }

    /// The set bits of a dense row of `universe` bits.
    pub fn from_bitmap(bits: &[u64], universe: u32) -> Self {
        let n = crate::ones::ones(bits);
        if n == 0 {
            return Self::empty(universe);
        }
        let l = Self::low_bits_for(n, universe);
        if Self::ef_words(n, universe, l) > (universe as usize).div_ceil(64) {
            let mut words = bits[..(universe as usize).div_ceil(64)].to_vec();
            if !universe.is_multiple_of(64) {
                *words.last_mut().expect("a word") &= (1u64 << (universe % 64)) - 1;
            }
            return ColumnSet { len: n, universe, low_bits: BITMAP, words, high_at: 0 };
        }
        let mut columns = Vec::with_capacity(n as usize);
        crate::space::for_each_bit(bits, |c| columns.push(c));
        Self::from_sorted(&columns, universe)
    }

    fn low_bits_for(n: u64, universe: u32) -> u8 {
        let ratio = (universe as u64 / n).max(1);
        (63 - ratio.leading_zeros()) as u8
    }

    fn ef_words(n: u64, universe: u32, l: u8) -> usize {
        let low = (n as usize * l as usize).div_ceil(64);
        let high = (n as usize + (universe as usize >> l) + 1).div_ceil(64);
        low + high
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn universe(&self) -> u32 {
        self.universe
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// Calls `f` with every column, in increasing order (the low bits read as
    /// [`ColumnSet::for_each_block`] reads them: one unaligned read, no branch).
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(u32)) {
        if self.len == 0 {
            return;
        }
        if self.low_bits == BITMAP {
            crate::space::for_each_bit(&self.words, f);
            return;
        }
        let l = self.low_bits as usize;
        let low_of = self.low_reader();
        let high = &self.words[self.high_at..];
        // As in `for_each_block`: `before` is the current word's first place less i (wrapping).
        let (mut bit, mut before) = (0usize, 0usize);
        for &word in high {
            let mut bits = word;
            while bits != 0 {
                let hi = before.wrapping_add(bits.trailing_zeros() as usize);
                bits &= bits - 1;
                before = before.wrapping_sub(1);
                f(((hi as u64) << l | low_of(bit)) as u32);
                bit += l;
            }
            before = before.wrapping_add(64);
        }
    }

    /// Reads the low bits of the column whose low part starts at stream bit `bit` (an
    /// Elias-Fano set): eight bytes read from its first (a little-endian word's bits are the
    /// stream's), or two words shifted. Either read may run past the low part; the high part
    /// follows it, so the bytes exist.
    #[inline]
    fn low_reader(&self) -> impl Fn(usize) -> u64 + '_ {
        let mask = (1u64 << self.low_bits) - 1;
        debug_assert!(self.low_bits != BITMAP && self.high_at < self.words.len());
        // SAFETY: the words' memory read as bytes (any bytes are valid u8s).
        let bytes: &[u8] =
            unsafe { std::slice::from_raw_parts(self.words.as_ptr() as *const u8, self.words.len() * 8) };
        move |bit: usize| -> u64 {
            if cfg!(target_endian = "little") {
                let k = bit / 8;
                debug_assert!(k + 8 <= bytes.len());
                // SAFETY: column i's low bits start at bit i l < len l <= 64 high_at, so these
                // eight bytes end at most eight bytes into the high part, which has a word.
                let eight = unsafe { bytes.as_ptr().add(k).cast::<[u8; 8]>().read_unaligned() };
                u64::from_le_bytes(eight) >> (bit % 8) & mask
            } else {
                let (k, s) = (bit / 64, bit % 64);
                let next = self.words.get(k + 1).copied().unwrap_or(0);
                ((self.words[k] as u128 | (next as u128) << 64) >> s) as u64 & mask
            }
        }
    }

    /// Calls `f` with every block of 2,048 columns (`c / 2048`) that holds a column: its number,
    /// its bitmap and its number of columns, in increasing order. The Elias-Fano decoding reads
    /// each column's low bits with one unaligned read, without a branch, and sets its bit in
    /// the block's bitmap: the whole-block kernels' input ([`crate::coord::flips`]).
    pub fn for_each_block(&self, mut f: impl FnMut(u32, &[u64; 32], u32)) {
        if self.len == 0 {
            return;
        }
        let mut block = [0u64; 32];
        if self.low_bits == BITMAP {
            for (b, words) in self.words.chunks(32).enumerate() {
                let n: u32 = words.iter().map(|w| w.count_ones()).sum();
                if n > 0 {
                    block = [0; 32];
                    block[..words.len()].copy_from_slice(words);
                    f(b as u32, &block, n);
                }
            }
            return;
        }
        let l = self.low_bits as usize;
        let low_of = self.low_reader();
        let high = &self.words[self.high_at..];
        // Column i's high part is its 1's place in the high bitmap less i: `before` is the
        // current word's first place less i (wrapping: it goes below 0 when a word holds many).
        let (mut bit, mut before, mut current) = (0usize, 0usize, u32::MAX);
        let ones = |block: &[u64; 32]| block.iter().map(|w| w.count_ones()).sum::<u32>();
        // The bits of the current word so far (columns come in order, so a word's come
        // together), stored whole each time: no read of the word just written.
        let (mut word_at, mut acc) = (u64::MAX, 0u64);
        for &word in high {
            let mut bits = word;
            while bits != 0 {
                let hi = before.wrapping_add(bits.trailing_zeros() as usize);
                bits &= bits - 1;
                before = before.wrapping_sub(1);
                let c = (hi as u64) << l | low_of(bit);
                bit += l;
                let b = (c >> 11) as u32;
                if b != current {
                    if current != u32::MAX {
                        f(current, &block, ones(&block));
                        block = [0; 32];
                    }
                    current = b;
                }
                acc = if c >> 6 == word_at { acc } else { 0 } | 1 << (c & 63);
                word_at = c >> 6;
                block[word_at as usize & 31] = acc;
            }
            before = before.wrapping_add(64);
        }
        if current != u32::MAX {
            f(current, &block, ones(&block));
        }
    }

    /// The columns as a vector (tests and small rows).
    pub fn to_vec(&self) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.len as usize);
        self.for_each(|c| v.push(c));
        v
    }

    /// Encodes sets one after the other (as a level's rows are stored).
    pub fn write_rows<'a>(
        rows: impl IntoIterator<Item = &'a ColumnSet>,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        rows.into_iter().try_for_each(|r| r.write(out))
    }

    /// Decodes `n` sets written by [`ColumnSet::write_rows`], checking their sizes.
    pub fn read_rows(input: &mut impl Read, n: usize, universe: u32) -> std::io::Result<Vec<ColumnSet>> {
        (0..n).map(|_| ColumnSet::read(input, universe)).collect()
    }

    fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(&self.len.to_le_bytes())?;
        out.write_all(&[self.low_bits])?;
        out.write_all(&(self.high_at as u64).to_le_bytes())?;
        out.write_all(&(self.words.len() as u64).to_le_bytes())?;
        for w in &self.words {
            out.write_all(&w.to_le_bytes())?;
        }
        Ok(())
    }

    fn read(input: &mut impl Read, universe: u32) -> std::io::Result<Self> {
        let mut b8 = [0u8; 8];
        let mut u64_of = |input: &mut dyn Read| -> std::io::Result<u64> {
            input.read_exact(&mut b8)?;
            Ok(u64::from_le_bytes(b8))
        };
        let len = u64_of(input)?;
        let mut l = [0u8];
        input.read_exact(&mut l)?;
        let high_at = u64_of(input)? as usize;
        let count = u64_of(input)? as usize;
        let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        let expect = if len == 0 {
            0
        } else if l[0] == BITMAP {
            (universe as usize).div_ceil(64)
        } else {
            Self::ef_words(len, universe, l[0])
        };
        // An Elias-Fano row's high part starts right after its low parts (the decoding reads
        // up to eight bytes past a low part, into the high part's words).
        let ef_shape_ok = len == 0
            || l[0] == BITMAP
            || (l[0] <= 32 && high_at == (len as usize * l[0] as usize).div_ceil(64));
        if count != expect || high_at > count || len > universe as u64 || !ef_shape_ok {
            return Err(bad("a level row's sizes do not agree"));
        }
        // Read in pieces, so that a damaged size cannot ask for a huge allocation at once.
        let mut bytes = Vec::new();
        let mut left = count * 8;
        let mut buf = [0u8; 1 << 16];
        while left > 0 {
            let n = left.min(buf.len());
            input.read_exact(&mut buf[..n])?;
            bytes.extend_from_slice(&buf[..n]);
            left -= n;
        }
        let words = bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8"))).collect();
        Ok(ColumnSet { len, universe, low_bits: l[0], words, high_at })
    }
}

/// One level: a column set per row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    pub depth: u8,
    pub rows: Vec<ColumnSet>,
}

impl AsRef<Level> for Level {
    fn as_ref(&self) -> &Level {
        self
    }
}

const LEVEL_MAGIC: [u8; 8] = *b"CFLEVEL\0";
/// Version of the level file layout.
const LEVEL_VERSION: u32 = 1;

impl Level {
    pub fn entries(&self) -> u64 {
        self.rows.iter().map(|r| r.len()).sum()
    }

    pub fn bytes(&self) -> u64 {
        self.rows.iter().map(|r| r.bytes() as u64).sum()
    }

    /// Writes the level to `path` (through a temporary name), in the layout of
    /// [`Level::write_to`].
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let temp = crate::container::temp_path(path);
        let file = std::fs::File::create(&temp)?;
        let mut out = std::io::BufWriter::with_capacity(1 << 22, &file);
        self.write_to(&mut out)?;
        out.flush()?;
        drop(out);
        crate::container::commit(&file, &temp, path)
    }

    /// Reads a level written by [`Level::save`], checking its header and CRC-32.
    pub fn load(path: &Path) -> std::io::Result<Level> {
        let file = std::fs::File::open(path)?;
        Self::read_from(&mut std::io::BufReader::with_capacity(1 << 22, file))
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
    }

    /// The level's bytes: magic, version, depth, rows, universe, the rows, and a CRC-32 of
    /// everything before it.
    fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        let mut out = CrcWriter { inner: out, crc: Crc32::default() };
        out.write_all(&LEVEL_MAGIC)?;
        out.write_all(&LEVEL_VERSION.to_le_bytes())?;
        out.write_all(&[self.depth])?;
        out.write_all(&(self.rows.len() as u32).to_le_bytes())?;
        let universe = self.rows.first().map_or(0, |r| r.universe);
        out.write_all(&universe.to_le_bytes())?;
        for r in &self.rows {
            r.write(&mut out)?;
        }
        let crc = out.crc.finish();
        out.inner.write_all(&crc.to_le_bytes())
    }

    /// Reads the bytes of [`Level::write_to`], checking the header and the CRC-32.
    fn read_from(input: &mut impl Read) -> std::io::Result<Level> {
        let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        let mut input = CrcReader { inner: input, crc: Crc32::default() };
        let mut head = [0u8; 8 + 4 + 1 + 4 + 4];
        input.read_exact(&mut head)?;
        if head[..8] != LEVEL_MAGIC {
            return Err(bad("not a level file"));
        }
        let version = u32::from_le_bytes(head[8..12].try_into().expect("4"));
        if version != LEVEL_VERSION {
            return Err(bad(&format!("level layout {version}, expected {LEVEL_VERSION}")));
        }
        let depth = head[12];
        let rows = u32::from_le_bytes(head[13..17].try_into().expect("4"));
        let universe = u32::from_le_bytes(head[17..21].try_into().expect("4"));
        let rows = ColumnSet::read_rows(&mut input, rows as usize, universe)?;
        let computed = input.crc.finish();
        let mut stored = [0u8; 4];
        input.inner.read_exact(&mut stored)?;
        if u32::from_le_bytes(stored) != computed {
            return Err(bad("checksum mismatch, the level is corrupt"));
        }
        Ok(Level { depth, rows })
    }
}

struct CrcWriter<W: Write> {
    inner: W,
    crc: Crc32,
}

impl<W: Write> Write for CrcWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

struct CrcReader<R: Read> {
    inner: R,
    crc: Crc32,
}

impl<R: Read> Read for CrcReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::SplitMix64;

    fn random_set(rng: &mut SplitMix64, universe: u32, density: f64) -> Vec<u32> {
        let threshold = (density * u32::MAX as f64) as u64;
        (0..universe).filter(|_| rng.below(u32::MAX as u64) < threshold).collect()
    }

    #[test]
    fn sparse_and_dense_rows_round_trip() {
        let mut rng = SplitMix64::new(77);
        for universe in [1u32, 63, 64, 65, 1000, 70_000, 1 << 20] {
            for density in [0.0, 1e-4, 0.01, 0.1, 0.3, 0.6, 1.0] {
                let cols = random_set(&mut rng, universe, density);
                let set = ColumnSet::from_sorted(&cols, universe);
                assert_eq!(set.to_vec(), cols, "U {universe} density {density}");
                assert_eq!(set.len(), cols.len() as u64);
                // Block by block: the same columns, each block once, counted.
                let mut by_block = Vec::new();
                let mut last = None;
                set.for_each_block(|b, block, n| {
                    assert!(last < Some(b) && n == block.iter().map(|w| w.count_ones()).sum::<u32>());
                    last = Some(b);
                    crate::space::for_each_bit(block, |o| by_block.push(b * 2048 + o));
                });
                assert_eq!(by_block, cols, "U {universe} density {density}, by block");
                let mut bits = vec![0u64; (universe as usize).div_ceil(64)];
                for &c in &cols {
                    bits[c as usize / 64] |= 1 << (c % 64);
                }
                assert_eq!(ColumnSet::from_bitmap(&bits, universe), set);
                // Never more than the bitmap, and close to 2 + log2(U/n) bits where sparse.
                assert!(set.bytes() <= (universe as usize).div_ceil(64) * 8);
                if cols.len() >= 1000 && density <= 0.01 {
                    let bits_per = set.bytes() as f64 * 8.0 / cols.len() as f64;
                    assert!(bits_per < 3.5 + (universe as f64 / cols.len() as f64).log2(), "{bits_per}");
                }
            }
        }
        // Edge columns.
        let cols = [0, 1, 70_962_000, 70_963_199];
        let set = ColumnSet::from_sorted(&cols, 70_963_200);
        assert_eq!(set.to_vec(), cols);
        let mut by_block = Vec::new();
        set.for_each_block(|b, block, _| crate::space::for_each_bit(block, |o| by_block.push(b * 2048 + o)));
        assert_eq!(by_block, cols);
    }

    #[test]
    fn levels_save_and_load_and_refuse_damage() {
        let mut rng = SplitMix64::new(78);
        let rows = (0..5)
            .map(|k| ColumnSet::from_sorted(&random_set(&mut rng, 5000, k as f64 * 0.2), 5000))
            .collect();
        let level = Level { depth: 7, rows };
        let dir = std::env::temp_dir().join(format!("cf-level-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("level-07.bin");
        level.save(&path).unwrap();
        assert_eq!(Level::load(&path).unwrap(), level);
        let mut bytes = std::fs::read(&path).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 4;
        std::fs::write(&path, &bytes).unwrap();
        assert!(Level::load(&path).is_err());
        std::fs::write(&path, &bytes[..n - 10]).unwrap();
        assert!(Level::load(&path).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
