//! A sparse frontier kept as column lists: each row's entries as 16-bit columns, rows one after
//! another. A search in memory pushes from it instead of from a third bit array, so that array
//! is never written (the kernel zeroes every fresh page on its first write: docs/kernels.md),
//! and a push reads two bytes an entry instead of a whole row per (row, move).

use super::task::PushSource;
use crate::coord::ColumnMapper;
use crate::ones::ones;
use crate::space::set_bit;
use rayon::prelude::*;

/// Rows per unit of the parallel passes.
const ROWS_PER_UNIT: usize = 4096;

/// The entries of a bit array (rows of `words_per_row` words) as column lists.
pub struct ColumnLists {
    /// Row `r`'s columns are `columns[starts[r]..starts[r + 1]]`, increasing.
    starts: Vec<u64>,
    columns: Vec<u16>,
    words_per_row: usize,
}

impl ColumnLists {
    /// Whether a space of `columns` columns can keep a frontier of `entries` entries as lists,
    /// and whether it pays: the lists must number their columns in 16 bits and take at most a
    /// quarter of a bit array of `array_bytes`.
    pub fn fit(columns: u32, entries: u64, array_bytes: u64) -> bool {
        columns <= 1 << 16 && entries.saturating_mul(2) <= array_bytes / 4
    }

    /// The lists of the rows in `words`.
    pub fn of(words: &[u64], words_per_row: usize) -> ColumnLists {
        let counts: Vec<u64> = words.par_chunks(words_per_row).map(ones).collect();
        let mut starts = Vec::with_capacity(counts.len() + 1);
        starts.push(0u64);
        for c in &counts {
            starts.push(starts.last().expect("a first start") + c);
        }
        let mut columns = vec![0u16; *starts.last().expect("a last start") as usize];
        // Each unit of rows writes its own slice of the columns.
        let rows = counts.len();
        let mut rest = &mut columns[..];
        let slices: Vec<&mut [u16]> = (0..rows.div_ceil(ROWS_PER_UNIT))
            .map(|k| {
                let (begin, end) = (starts[k * ROWS_PER_UNIT], starts[((k + 1) * ROWS_PER_UNIT).min(rows)]);
                let (head, tail) = std::mem::take(&mut rest).split_at_mut((end - begin) as usize);
                rest = tail;
                head
            })
            .collect();
        words.par_chunks(words_per_row * ROWS_PER_UNIT).zip(slices).for_each(|(rows, out)| {
            let mut at = 0;
            for (w, &word) in rows.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    out[at] = ((w % words_per_row) * 64) as u16 + bits.trailing_zeros() as u16;
                    at += 1;
                    bits &= bits - 1;
                }
            }
        });
        ColumnLists { starts, columns, words_per_row }
    }

    /// Row `r`'s columns.
    #[inline]
    pub fn row(&self, r: u32) -> &[u16] {
        let r = r as usize;
        &self.columns[self.starts[r] as usize..self.starts[r + 1] as usize]
    }
}

impl PushSource for ColumnLists {
    #[inline]
    fn holds(&self, r: u32) -> bool {
        self.starts[r as usize + 1] > self.starts[r as usize]
    }

    /// Entry by entry, or, for a row holding at least one column in 64, through the map's own
    /// kernel on the row's bits made again (which may move whole groups).
    fn or_images_of<M: ColumnMapper>(&self, r: u32, map: &M, out: &mut [u64]) {
        let columns = self.row(r);
        if columns.len() < self.words_per_row {
            for &c in columns {
                set_bit(out, map.apply(c as u32));
            }
            return;
        }
        // The row's bits made again in a buffer kept per thread: no allocation per row.
        thread_local! {
            static BITS: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        BITS.with_borrow_mut(|bits| {
            bits.clear();
            bits.resize(self.words_per_row, 0);
            columns.iter().for_each(|&c| set_bit(bits, c as u32));
            map.or_images(bits, out);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfs::task::FullRows;

    /// A map that shifts every column by one place (mod the row), so the images are easy to
    /// predict and differ from the sources.
    struct Shift(u32);

    impl ColumnMapper for Shift {
        fn apply(&self, column: u32) -> u32 {
            (column + 1) % self.0
        }
    }

    #[test]
    fn lists_hold_the_rows_and_push_as_the_bits_do() {
        let words_per_row = 9;
        let rows = 3 * ROWS_PER_UNIT + 17;
        let mut seed = 5u64;
        let words: Vec<u64> = (0..rows * words_per_row)
            .map(|i| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // Empty rows, sparse rows and rows of at least a column in 64.
                match (i / words_per_row) % 3 {
                    0 => 0,
                    1 => seed & seed >> 17 & seed >> 31 & seed >> 45,
                    _ => seed,
                }
            })
            .collect();
        let lists = ColumnLists::of(&words, words_per_row);
        let full = FullRows::new(&words, words_per_row);
        let map = Shift(words_per_row as u32 * 64);
        for r in 0..rows as u32 {
            let row = &words[r as usize * words_per_row..][..words_per_row];
            let mut again = vec![0u64; words_per_row];
            lists.row(r).iter().for_each(|&c| set_bit(&mut again, c as u32));
            assert_eq!(again, row, "row {r}");
            assert_eq!(lists.holds(r), full.holds(r));
            let (mut a, mut b) = (vec![0u64; words_per_row], vec![0u64; words_per_row]);
            lists.or_images_of(r, &map, &mut a);
            full.or_images_of(r, &map, &mut b);
            assert_eq!(a, b, "images of row {r}");
        }
        assert!(ColumnLists::fit(13_824, 100, 800));
        assert!(!ColumnLists::fit(13_824, 101, 800));
        assert!(!ColumnLists::fit(1 << 17, 1, 800));
    }
}
